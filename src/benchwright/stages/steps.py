"""The stage functions, in workflow order. Each takes the run state and the providers, does one job,
and returns the next state. Large payloads (result documents, metric series, the cell result) are
written through ``providers.artifacts`` and only their pointers go into the state.
"""

from __future__ import annotations

import contextlib
import json
import time
from datetime import timedelta
from typing import Any

from benchwright.errors import ProvisioningFailed, RunnerFailed, TargetNotReady, TeardownFailed
from benchwright.providers.base import MetricsWindow, Providers, Target
from benchwright.results import MetricSeries, ResultDocument
from benchwright.runs import combined_cost
from benchwright.spec import cell_seconds, check_workload, spec_dict
from benchwright.stages.context import plan_context
from benchwright.stages.plan import build_plan, fanout_start_at
from benchwright.stages.schedule import close_pending_events, issue_due_events
from benchwright.stages.state import RunState, utcnow


def _target(state: RunState, providers: Providers) -> Target:
    return providers.target(state.spec.target, state.run_id, state.target)


def _cell_key(state: RunState, providers: Providers) -> str:
    """Where a cell's artifacts go: the cell id (built from matrix values) made one safe component.
    A store shared by runs (S3) gets the run id in front, so a retried or overlapping execution never
    writes over another run's cell; a per-run store (the local out directory) does not need it."""
    from benchwright.specguard import path_component

    key = f"{path_component(state.cell_id)}/repeat-{state.repeat}"
    if getattr(providers.artifacts, "per_run", False):
        return key
    return f"runs/{path_component(state.run_id)}/cells/{key}"


# ---------------------------------------------------------------- stages
def validate_spec(state: RunState, providers: Providers) -> RunState:
    """The workload checks of the cell's concrete spec at the workflow's edge (nothing created yet);
    its model was validated when the state was read (``RunState.spec``)."""
    check_workload(state.spec)
    if state.shared is None and state.credits_forecast is None:  # one cell: no ExpandMatrix made it
        from benchwright.forecast.credits import single_cell_forecast

        return state.advance(
            "validate_spec", status="running", credits_forecast=single_cell_forecast(state.spec)
        )
    return state.advance("validate_spec", status="running")


def provision_target(state: RunState, providers: Providers) -> RunState:
    """Start creating the target; the handle goes into the state at once so teardown can find it."""
    target = providers.target(state.spec.target, state.run_id, None)
    try:
        handle = target.create()
    except BaseException as exc:  # incl. Ctrl-C mid-create: the handle is not in the state yet, delete here
        with contextlib.suppress(Exception):
            target.delete()
        if isinstance(exc, (ProvisioningFailed, KeyboardInterrupt)) or not isinstance(exc, Exception):
            raise
        raise ProvisioningFailed(f"{target.kind} target: {exc}") from exc
    if state.spec.operations:  # teardown deletes what they make by name, on every path
        handle = {**handle, "operations": " ".join(str(o) for o in state.spec.operations)}
    timeout = state.spec.target.ready_timeout()  # the kind's, or a local spec's own
    return state.advance(
        "provision_target",
        target=handle,
        target_status="creating",
        ready_deadline=utcnow() + timedelta(seconds=timeout),
    )


def check_target(state: RunState, providers: Providers) -> RunState:
    """Poll once. Failed or past the deadline raises; the caller loops while "creating"."""
    target = _target(state, providers)
    status = target.status()
    if status == "failed" or status == "deleted":
        reason = getattr(target, "failure_reason", lambda: f"target is {status}")()
        raise ProvisioningFailed(reason)
    if status != "ready" and state.ready_deadline and utcnow() > state.ready_deadline:
        raise TargetNotReady(f"target did not accept connections before {state.ready_deadline:%H:%M:%S} UTC")
    return state.advance("check_target", target=dict(target.handle), target_status=status)


def launch_runner(state: RunState, providers: Providers) -> RunState:
    """Start the metrics sampler and the runner(s); the password travels only in the credentials."""
    spec = state.spec
    target = _target(state, providers)
    connection = target.connection_properties()
    credentials = target.credentials()
    providers.metrics.start(target)
    handles = []
    start_at = fanout_start_at(spec)  # one instant for all N runners (None for a single runner)
    context = plan_context(spec, target.fingerprint_facts())  # the results' fingerprint, target side
    for index in range(spec.runner.count):
        plan = build_plan(
            spec,
            state.run_id,
            state.cell_id,
            connection,
            runner_index=index,
            repeat=state.repeat,
            start_at=start_at,
            context=context,
        )
        handles.append(providers.launcher.launch(plan, credentials, target))
    budget = cell_seconds(spec) * 3 + 600 + (max(0.0, start_at - time.time()) if start_at else 0.0)
    return state.advance(
        "launch_runner",
        runners=handles,
        runner_status="running",
        runner_deadline=utcnow() + timedelta(seconds=budget),
    )


