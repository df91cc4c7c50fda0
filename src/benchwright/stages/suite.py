"""The suite workflow's two ends: expand a spec into one run state per matrix cell and repeat, and
merge the cells' run records into the suite's record afterwards (the SummarizeSuite handler then runs
the finish stage on it: one verdict, one report and one message per suite run).

Each cell gets its own run id (``<suite run id>-<n>``): cells run in parallel under the Map, so they
must not share resource names or read-modify-write one record. SummarizeSuite gathers them into one
RunRecord under the suite run id, the one history and reports see.
"""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime
from typing import Any

from benchwright.errors import SpecError
from benchwright.outcome import FAILED, INVALID, SUCCEEDED, judge_status
from benchwright.providers.base import ResultStore
from benchwright.runs import CostEstimate, RunRecord, RunWarning, SharedData, combined_cost, new_run_id
from benchwright.sharing import Item, TargetGroup, plan, without_load
from benchwright.spec import BenchmarkSpec, cell_seconds, expand_matrix, parse_spec, spec_dict
from benchwright.stages.state import FinishState, RunState

POLL_BUDGET = 14  # 17 transitions on the happy path + 14 polls x 3 = 59
MIN_POLL_S = 15
MAX_CELLS = 64  # the cells travel in the state (256 KiB) and share one 25,000-event history
MAX_STATE_BYTES = 200_000


def poll_seconds_for(spec: Any, polls: int = POLL_BUDGET) -> int:
    """A poll interval that keeps a cell within ``polls`` Wait/Check/Choice rounds (3 transitions each),
    so one execution stays under ~60 state transitions whatever the target's provisioning time."""
    return max(MIN_POLL_S, math.ceil(cell_seconds(spec) / polls))


def cell_run_id(run_id: str, index: int) -> str:
    return f"{run_id}-{index:03d}"


def _group(
    group: TargetGroup, run_id: str, index: dict[tuple[str, int], int], poll: float, name: str, fixed: bool
) -> dict[str, Any]:
    """One target group as the suite ASL's RunGroups Map iterates it: ``target``, the run state that
    provisions and tears down (the run id of its first cell, so the janitor's sweep of the suite run
    finds it), and ``cells``, each with the load switched off when another cell of its dataset
    loads first and with what it shares (``shared``). The target polls at ``poll``; each cell at its
    own interval (:func:`poll_seconds_for` its spec), so a matrix whose cells run for minutes and for
    hours keeps every cell within the poll budget; ``fixed``: the caller's ``poll`` everywhere."""
    from benchwright.forecast.credits import item_forecasts

    first = group.items[0]
    forecasts = item_forecasts(group)  # made before anything is created; the judge holds it to account

    def state(item: Item, spec: BenchmarkSpec, shared: SharedData | None, cells: int = 1) -> dict[str, Any]:
        own = poll if fixed or shared is None else float(poll_seconds_for(item.cell.spec))
        return RunState(
            run_id=cell_run_id(run_id, index[(item.cell.cell_id, item.repeat)]),
            spec_name=name,
            cell_id=item.cell.cell_id,
            repeat=item.repeat,
            parameters=item.cell.parameters,
            spec=spec,
            poll_seconds=own,
            suite_run_id=run_id,  # the suite's FinishRun (after SummarizeSuite) finishes the run
            shared=shared.model_dump(mode="json") if shared else None,
            target_cells=cells,
            credits_forecast=forecasts.get(item.label) if shared is not None else None,
        ).model_dump(mode="json")

    cells: list[dict[str, Any]] = []
    for dataset in group.datasets:
        for n, item in enumerate(dataset.items):
            spec = item.cell.spec
            loads = dataset.loads and n == 0
            shared = SharedData(
                target_group=group.name,
                provisioned_by=first.label,
                dataset=dataset.name if dataset.loads else None,
                loaded_by=dataset.items[0].label if dataset.loads else None,
                loaded_here=loads,
                runs_before=n if dataset.loads else 0,
            )
            cells.append(state(item, spec if loads or not dataset.loads else without_load(spec), shared))
    # the target's expires-at covers every cell of its group (providers/aws/common.target_ttl_hours)
    target = state(first, first.cell.spec, None, cells=len(group.items))
    return {"name": group.name, "target": target, "cells": cells}


def expand(event: dict[str, Any]) -> dict[str, Any]:
    """:func:`expanded`, refused when the state is over the workflow's budget (``MAX_STATE_BYTES``)."""
    result = expanded(event)
    size = len(json.dumps(result))
    if size > MAX_STATE_BYTES:
        raise SpecError(
            "matrix", f"the expanded cells take {size} bytes, over the {MAX_STATE_BYTES} state budget"
        )
    return result


