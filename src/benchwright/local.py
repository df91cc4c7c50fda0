"""The local orchestrator: the suite workflow's stages, in the ASL's order, on one machine.

The matrix's cells and repeats are grouped as the suite ASL groups them (benchwright.sharing): each
target group provisions its target once (``GROUP_OPEN``), then each of its datasets is loaded by its
first cell and every cell walks ``CELL_WALK`` on the loaded data, one after another; the target is
torn down once, in ``finally``, on every path. The two ``check_`` stages are polled until ``UNTIL``
holds, as the ASL's Wait + Choice do. Ctrl-C or a crashing runner still tears down, and the measured
part is judged and stored with the cell marked ``aborted``; any other failure marks it ``failed``.
A failed cell does not stop the others (``keep_going``). When every group is done, ``finish_run``
runs once for the run, as after the AWS workflow's Teardown: final status, verdict, report, message.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape

from benchwright.errors import BenchwrightError
from benchwright.local_watch import (
    POLL_S,
    LogTail,
    describe,
    environment,
    salvage,
    sigint_deferred,
    wait_until,
)
from benchwright.providers.base import Providers
from benchwright.providers.local.fallback_artifacts import FallbackArtifacts, write_run_files
from benchwright.providers.local.fallback_store import FallbackStore
from benchwright.providers.local.pidfiles import register_run, unregister_run
from benchwright.quick import QUICK_PROPERTIES, scale_down  # re-exported: callers import them from here
from benchwright.runner.progress import RunnerEvent
from benchwright.runs import RunRecord, SharedData, new_run_id
from benchwright.sharing import Dataset, Item, TargetGroup, plan, without_load
from benchwright.spec import BenchmarkSpec, Cell, SuiteSpec, enabled_phases, expand_matrix
from benchwright.spec.workload import PHASE_NAMES
from benchwright.stages import STAGE_ORDER, RunState, stage_function, utcnow
from benchwright.stages.schedule import said

__all__ = ["QUICK_PROPERTIES", "RunOutcome", "run_spec", "run_suite", "scale_down"]
DEFAULT_ROOT = Path("benchwright-results")

# The suite ASL's walk (statemachines/suite.asl.json) as this orchestrator takes it.
GROUP_OPEN = ("provision_target", "check_target")  # once per target group
GROUP_CLOSE = "teardown"  # once per target group, on every path
# every cell, on the group's target: the other stages up to teardown, in STAGE_ORDER (one list to edit)
CELL_WALK = tuple(s for s in STAGE_ORDER if s not in (*GROUP_OPEN, GROUP_CLOSE, "finish_run"))
UNTIL: dict[str, Callable[[RunState], bool]] = {  # a check_ stage is polled until this holds
    "check_target": lambda s: s.target_status == "ready",
    "check_runner": lambda s: s.runner_status == "succeeded",
    "check_operations": lambda s: s.operations_status in (None, "done"),
}


@dataclass
class CellOutcome:
    state: RunState
    status: str  # succeeded | aborted | failed
    error: str | None = None
    interrupted: bool = False


class _Stop(Exception):
    """Stops the run: Ctrl-C, or a failure with --no-keep-going."""

    def __init__(self, outcome: CellOutcome) -> None:
        super().__init__(outcome.error)
        self.outcome = outcome


@dataclass
class Orchestrator:
    """Runs one spec (all its target groups, datasets, cells and repeats) with the given providers."""

    providers: Providers
    console: Console = field(default_factory=Console)
    events: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)  # shown after the summary (a plateau reached ...)
    progress: Any = None  # a report.text.RunProgress on a terminal: bars across cells and phases
    expected: dict[str, float] = field(default_factory=dict)
    keep_going: bool = True
    skip: Callable[[Item], bool] = lambda item: False  # a plateau reached: the sweep's later steps
    after: Callable[[CellOutcome], None] = lambda outcome: None  # each cell's outcome, as it comes
    polled: RunState | None = None  # the runner's last poll while _watch_runner waits (events issued)

    def say(self, text: str) -> None:
        self.events.append(text)
        self.console.print(text, highlight=False, soft_wrap=True)

    def runner_line(self, label: str, cell: str, line: str) -> None:
        """A runner log line: a progress event (``RunnerEvent``, one JSON line) drives the progress
        bars or is shown as its human line; anything else (a tool's output, an error) is echoed."""
        event = RunnerEvent.parse_line(line)
        if event is not None:
            if self.progress is not None:
                if event.event == "phase_started":
                    self.progress.start_phase(cell, event.phase, self.expected.get(event.phase))
                elif event.event == "progress":
                    self.progress.phase_callback(
                        event.elapsed_s or 0.0, event.operations or 0, event.ops_per_s or 0.0
                    )
                    return
                elif event.event == "phase_done":
                    self.progress.finish_phase()
            line = event.human()
        self.say(f"{label} {escape(line)}")

    # ------------------------------------------------------------ one target group
    def run_group(self, group: TargetGroup, make: Callable[[Item], RunState]) -> list[CellOutcome]:
        """Provision once, run every dataset's cells on the target, tear down once (also on failure)."""
        p = self.providers
        first = group.items[0]
        label = escape(f"[{group.name}]")
        state = make(first)
        outcomes: list[CellOutcome] = []
        try:
            try:
                for stage in GROUP_OPEN:
                    state = self._step(stage, state, label)
            except Exception as exc:  # no target: every cell of the group failed
                for item in group.items:
                    failed = make(item).model_copy(
                        update={"status": "failed", "error_type": type(exc).__name__}
                    )
                    outcome = CellOutcome(failed, "failed", f"{type(exc).__name__}: {exc}")
                    self.say(f"{escape(f'[{item.label}]')} [yellow]failed[/yellow]: {escape(str(exc))}")
                    self._settle(outcome, outcomes)
                return outcomes
            for dataset in group.datasets:
                self._run_dataset(group, dataset, state, make, outcomes)
            return outcomes
        except KeyboardInterrupt:
            raise _Stop(CellOutcome(state, "aborted", "interrupted (Ctrl-C)", interrupted=True)) from None
        finally:
            with sigint_deferred():
                try:
                    stage_function(GROUP_CLOSE)(state.model_copy(update={"runners": []}), p)
                    self.say(f"{label} torn down")
                except BenchwrightError as exc:
                    self.say(f"{label} [red]teardown problem:[/red] {exc}")
                    outcomes.append(CellOutcome(state, "failed", f"{type(exc).__name__}: {exc}"))

    def _run_dataset(
        self,
        group: TargetGroup,
        dataset: Dataset,
        target: RunState,
        make: Callable[[Item], RunState],
        outcomes: list[CellOutcome],
    ) -> None:
        """The dataset's cells one after another; the first loads (or the next, if that load failed)."""
        loaded_by: str | None = None
        runs = 0
        for item in dataset.items:
            if self.skip(item):
                continue
            loads = dataset.loads and loaded_by is None
            shared = SharedData(
                target_group=group.name,
                provisioned_by=group.items[0].label,
                dataset=dataset.name if dataset.loads else None,
                loaded_by=item.label if loads else loaded_by,
                loaded_here=loads,
                runs_before=runs,
            )
            state = make(item)
            spec = state.spec if loads or not dataset.loads else without_load(state.spec)
            state = state.model_copy(
                update={
                    "spec": spec,
                    "target": dict(target.target),
                    "target_status": "ready",
                    "shared": shared.model_dump(mode="json"),
                }
            )
            if not loads:
                self.say(f"{escape(f'[{item.label}]')} {escape(shared.describe())}")
            outcome = self.run_cell(state)
            # an event may have restarted the server (a new pid): the group's later cells and its
            # teardown need the live handle (the group's state shares this dict)
            target.target.update(outcome.state.target)
            self._settle(outcome, outcomes)
            if loads and self._loaded(outcome.state):
                loaded_by = item.label
            runs += 1 if loaded_by is not None else 0

    def _settle(self, outcome: CellOutcome, outcomes: list[CellOutcome]) -> None:
        outcomes.append(outcome)
        self.after(outcome)
        if outcome.interrupted or (outcome.status != "succeeded" and not self.keep_going):
            raise _Stop(outcome)

    def _loaded(self, state: RunState) -> bool:
        """Did this cell's load phase complete (its document is stored and not cut short)?"""
        record = self.providers.store.get_run(state.run_id)
        for cell in record.cells if record else []:
            if (cell.cell_id, cell.repeat) == (state.cell_id, state.repeat) and "load" in cell.phases:
                return not cell.phases["load"].aborted
        return False

    # ------------------------------------------------------------ one cell on the group's target
    def _step(self, stage: str, state: RunState, label: str) -> RunState:
        """One stage of the walk, polled when it is a check_ stage, with its console line."""
        p = self.providers
        if stage == "check_runner":
            return self._watch_runner(state, label)
        if stage in UNTIL:
            state = wait_until(state, p, stage, UNTIL[stage])
        else:
            state = stage_function(stage)(state, p)
        if stage == "provision_target":
            target = state.spec.target
            self.say(f"{label} provisioning {target.engine} ({target.provider})")
        elif stage == "check_target":
            self.say(f"{label} target ready: {describe(state)}")
        elif stage == "check_operations":
            for entry in state.operation_log:
                seconds = entry.get("seconds")
                outcome = f"{seconds:.2f} s" if seconds is not None else str(entry.get("detail", ""))
                self.say(f"{label} " + escape(f"operation {entry['name']}: {outcome}"))
        elif stage == "launch_runner":
            pids = ", ".join(h.id for h in state.runners)
            self.say(f"{label} runner started (pid {pids}); logs in {state.runners[0].log_pointer}")
        return state

    def _watch_runner(self, state: RunState, label: str) -> RunState:
        """Poll the runner and echo its log; the check_runner stage issues the spec's events
        (stages/schedule.py) and this shows them. The check_operations stage follows."""
        p = self.providers
        tail = LogTail([Path(h.log_pointer) for h in state.runners if h.log_pointer])
        phases = state.spec.workload.phases
        self.expected = {
            n: ph.duration_s for n in PHASE_NAMES if (ph := getattr(phases, n)) and ph.duration_s
        }
        self.polled = state

        def echo(polled: RunState) -> None:
            for line in tail.new_lines():
                self.runner_line(label, state.cell_id, line)
            seen = len(self.polled.event_log) if self.polled is not None else 0
            for entry in polled.event_log[seen:]:
                self.say(f"{label} {escape(said(entry))}")
            self.polled = polled

        state = wait_until(state, p, "check_runner", UNTIL["check_runner"], echo)
        echo(state)
        self.polled = None  # finished: run_cell goes on from the returned state
        self.say(f"{label} runner finished")
        return state

    def run_cell(self, state: RunState) -> CellOutcome:
        """``CELL_WALK`` on the group's target; a failure keeps what was measured. The runners are
        stopped on every path; the target stays for the group's next cell."""
        label = escape(f"[{state.cell_id} #{state.repeat + 1}]")
        interrupted = False
        error: BaseException | None = None
        try:
            for stage in CELL_WALK:
                state = self._step(stage, state, label)
        except KeyboardInterrupt:
            interrupted = True
        except Exception as exc:  # a bug still stops the runners; the traceback is kept in the message
            error = exc
        if self.polled is not None:  # stopped while watching the runner: its last poll holds the
            state, self.polled = self.polled, None  # live server's handle and the events issued
        with sigint_deferred():
            if interrupted or error is not None:
                state = salvage(state, self.providers, interrupted, error, self.say)
            for handle in state.runners:
                with contextlib.suppress(Exception):
                    if self.providers.launcher.status(handle) in ("starting", "running"):
                        self.providers.launcher.stop(handle)
        if interrupted:
            return CellOutcome(state, "aborted", "interrupted (Ctrl-C)", interrupted=True)
        if error is not None:
            return CellOutcome(state, state.status, f"{type(error).__name__}: {error}")
        return CellOutcome(state, "succeeded")


# ---------------------------------------------------------------- one spec, one suite
@dataclass
class RunOutcome:
    record: RunRecord
    out_dir: Path
    report: Path | None
    interrupted: bool = False
    warnings: list[str] = field(default_factory=list)
    lost: list[str] = field(default_factory=list)  # files the run could not write (a full out_dir)


def run_spec(  # pylint: disable=too-many-positional-arguments,too-many-locals  # issue 10 item 6 (shared-targets)
    spec: BenchmarkSpec,
    out_dir: Path,
    providers_factory: Callable[[Path, BenchmarkSpec], Providers],
    console: Console | None = None,
    run_id: str | None = None,
    max_cells: int | None = None,
    stop_at_plateau: bool = False,
    keep_going: bool = True,
    only: set[tuple[str, int]] | None = None,
) -> RunOutcome:
    """Run every cell and repeat of ``spec`` (``only``: just these (cell id, repeat) pairs, into the
    existing record of ``run_id``: ``--resume``)."""
    console = console or Console()
    run_id = run_id or new_run_id()
    out_dir.mkdir(parents=True, exist_ok=True)
    providers = providers_factory(out_dir, spec)
    # results first: a store that cannot be written keeps the record in <out>/run.json and says so
    warnings: list[str] = []
    store = FallbackStore(providers.store, out_dir, warnings.append)
    providers.store = store
    artifacts = FallbackArtifacts(providers.artifacts)
    providers.artifacts = artifacts
    cells: list[Cell] = expand_matrix(spec)
    order = [(c, r) for c in cells for r in range(spec.repeats)][:max_cells]
    if only is not None:
        order = [(c, r) for c, r in order if (c.cell_id, r) in only]
    record = _open_record(providers, spec, run_id, resumed=only is not None)
    store_path = getattr(store.inner, "path", None)
    register_run(run_id, str(store_path) if store_path else None, str(out_dir))
    orch = Orchestrator(providers, console, keep_going=keep_going)
    groups = plan(order)
    limited = f" (the first {len(order)} only)" if len(order) < len(cells) * spec.repeats else ""
    datasets = sum(len(g.datasets) for g in groups)
    orch.say(
        f"run {run_id}: {spec.name}, {len(cells)} cell(s) x {spec.repeats} repeat(s){limited} on "
        f"{len(groups)} target(s), {datasets} dataset(s), results in {out_dir}"
    )
    # the run as the finish stage sees it: the whole spec, the run's start, and how it ended
    run_state = RunState(
        run_id=run_id,
        spec_name=spec.name,
        spec=spec,
        created_at=record.started_at,
        status="running",
        poll_seconds=POLL_S,
    )
    interrupted = False
    bars: contextlib.AbstractContextManager[Any] = contextlib.nullcontext()
    if console.is_terminal:
        from benchwright.report.text import run_progress

        steps_list = [  # a dataset's first cell loads, the others run on its data
            (item.cell.cell_id, ph)
            for g in groups
            for d in g.datasets
            for n, item in enumerate(d.items)
            for ph in enabled_phases(item.cell.spec)
            if ph != "load" or n == 0
        ]
        bars = run_progress(steps_list, console)
    try:
        with bars as orch.progress:
            _run_groups(orch, spec, run_id, groups, len(order), stop_at_plateau)
    except _Stop as stop:
        interrupted = stop.outcome.interrupted
        error = stop.outcome.error  # already "<ErrorType>: <message>"
        run_state = run_state.model_copy(update={"status": stop.outcome.status, "error": error})
    except KeyboardInterrupt:  # between cells: nothing is running, nothing to tear down
        interrupted = True
        run_state = run_state.model_copy(update={"status": "aborted", "error": "interrupted (Ctrl-C)"})
    finally:
        with sigint_deferred():
            run_state = stage_function("finish_run")(run_state, providers)
        stop_all = getattr(providers.metrics, "stop_all", None)
        if callable(stop_all):
            stop_all()
    final = providers.store.get_run(run_id) or record
    write_run_files(final, out_dir, providers.launcher, artifacts)
    if artifacts.summary():
        warnings.append(str(artifacts.summary()))
    unregister_run(run_id)
    report = Path(final.report) if final.report else None
    warnings = list(dict.fromkeys([*orch.warnings, *warnings, *run_state.warnings]))
    return RunOutcome(final, out_dir, report, interrupted, warnings, lost=list(artifacts.lost))


def _open_record(providers: Providers, spec: BenchmarkSpec, run_id: str, resumed: bool) -> RunRecord:
    """The run's record, saved as running: a new one, or (resumed) the stored one with its cells."""
    record = providers.store.get_run(run_id) if resumed else None
    if record is None:
        record = RunRecord(
            run_id=run_id,
            spec_name=spec.name,
            spec=spec.model_dump(mode="json"),
            status="running",
            started_at=utcnow(),
            environment=environment(),
            tags=dict(spec.tags),
        )
    else:
        record.status, record.error = "running", None
        record.environment["resumed_at"] = utcnow().isoformat()
    providers.store.save_run(record)
    return record


def _run_groups(
    orch: Orchestrator,
    spec: BenchmarkSpec,
    run_id: str,
    groups: list[TargetGroup],
    total: int,
    stop_at_plateau: bool = False,
) -> None:
    """Every target group in turn. A failed cell does not stop the others (``keep_going``); the run
    then fails naming every failed cell. Ctrl-C always stops at once."""
    from benchwright.experiments.plateau import PlateauWatch

    watch = PlateauWatch.for_spec(spec) if stop_at_plateau else None
    if watch is not None:  # a concurrency sweep stops once throughput stops growing
        orch.skip = lambda item: watch.skips(item.cell.parameters)

        def after(outcome: CellOutcome) -> None:
            if outcome.status == "succeeded" and outcome.state.repeat == spec.repeats - 1:
                _observe(orch, watch, run_id, outcome.state)

        orch.after = after

    from benchwright.forecast.credits import item_forecasts

    forecasts = {label: f for group in groups for label, f in item_forecasts(group).items()}

    def make(item: Item) -> RunState:
        return RunState(
            run_id=run_id,
            spec_name=spec.name,
            cell_id=item.cell.cell_id,
            repeat=item.repeat,
            parameters=item.cell.parameters,
            spec=item.cell.spec,
            poll_seconds=POLL_S,
            credits_forecast=forecasts.get(item.label),
        )

    failed: list[CellOutcome] = []
    for group in groups:
        if not group.items:
            continue
        failed += [o for o in orch.run_group(group, make) if o.status != "succeeded"]
    if failed:
        names = "; ".join(f"{o.state.cell_id} #{o.state.repeat + 1}: {o.error}" for o in failed)
        summary = f"{len(failed)} cell(s) failed (of {total}): {names}"
        raise _Stop(CellOutcome(failed[0].state, failed[0].status, summary))


def _observe(orch: Orchestrator, watch: Any, run_id: str, state: RunState) -> None:
    record = orch.providers.store.get_run(run_id)
    measured = [
        c.measured.throughput
        for c in (record.cells if record else [])
        if c.cell_id == state.cell_id and c.measured is not None
    ]
    said = watch.observe(state.parameters, measured)
    if said:
        orch.say(said)
        orch.warnings.append(said)


def run_suite(
    suite: SuiteSpec,
    out: Path | None,
    providers_factory: Callable[[Path, BenchmarkSpec], Providers],
    console: Console | None = None,
    max_cells: int | None = None,
    stop_at_plateau: bool = False,
    keep_going: bool = True,
) -> list[RunOutcome]:
    outcomes: list[RunOutcome] = []
    for spec in suite.benchmarks:
        run_id = new_run_id()
        if len(suite.benchmarks) > 1 and "suite" not in spec.tags:  # `benchwright table SUITE` finds them
            spec = spec.model_copy(update={"tags": {**spec.tags, "suite": suite.suite}})
        if out is None:
            out_dir = DEFAULT_ROOT / run_id
        else:
            out_dir = out if len(suite.benchmarks) == 1 else out / spec.name
        outcome = run_spec(
            spec, out_dir, providers_factory, console, run_id, max_cells, stop_at_plateau, keep_going
        )
        outcomes.append(outcome)
        if outcome.interrupted:
            break
    return outcomes