def check_runner(state: RunState, providers: Providers) -> RunState:
    """Poll once; issue the spec's events that are due (stages/schedule.py); when every runner
    has finished, record result pointers and the measured window."""
    statuses = [providers.launcher.status(h) for h in state.runners]
    running = any(s in ("starting", "running") for s in statuses)
    if running and state.runner_deadline and utcnow() > state.runner_deadline:
        raise RunnerFailed(f"runner did not finish before {state.runner_deadline:%H:%M:%S} UTC")
    state = issue_due_events(state, providers, running)
    if running:
        return state.advance("check_runner", runner_status="running")
    finished = record_results(state, providers)
    failed = [
        providers.launcher.failure(h) or "failed"
        for h, s in zip(state.runners, statuses, strict=True)
        if s == "failed"
    ]
    if failed:
        raise RunnerFailed("; ".join(failed))
    operations = "pending" if state.spec.operations else None  # stages/operations.py
    return finished.advance("check_runner", runner_status="succeeded", operations_status=operations)


def record_results(state: RunState, providers: Providers) -> RunState:
    """Copy the runners' documents (possibly partial) to artifacts and find the measured window."""
    pointers: list[str] = []
    docs: list[ResultDocument] = []
    for handle in state.runners:
        found = providers.launcher.results(handle)
        docs.extend(found)
        key = f"{_cell_key(state, providers)}/runner-{handle.runner_index}-documents.json"
        pointers.append(providers.artifacts.put_json(key, [json.loads(d.model_dump_json()) for d in found]))
    window = state.window
    measured = [d for d in docs if d.phase == "run"] or docs[-1:]
    if measured:
        window = MetricsWindow(
            start=min(d.started_at for d in measured), end=max(d.ended_at for d in measured)
        )
    return state.model_copy(update={"result_pointers": pointers, "window": window})


def collect_metrics(state: RunState, providers: Providers) -> RunState:
    """Host or cloud metrics for the measured window, stored next to the results."""
    target = _target(state, providers)
    window = state.window
    if window is None:
        now = utcnow()
        window = MetricsWindow(start=state.created_at, end=now)
    watch = getattr(providers.metrics, "watch_runners", None)
    if callable(watch):  # cloud sources also read the runner hosts' own metrics
        watch(state.runners)
    series = providers.metrics.collect(target, window)
    pointer = providers.artifacts.put_json(
        f"{_cell_key(state, providers)}/metrics.json", [json.loads(s.model_dump_json()) for s in series]
    )
    return state.advance("collect_metrics", metrics_pointer=pointer)


def load_cell(state: RunState, providers: Providers) -> Any:
    """The CellResult for this state from its pointers (documents merged per phase across runners)."""
    from benchwright.runs import CellResult, SharedData

    docs: list[ResultDocument] = []
    for pointer in state.result_pointers:
        docs.extend(ResultDocument.parse(d) for d in providers.artifacts.get_json(pointer))
    metrics = (
        [MetricSeries.model_validate(m) for m in providers.artifacts.get_json(state.metrics_pointer)]
        if state.metrics_pointer
        else []
    )
    by_phase: dict[str, list[ResultDocument]] = {}
    for doc in docs:
        by_phase.setdefault(doc.phase, []).append(doc)
    phases = {name: _merge(group) for name, group in by_phase.items()}
    for doc in phases.values():
        doc.run_id = state.run_id
        doc.cell = state.cell_id
    if "run" in phases and metrics:
        phases["run"].metrics = metrics
    return CellResult(
        cell_id=state.cell_id,
        parameters=state.parameters,
        repeat=state.repeat,
        phases=phases,
        metrics=metrics,
        shared=SharedData.model_validate(state.shared) if state.shared else None,
    )


def _merge(group: list[ResultDocument]) -> ResultDocument:
    """Several runners' documents of one phase become one (histograms merged exactly)."""
    if len(group) == 1:
        return group[0]
    from benchwright.merge import merge_documents

    return merge_documents(group)


def judge_results(state: RunState, providers: Providers) -> RunState:
    """Validity flags for every phase and the cell (error rate, too short, saturation, collapse)."""
    from benchwright.experiments.availability import attach, reconcile_flags
    from benchwright.judge.validity import cell_is_valid, judge_cell

    cell = load_cell(state, providers)
    attach(cell, state.event_log)  # what each event did to the measured phase
    _attach_operations(cell, state.operation_log)
    _attach_forecast(cell, state.credits_forecast)
    judge_cell(cell, state.spec.validity)
    reconcile_flags(cell)
    _judge_cloud_metrics(state, cell)
    if state.status == "aborted" or any(d.aborted for d in cell.phases.values()):
        from benchwright.results import ValidityFlag

        if not any(f.code == "aborted" for f in cell.validity):
            cell.validity.append(
                ValidityFlag(
                    code="aborted",
                    severity="invalid",
                    message=state.error or "the run stopped early: a partial result",
                )
            )
    pointer = providers.artifacts.put_json(
        f"{_cell_key(state, providers)}/cell.json", json.loads(cell.model_dump_json())
    )
    extra = (
        {"result_pointers": [*state.result_pointers, pointer]} if pointer not in state.result_pointers else {}
    )
    return state.advance("judge_results", valid=cell_is_valid(cell), **extra)


