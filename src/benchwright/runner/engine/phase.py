"""The parent side of one phase, step by step: set it up through a probe connection, lay the
clients out over worker processes, run them (``processes.WorkerPool``), build the document, flag
what went wrong and let the workload run its closing checks."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from benchwright.errors import TargetUnreachable
from benchwright.results import ResultDocument
from benchwright.runner.dataset_guard import DatasetGuard
from benchwright.runner.drivers import new_driver
from benchwright.runner.engine.client_model import _loop_class, _wants_event_loop, default_processes
from benchwright.runner.engine.config import NS, ProgressFn, WorkerReport
from benchwright.runner.engine.document import build_document
from benchwright.runner.engine.periods import _check_period, _PeriodTracker
from benchwright.runner.engine.processes import WorkerPool
from benchwright.runner.event_loop import EventLoop
from benchwright.runner.plan import PhaseConfig
from benchwright.runner.workloads.base import ThreadInfo, Workload, split
from benchwright.runner.workloads.registry import workload_class


def run_phase(
    config: PhaseConfig,
    progress: ProgressFn | None = None,
    on_start: Callable[[datetime], None] | None = None,
) -> ResultDocument:
    """Set up, run and measure one phase; return its result document (partial if aborted).

    ``progress`` is called as (elapsed s, operations so far, current ops/s) about twice a second; a
    ``PeriodProgress`` also gets each reporting period's exact aggregates as the run goes.
    ``on_start`` gets the instant the workers were released, the measured clock's zero (after set-up
    and connecting: events are timed from it)."""
    live = _check_period(progress, config)
    workload = workload_class(config.workload)(config.properties)
    guard = DatasetGuard(workload, config)
    server_version, endpoint, loop = _set_up(workload, config, guard)
    config, assignment, limits = _layout(config, workload, loop)
    pool = WorkerPool(config, assignment, limits, live is not None)
    pool.start(endpoint)
    started_at, start_ns = pool.release(config.start_at)
    if on_start is not None:
        on_start(started_at)
    tracker = _PeriodTracker(live, config, len(assignment)) if live is not None else None
    pool.collect(start_ns, progress, tracker)
    end_ns = time.perf_counter_ns()
    pool.join()
    ended_at = datetime.now(UTC)
    collected = pool.collected
    runtime_s = max(1e-9, (max(end_ns, start_ns + 1) - start_ns) / NS)
    if collected:
        runtime_s = max(r.wall_s for r in collected)
    if tracker is not None and not pool.interrupted and len(collected) == len(assignment):
        tracker.emit(runtime_s, runtime_s)  # the periods that ended with the run

    # ``config.processes`` is the number that ran: the document names it
    doc = build_document(config, collected, started_at, ended_at, runtime_s, server_version, endpoint)
    _flag_incomplete(doc, collected, len(assignment), pool.interrupted)
    guard.note(doc)
    if not doc.aborted:
        workload.absorb_worker_figures([r.workload_figures for r in collected])
        _finish(workload, config, doc, guard)
    return doc


def _set_up(
    workload: Workload, config: PhaseConfig, guard: DatasetGuard
) -> tuple[str | None, str, type[EventLoop] | None]:
    """Set the phase up (schema, data) over one probe connection, which raises TargetUnreachable
    naming the host before any worker starts; ``guard`` resets, adopts or checks the target's data
    around the workload's set-up. Returns the server's version, the endpoint and the event loop the
    clients can run on (None: a thread each)."""
    probe = new_driver(config.engine, config.properties, 0)
    probe.connect()
    try:
        guard.before(probe, lambda: workload.setup(probe, config.workload_phase))
        server_version = probe.server_version()
        loop = (
            _loop_class(probe)
            if _wants_event_loop(workload, config)
            and probe.event_loop_channel() is not None
            and workload.wire_requests(config.workload_phase, probe, ThreadInfo(0, 1, 0)) is not None
            else None
        )
    finally:
        probe.close()
    return server_version, probe.endpoint(), loop


def _layout(
    config: PhaseConfig, workload: Workload, loop: type[EventLoop] | None
) -> tuple[PhaseConfig, list[list[int]], list[list[int | None]]]:
    """The phase's settings with the workload's defaults filled in, the client (thread) indexes each
    worker process runs, and each client's share of the operation count (None: time-bounded)."""
    threads = max(1, config.threads)
    processes = min(threads, config.processes or default_processes(threads, loop))
    total = (
        config.operation_count
        if config.operation_count is not None
        else workload.operation_limit(config.workload_phase)
    )
    if total == 0:  # YCSB: operationcount=0 means "until maxexecutiontime"
        total = None
    max_seconds = (
        config.max_seconds if config.max_seconds is not None else workload.time_limit(config.workload_phase)
    )
    config = replace(config, threads=threads, processes=processes, max_seconds=max_seconds)
    assignment = [list(range(p, threads, processes)) for p in range(processes)]
    limits = [[split(total, threads, t) if total is not None else None for t in ts] for ts in assignment]
    return config, assignment, limits


def _flag_incomplete(
    doc: ResultDocument, collected: list[WorkerReport], processes: int, interrupted: bool
) -> None:
    """Mark a partial result: a worker died, the run was interrupted or the server was lost."""
    if len(collected) < processes:
        doc.aborted = True
        doc.flag(
            "worker_lost", "invalid", f"{processes - len(collected)} worker process(es) died without a report"
        )
    if interrupted:
        doc.aborted = True
        doc.flag("interrupted", "invalid", "the run was interrupted; this is a partial result")
    reasons = [r.aborted_reason for r in collected if r.aborted_reason]
    if reasons:
        doc.aborted = True
        doc.flag("server_lost", "invalid", f"the run stopped early: {reasons[0]}")


def _finish(workload: Workload, config: PhaseConfig, doc: ResultDocument, guard: DatasetGuard) -> None:
    """The workload's closing checks (row counts, consistency) over a fresh connection, then the
    check of a load's data (``guard``); a server still restarting after the phase gets
    ``client.give_up_s`` to come back."""
    finisher = new_driver(config.engine, config.properties, 0)
    try:
        if _connect_within(finisher, float(config.properties.get("client.give_up_s") or 0)):
            workload.finish(finisher, config.workload_phase, doc)
            guard.after_load(finisher, doc)
        else:
            doc.flag(
                "finish_skipped",
                "warning",
                f"the server did not accept a connection within client.give_up_s after the phase "
                f"({finisher.endpoint()}): the workload's closing checks did not run",
            )
    finally:
        finisher.close()


def _connect_within(driver: Any, seconds: float) -> bool:
    """Connect, retrying for ``seconds`` (a phase with events may end while the server restarts);
    without a give-up time the first failure raises as before."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            driver.connect()
            return True
        except TargetUnreachable:
            if not seconds:
                raise
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.1)  # waiting for a restarting server, bounded by the deadline
