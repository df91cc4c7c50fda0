"""The local orchestrator: the same stages as the Step Functions workflow, in the ASL's order, on one machine.

For every matrix cell and repeat it walks the cell's stages (``CELL_STAGES``; the two ``check_``
stages polled by ``wait_until``), and tears the target down in ``finally``. Ctrl-C or a crashing
runner still tears down, and the measured part is judged and stored with the run marked ``aborted``;
any other failure marks it ``failed``. When the last cell is done (or one failed), ``finish_run``
runs once for the run, as it does after the AWS workflow's Teardown: final status, verdict against
history, report, and the notification the spec asks for.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape

from benchwright.errors import BenchwrightError, RunnerFailed
from benchwright.providers.base import Providers
from benchwright.providers.local.fallback_store import FallbackStore
from benchwright.providers.local.pidfiles import register_run, unregister_run
from benchwright.runner.progress import RunnerEvent
from benchwright.runs import RunRecord, new_run_id
from benchwright.spec import (
    BenchmarkSpec,
    Cell,
    SuiteSpec,
    enabled_phases,
    expand_matrix,
    is_zip,
    spec_dict,
)
from benchwright.stages import CELL_STAGES, RunState, stage_function, utcnow
from benchwright.stages import steps as st

POLL_S = 0.2
DEFAULT_ROOT = Path("benchwright-results")


# ---------------------------------------------------------------- reduced size for tests and CI
# Property names (after any "workload." prefix such as tpcc. or redisbench.) and their quick-run caps.
QUICK_PROPERTIES = {
    "recordcount": 500,
    "operationcount": 1000,
    "insertcount": 500,
    "warehouses": 1,
    "scale": 1,
    "tables": 2,
    "table_size": 200,
    "rows": 200,
    "requests": 2000,
    "keyspace": 1000,
    "keys": 1000,
    "threadcount": 2,
    "clients": 2,
    "threads": 2,
    "fieldlength": 1000,
    "datasize": 1000,
}


def _capped(props: dict[str, Any], threads: int) -> dict[str, Any]:
    """Quick-run caps applied to a mapping of property names (or paths) to values."""
    for key, value in list(props.items()):
        limit = QUICK_PROPERTIES.get(key.rsplit(".", 1)[-1])
        if limit is not None:
            with contextlib.suppress(TypeError, ValueError):
                props[key] = min(int(float(value)), threads if limit == 2 else limit)
    return props


def scale_down(spec: BenchmarkSpec, seconds: float = 2.0, threads: int = 2) -> BenchmarkSpec:
    """A small version of a spec (the ``--quick`` option): few records, short phases, few threads."""
    data = spec_dict(spec)
    props = _capped(data["workload"].setdefault("properties", {}), threads)
    if "maxexecutiontime" in props:
        props["maxexecutiontime"] = min(int(float(props["maxexecutiontime"])), int(seconds))
    phases = data["workload"].setdefault("phases", {})
    if "run" in enabled_phases(spec):
        phases.setdefault("run", {})
    for name, phase in phases.items():
        if phase is None:
            continue
        if phase.get("threads"):
            phase["threads"] = min(phase["threads"], threads)
        if phase.get("duration_s"):
            phase["duration_s"] = min(phase["duration_s"], 1.0 if name == "warmup" else seconds)
        if phase.get("operation_count"):
            phase["operation_count"] = min(phase["operation_count"], 1000)
        if name == "run" and not phase.get("duration_s") and not phase.get("operation_count"):
            phase["duration_s"] = seconds
    matrix = {}
    for path, values in data.get("matrix", {}).items():
        if is_zip(path):  # linked axes: cap each property inside the entries
            matrix[path] = [_capped(dict(entry), threads) for entry in values[:2]]
            continue
        small = values[:2]
        limit = QUICK_PROPERTIES.get(path.rsplit(".", 1)[-1])
        if path.endswith(".threads"):
            limit = threads
        if limit is not None and all(isinstance(v, (int, float)) for v in small):
            cap = threads if limit == 2 else limit
            capped = sorted({min(int(v), cap) for v in small})
            if len(capped) < len(set(small)) and max(small) > cap and min(small) > 0:
                # capping would merge the axis into one cell: scale it instead, keeping its shape
                capped = sorted({max(1, int(v * cap / max(small))) for v in small})
            small = capped
        matrix[path] = small
    data["matrix"] = matrix
    data["repeats"] = 1
    data["validity"] = {**data.get("validity", {}), "min_duration_s": 0.0}
    return BenchmarkSpec.model_validate(data)


# ---------------------------------------------------------------- waiting
def wait_until(
    state: RunState,
    providers: Providers,
    stage: str,
    done: Callable[[RunState], bool],
    on_poll: Callable[[RunState], None] | None = None,
) -> RunState:
    """Call a non-blocking ``check_`` stage until ``done`` (its own deadline raises on timeout)."""
    fn = stage_function(stage)
    state = fn(state, providers)
    while not done(state):
        if on_poll is not None:
            on_poll(state)
        time.sleep(POLL_S)
        state = fn(state, providers)
    return state


STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


@contextlib.contextmanager
def sigint_deferred() -> Iterator[None]:
    """Ignore a second Ctrl-C (or SIGTERM / SIGHUP) while cleaning up, so teardown cannot be cut short."""
    try:
        previous = {sig: signal.signal(sig, signal.SIG_IGN) for sig in STOP_SIGNALS}
    except ValueError:  # not the main thread
        yield
        return
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


class LogTail:
    """New lines of the runners' logs since the last call: the runner's progress on our console."""

    def __init__(self, paths: list[Path]) -> None:
        self.offsets = {p: 0 for p in paths}

    def new_lines(self) -> list[str]:
        lines: list[str] = []
        for path, offset in self.offsets.items():
            try:
                with open(path, "rb") as f:
                    f.seek(offset)
                    data = f.read()
            except OSError:
                continue
            complete = data[: data.rfind(b"\n") + 1]
            self.offsets[path] = offset + len(complete)
            lines += [x for x in complete.decode(errors="replace").splitlines() if x.strip()]
        return lines


# ---------------------------------------------------------------- one cell
@dataclass
class CellOutcome:
    state: RunState
    status: str  # succeeded | aborted | failed
    error: str | None = None
    interrupted: bool = False


@dataclass
class Orchestrator:
    """Runs one spec (all its cells and repeats) with the given providers."""

    providers: Providers
    console: Console = field(default_factory=Console)
    events: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)  # shown after the summary (a plateau reached ...)
    progress: Any = None  # a report.text.RunProgress on a terminal: bars across cells and phases

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

    expected: dict[str, float] = field(default_factory=dict)

    def say(self, text: str) -> None:
        self.events.append(text)
        self.console.print(text, highlight=False, soft_wrap=True)

    def run_cell(self, state: RunState) -> CellOutcome:
        p = self.providers
        label = escape(f"[{state.cell_id} #{state.repeat + 1}]")
        interrupted = False
        error: BaseException | None = None
        try:
            for stage in CELL_STAGES:
                if stage == "check_target":
                    state = wait_until(state, p, stage, lambda s: s.target_status == "ready")
                    self.say(f"{label} target ready: {_describe(state)}")
                elif stage == "check_runner":
                    tail = LogTail([Path(h.log_pointer) for h in state.runners if h.log_pointer])

                    self.expected = {
                        name: float(ph["duration_s"])
                        for name, ph in (state.spec["workload"].get("phases") or {}).items()
                        if ph and ph.get("duration_s")
                    }

                    schedule = _event_schedule(state, p)

                    def echo(
                        _: RunState,
                        tail: LogTail = tail,
                        label: str = label,
                        cell: str = state.cell_id,
                        schedule: Any = schedule,
                    ) -> None:
                        for line in tail.new_lines():
                            if schedule is not None:
                                schedule.feed(line)
                            self.runner_line(label, cell, line)
                        for said in schedule.poll() if schedule is not None else ():
                            self.say(f"{label} {escape(said)}")

                    try:
                        state = wait_until(state, p, stage, lambda s: s.runner_status == "succeeded", echo)
                    finally:
                        if schedule is not None:
                            schedule.close()
                        echo(state)
                        if schedule is not None:  # the live server's handle, even if the runner failed
                            state = schedule.apply(state)
                    self.say(f"{label} runner finished")
                    state = _timed_operations(state, p, lambda text: self.say(f"{label} {escape(text)}"))
                else:
                    state = stage_function(stage)(state, p)
                    if stage == "provision_target":
                        self.say(
                            f"{label} provisioning {state.spec['target']['engine']} "
                            f"({state.spec['target']['provider']})"
                        )
                    elif stage == "launch_runner":
                        pids = ", ".join(h.id for h in state.runners)
                        self.say(
                            f"{label} runner started (pid {pids}); logs in {state.runners[0].log_pointer}"
                        )
        except KeyboardInterrupt:
            interrupted = True
        except BenchwrightError as exc:
            error = exc
        except Exception as exc:  # a bug still tears down; the traceback is kept in the message
            error = exc
        if interrupted or error is not None:
            with sigint_deferred():
                state = self._salvage(state, interrupted, error)
        with sigint_deferred():
            try:
                state = stage_function("teardown")(state, p)
                self.say(f"{label} torn down")
            except BenchwrightError as exc:
                self.say(f"{label} [red]teardown problem:[/red] {exc}")
                error = error or exc
        if interrupted:
            return CellOutcome(state, "aborted", "interrupted (Ctrl-C)", interrupted=True)
        if error is not None:
            return CellOutcome(state, state.status, f"{type(error).__name__}: {error}")
        return CellOutcome(state, "succeeded")

    def _salvage(self, state: RunState, interrupted: bool, error: BaseException | None) -> RunState:
        """Stop runners, keep what they measured, judge and store it marked as a partial result."""
        p = self.providers
        # a runner that stopped part-way gives a partial (aborted) result; one that never reached the
        # target, or refused its input, measured nothing: that run failed
        never_ran = any(
            f"{kind}:" in str(error) for kind in ("TargetUnreachable", "SpecError", "SchemaMissing")
        )
        aborted = interrupted or (isinstance(error, RunnerFailed) and not never_ran)
        status = "aborted" if aborted else "failed"
        message = "interrupted (Ctrl-C)" if interrupted else f"{type(error).__name__}: {error}"
        label = escape(f"[{state.cell_id} #{state.repeat + 1}]")
        self.say(f"{label} [yellow]{status}[/yellow]: {escape(message)}")
        state = state.model_copy(
            update={
                "status": status,
                "error": message,
                "error_type": "Interrupted" if interrupted else type(error).__name__,
            }
        )
        if not state.runners:
            return state
        for handle in state.runners:
            with contextlib.suppress(Exception):
                p.launcher.stop(handle)
        try:
            state = st.record_results(state, p)
            state = st.collect_metrics(state, p)
            state = st.judge_results(state, p)
            state = st.store_results(state, p)
            self.say(f"{label} partial result stored ({status})")
        except Exception as exc:  # never let salvage hide the teardown
            self.say(f"[red]could not store the partial result:[/red] {type(exc).__name__}: {exc}")
        return state


def _timed_operations(state: RunState, providers: Providers, say: Callable[[str], None]) -> RunState:
    """The spec's operation benchmarks, one after another on the loaded target, after the runner."""
    log: list[dict[str, Any]] = []
    for name in state.spec.get("operations") or []:
        target = providers.target(state.spec["target"], state.run_id, state.target)
        started = utcnow()
        try:
            entry = target.operation(str(name))
        except Exception as exc:  # the run's results stand; the operation says it failed
            entry = {"name": name, "started_at": started.isoformat(), "seconds": None, "ok": False,
                     "detail": f"failed: {type(exc).__name__}: {exc}"}  # fmt: skip
        state = state.model_copy(update={"target": {**state.target, **target.handle}})  # a restart: new pid
        log.append(entry)
        seconds = entry.get("seconds")
        say(f"operation {name}: " + (f"{seconds:.2f} s" if seconds is not None else entry["detail"]))
    return state.model_copy(update={"operation_log": [*state.operation_log, *log]}) if log else state