def expanded(event: dict[str, Any]) -> dict[str, Any]:
    """``{"spec": {...}, "run_id"?, "poll_seconds"?}`` -> the same plus ``groups``: per target group
    (benchwright.sharing) the run state that provisions its target and its cells' run states.

    The suite ASL wraps the execution input as ``{"request": ..., "execution_name": $$.Execution.Name}``:
    an execution started without a run id (the nightly schedule's) takes its execution name as run
    id, so GET /runs/{id}, status and cancel (which look executions up by name) find it."""
    execution_name = None
    if "request" in event and "spec" not in event:
        execution_name = event.get("execution_name")
        event = event["request"] if isinstance(event["request"], dict) else {}
    if "spec" not in event:
        raise SpecError("spec", "the suite input needs the benchmark spec under 'spec'")
    spec = parse_spec(event["spec"])  # validate at the edge: nothing is created for a bad spec
    from benchwright.forecast.advice import check_credits

    check_credits(spec)  # validity.credits: refuse and a bucket predicted to drain
    run_id = str(event.get("run_id") or execution_name or new_run_id())
    fixed = "poll_seconds" in event
    poll = float(event["poll_seconds"]) if fixed else poll_seconds_for(spec)
    cells = [(c, r) for c in expand_matrix(spec) for r in range(spec.repeats)]
    if len(cells) > MAX_CELLS:
        raise SpecError("matrix", f"{len(cells)} cells x repeats is more than {MAX_CELLS}; split the spec")
    index = {(c.cell_id, r): i for i, (c, r) in enumerate(cells)}
    groups = [_group(group, run_id, index, poll, spec.name, fixed) for group in plan(cells)]
    # "suite_spec", not "spec": an output with run_id and spec reads as a cell's run state (api.backend)
    result = {
        "run_id": run_id,
        "spec_name": spec.name,
        "suite_spec": spec_dict(spec),
        "groups": groups,
    }
    return result


def cell_results(event: dict[str, Any]) -> list[dict[str, Any]]:
    """The cells' outcomes from RunGroups: each group's ``cell_results``, or, for a group whose target
    was never ready, each of its cells failed with the group's error."""
    results: list[dict[str, Any]] = list(event.get("cell_results") or [])
    for group in event.get("group_results") or []:
        if group.get("cell_results") is not None:
            results += group["cell_results"]
            continue
        error = str((group.get("caught") or {}).get("Error") or "target not provisioned")
        results += [{"run_id": r, "status": "failed", "error": error} for r in group.get("failed") or []]
    return results


def suite_state(event: dict[str, Any]) -> FinishState:
    """SummarizeSuite's input as the finish stage's state: the suite run and the spec ExpandMatrix
    validated (``$.suite_spec``, its ``spec_dict``), typed once here."""
    return FinishState.model_validate(
        {
            "run_id": str(event["run_id"]),
            "spec_name": str(event.get("spec_name") or "suite"),
            "spec": event.get("spec"),
            "status": "running",
        }
    )


def merged_warnings(warnings: list[RunWarning], cell_record: RunRecord) -> list[RunWarning]:
    """The suite record's warnings with a cell record's (a refused sink write), each once, the cell's
    run id in front; a cell's warning that has gone (the write succeeded later) is dropped."""
    prefix = f"{cell_record.run_id}: "
    kept = [w for w in warnings if not w.message.startswith(prefix)]
    return kept + [w.model_copy(update={"message": prefix + w.message}) for w in cell_record.warnings]


def summarize(event: dict[str, Any], state: FinishState, store: ResultStore) -> dict[str, Any]:
    """Merge the cells' records (RunGroups' results in ``event``) into the suite run's record;
    returns a small summary (no documents)."""
    run_id = state.run_id
    results = cell_results(event)
    record: RunRecord | None = store.get_run(run_id)
    if record is None:
        spec = state.spec
        record = RunRecord(
            run_id=run_id,
            spec_name=state.spec_name,
            spec=spec_dict(spec) if spec is not None else {},
            started_at=datetime.now(UTC),
            tags=dict(spec.tags) if spec is not None else {},
        )
    errors: list[str] = []
    costs: list[CostEstimate] = []
    for i, item in enumerate(results):
        cell_record = store.get_run(str(item.get("run_id") or cell_run_id(run_id, i)))
        if cell_record is not None:
            record.started_at = min(record.started_at, cell_record.started_at)
            record.cells.extend(
                c
                for c in cell_record.cells
                if (c.cell_id, c.repeat) not in {(x.cell_id, x.repeat) for x in record.cells}
            )
            if cell_record.cost is not None:
                costs.append(cell_record.cost)
            record.warnings = merged_warnings(record.warnings, cell_record)
        if item.get("status") not in (SUCCEEDED, INVALID):
            errors.append(f"{item.get('run_id')}: {item.get('status')}")
    record.cost = combined_cost(costs) or record.cost
    failed = len(errors)
    # One cell failed is a failed run, as locally (the others' results stay in the record). An
    # invalid cell finished: the suite's FinishRun judges the merged cells (benchwright.outcome).
    record.status = FAILED if failed else judge_status(SUCCEEDED, record)  # type: ignore[assignment]
    record.error = (
        f"{failed} cell(s) failed (of {len(results)}): {'; '.join(errors)}"[:2000] if failed else None
    )
    record.ended_at = datetime.now(UTC)
    store.save_run(record)
    return {
        "error": record.error,
        "run_id": run_id,
        "cells": len(results),
        "failed": failed,
        "status": record.status,
        "cell_results": [{"run_id": r.get("run_id"), "status": r.get("status")} for r in results],
    }
