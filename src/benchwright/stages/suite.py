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
from benchwright.providers.base import ResultStore
from benchwright.runs import CostEstimate, RunRecord, combined_cost, new_run_id
from benchwright.spec import cell_seconds, expand_matrix, parse_spec
from benchwright.stages import RunState

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


def expand(event: dict[str, Any]) -> dict[str, Any]:
    """``{"spec": {...}, "run_id"?, "poll_seconds"?}`` -> the same plus ``cells`` (RunState dicts).

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
    run_id = str(event.get("run_id") or execution_name or new_run_id())
    poll = float(event["poll_seconds"]) if "poll_seconds" in event else poll_seconds_for(spec)
    cells = [(c, r) for c in expand_matrix(spec) for r in range(spec.repeats)]
    if len(cells) > MAX_CELLS:
        raise SpecError("matrix", f"{len(cells)} cells x repeats is more than {MAX_CELLS}; split the spec")
    states = [
        RunState(
            run_id=cell_run_id(run_id, i),
            spec_name=spec.name,
            cell_id=cell.cell_id,
            repeat=repeat,
            parameters=cell.parameters,
            spec=cell.spec.model_dump(mode="json"),
            poll_seconds=poll,
            suite_run_id=run_id,  # the suite's FinishRun (after SummarizeSuite) finishes the run
        ).model_dump(mode="json")
        for i, (cell, repeat) in enumerate(cells)
    ]
    # "suite_spec", not "spec": an output with run_id and spec reads as a cell's run state (api.backend)
    result = {
        "run_id": run_id,
        "spec_name": spec.name,
        "suite_spec": spec.model_dump(mode="json"),
        "cells": states,
    }
    size = len(json.dumps(result))
    if size > MAX_STATE_BYTES:
        raise SpecError(
            "matrix", f"the expanded cells take {size} bytes, over the {MAX_STATE_BYTES} state budget"
        )
    return result


def summarize(event: dict[str, Any], store: ResultStore) -> dict[str, Any]:
    """Merge the cells' records into the suite's; returns a small summary (no documents)."""
    run_id = str(event["run_id"])
    results = list(event.get("cell_results") or [])
    record: RunRecord | None = store.get_run(run_id)
    spec_name = str(event.get("spec_name") or "suite")
    if record is None:
        record = RunRecord(
            run_id=run_id,
            spec_name=spec_name,
            spec=dict(event.get("spec") or {}),
            started_at=datetime.now(UTC),
            tags=dict((event.get("spec") or {}).get("tags") or {}),
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
        if item.get("status") != "succeeded":
            errors.append(f"{item.get('run_id')}: {item.get('status')}")
    record.cost = combined_cost(costs) or record.cost
    failed = len(errors)
    record.status = "succeeded" if not failed else ("failed" if failed == len(results) else "succeeded")
    record.error = "; ".join(errors)[:2000] or None
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