def _event_schedule(state: RunState, providers: Providers) -> Any:
    """The spec's events, issued while the runner measures (experiments/schedule.py); None without."""
    if not state.spec.get("events"):
        return None
    from benchwright.experiments.schedule import EventSchedule

    spec = BenchmarkSpec.model_validate(state.spec)
    measured = "run" if "run" in enabled_phases(spec) else enabled_phases(spec)[-1]
    return EventSchedule.for_spec(
        state.spec, measured, lambda: providers.target(state.spec["target"], state.run_id, state.target)
    )


def _describe(state: RunState) -> str:
    port = state.target.get("port")
    return f"127.0.0.1:{port}" if port else state.target.get("endpoint", state.spec["target"]["provider"])


# ---------------------------------------------------------------- one spec, one suite
@dataclass
class RunOutcome:
    record: RunRecord
    out_dir: Path
    report: Path | None
    interrupted: bool = False
    warnings: list[str] = field(default_factory=list)


def run_spec(
    spec: BenchmarkSpec,
    out_dir: Path,
    providers_factory: Callable[[Path, BenchmarkSpec], Providers],
    console: Console | None = None,
    run_id: str | None = None,
    max_cells: int | None = None,
    stop_at_plateau: bool = False,
    keep_going: bool = True,
) -> RunOutcome:
    console = console or Console()
    run_id = run_id or new_run_id()
    out_dir.mkdir(parents=True, exist_ok=True)
    providers = providers_factory(out_dir, spec)
    # results first: a store that cannot be written keeps the record in <out>/run.json and says so
    warnings: list[str] = []
    store = FallbackStore(providers.store, out_dir, warnings.append)
    providers.store = store
    cells: list[Cell] = expand_matrix(spec)
    order = [(c, r) for c in cells for r in range(spec.repeats)][:max_cells]
    record = RunRecord(
        run_id=run_id,
        spec_name=spec.name,
        spec=spec.model_dump(mode="json"),
        status="running",
        started_at=utcnow(),
        environment=_environment(),
        tags=dict(spec.tags),
    )
    providers.store.save_run(record)
    store_path = getattr(store.inner, "path", None)
    register_run(run_id, str(store_path) if store_path else None, str(out_dir))
    orch = Orchestrator(providers, console)
    limited = f" (the first {len(order)} only)" if len(order) < len(cells) * spec.repeats else ""
    orch.say(
        f"run {run_id}: {spec.name}, {len(cells)} cell(s) x {spec.repeats} repeat(s){limited}, results in {out_dir}"
    )
    # the run as the finish stage sees it: the whole spec, the run's start, and how it ended
    run_state = RunState(
        run_id=run_id,
        spec_name=spec.name,
        spec=spec_dict(spec),
        created_at=record.started_at,
        status="running",
        poll_seconds=POLL_S,
    )
    interrupted = False
    bars: contextlib.AbstractContextManager[Any] = contextlib.nullcontext()
    if console.is_terminal:
        from benchwright.report.text import run_progress

        steps_list = [(f"{c.cell_id}", ph) for c, _ in order for ph in enabled_phases(c.spec)]
        bars = run_progress(steps_list, console)
    try:
        with bars as orch.progress:
            _run_cells(orch, spec, run_id, order, providers, stop_at_plateau, keep_going)
    except _CellFailed as failed:
        interrupted = failed.outcome.interrupted
        run_state = run_state.model_copy(
            update={
                "status": failed.outcome.status,
                "error": failed.outcome.error,  # already "<ErrorType>: <message>"
            }
        )
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
    try:
        (out_dir / "run.json").write_text(final.model_dump_json(indent=1))
    except OSError as exc:
        warnings.append(f"{out_dir / 'run.json'} not written ({exc})")
    unregister_run(run_id)
    report = Path(final.report) if final.report else None
    warnings = list(dict.fromkeys([*orch.warnings, *warnings, *run_state.warnings]))
    return RunOutcome(final, out_dir, report, interrupted, warnings)