def _attach_operations(cell: Any, log: list[dict[str, Any]]) -> None:
    """The operation benchmarks go next to the workload's results, on the measured document."""
    from benchwright.results import TimedOperation

    doc = cell.measured
    if doc is not None and log:
        doc.timed_operations = [TimedOperation.model_validate(entry) for entry in log]


def _attach_forecast(cell: Any, forecast: dict[str, Any] | None) -> None:
    """The cell's burst-credit forecast into its measured document (``extra``), where the judge and
    every later re-judgement read it (forecast/check.py)."""
    from benchwright.forecast.check import FORECAST_KEY

    doc = cell.measured
    if doc is not None and forecast is not None:
        doc.extra[FORECAST_KEY] = forecast


def _judge_cloud_metrics(state: RunState, cell: Any) -> None:
    """CloudWatch series (AWS targets and runner hosts): warn when the measured window is too short
    for 60-second data. Balances (full / draining / exhausted) are judged with every other series in
    ``judge_cell`` (judge/credits.py)."""
    from benchwright.judge.credits import cloud_window_flags

    window = state.window
    measured = cell.measured
    if window is None and measured is not None:
        window = MetricsWindow(start=measured.started_at, end=measured.ended_at)
    if window is None:
        return
    seconds = (window.end - window.start).total_seconds()
    for flag in cloud_window_flags(cell.metrics, seconds, state.spec.validity.cloud_min_duration_s):
        if not any(f.code == flag.code for f in cell.validity):
            cell.validity.append(flag)


def _cell_from_state(state: RunState, providers: Providers) -> Any:
    from benchwright.runs import CellResult

    for pointer in state.result_pointers:
        if pointer.endswith("cell.json"):
            return CellResult.model_validate(providers.artifacts.get_json(pointer))
    return load_cell(state, providers)


def _record(state: RunState, providers: Providers) -> Any:
    from benchwright.runs import RunRecord

    record = providers.store.get_run(state.run_id)
    if record is None:
        record = RunRecord(
            run_id=state.run_id,
            spec_name=state.spec_name,
            spec=spec_dict(state.spec),
            status="running",
            started_at=state.created_at,
            tags=dict(state.spec.tags),
            suite_run_id=state.suite_run_id,  # a suite's cell: not history on its own
        )
    return record


def store_results(state: RunState, providers: Providers) -> RunState:
    """Durable first: the cell goes into the run record in the store (idempotent by run id)."""
    cell = _cell_from_state(state, providers)
    record = _record(state, providers)
    record.cells = [c for c in record.cells if (c.cell_id, c.repeat) != (cell.cell_id, cell.repeat)] + [cell]
    if state.status in ("aborted", "failed"):
        record.status = state.status
        record.error = state.error
    providers.store.save_run(record)
    return state.advance("store_results")


def price_run(state: RunState, providers: Providers) -> RunState:
    """Cost of this cell (target and runner time); zero locally."""
    cell = _cell_from_state(state, providers)
    duration = max(0.0, (utcnow() - state.created_at).total_seconds())
    cost = providers.prices.estimate(state.spec, cell, duration)
    if cost is None:
        return state.advance("price_run")
    measured = cell.measured
    if measured is not None and cost.total > 0 and cost.ops_per_dollar is None:
        cost.ops_per_dollar = measured.operations_total / cost.total
    cell.cost = cost
    record = _record(state, providers)
    record.cells = [c for c in record.cells if (c.cell_id, c.repeat) != (cell.cell_id, cell.repeat)] + [cell]
    record.cost = combined_cost([c.cost for c in record.cells if c.cost is not None])
    providers.store.save_run(record)
    return state.advance("price_run", cost_total=cost.total)


def teardown(state: RunState, providers: Providers) -> RunState:
    """Stop runners still going and delete the target; runs on every path, safe to repeat. Events
    still pending are logged as not issued (stages/schedule.py: close_pending_events)."""
    state = close_pending_events(state)
    problems: list[str] = []
    for handle in state.runners:
        try:
            if providers.launcher.status(handle) in ("starting", "running"):
                providers.launcher.stop(handle)
        except Exception as exc:
            problems.append(f"runner {handle.id}: {exc}")
    if state.target or not state.spec.target.facts.owned:  # someone else's database has no handle
        target = _target(state, providers)
        with contextlib.suppress(Exception):
            providers.metrics.collect(target, MetricsWindow(start=state.created_at, end=utcnow()))
        try:
            target.delete()
        except Exception as exc:
            problems.append(f"target: {exc}")
    if problems:
        raise TeardownFailed("; ".join(problems))
    return state.advance("teardown", target={}, torn_down=True)