class _CellFailed(Exception):
    def __init__(self, outcome: CellOutcome) -> None:
        super().__init__(outcome.error)
        self.outcome = outcome


def _run_cells(
    orch: Orchestrator,
    spec: BenchmarkSpec,
    run_id: str,
    order: list[tuple[Cell, int]],
    providers: Providers,
    stop_at_plateau: bool = False,
    keep_going: bool = True,
) -> None:
    """Every (cell, repeat) in order. A failed cell does not stop the others (``keep_going``); the run
    then fails naming every failed cell. Ctrl-C always stops at once."""
    from benchwright.experiments.plateau import PlateauWatch

    watch = PlateauWatch.for_spec(spec) if stop_at_plateau else None
    failed: list[CellOutcome] = []
    for cell, repeat in order:
        if watch is not None and watch.skips(cell.parameters):
            continue
        state = RunState(
            run_id=run_id,
            spec_name=spec.name,
            cell_id=cell.cell_id,
            repeat=repeat,
            parameters=cell.parameters,
            spec=spec_dict(cell.spec),
            poll_seconds=POLL_S,
        )
        outcome = orch.run_cell(state)
        if outcome.status != "succeeded":
            if outcome.interrupted or not keep_going:
                raise _CellFailed(outcome)
            failed.append(outcome)
            continue
        if watch is not None and repeat == spec.repeats - 1:
            record = providers.store.get_run(run_id)
            measured = [
                c.measured.throughput
                for c in (record.cells if record else [])
                if c.cell_id == cell.cell_id and c.measured is not None
            ]
            said = watch.observe(cell.parameters, measured)
            if said:
                orch.say(said)
                orch.warnings.append(said)
    if failed:
        names = "; ".join(f"{o.state.cell_id} #{o.state.repeat + 1}: {o.error}" for o in failed)
        summary = f"{len(failed)} cell(s) failed (of {len(order)}): {names}"
        raise _CellFailed(CellOutcome(failed[0].state, failed[0].status, summary))


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


# ---------------------------------------------------------------- environment
def _environment() -> dict[str, Any]:
    from benchwright.runner.engine import host_facts

    facts = host_facts().model_dump()
    facts["orchestrator"] = "local"
    facts["pid"] = os.getpid()
    return facts
