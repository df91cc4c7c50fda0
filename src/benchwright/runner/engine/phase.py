"""The parent side of one phase: set it up through a probe connection, start the worker processes,
release them together, collect their reports (with live progress) and flag what went wrong."""

from __future__ import annotations

import contextlib
import multiprocessing as mp
import os
import queue
import sys
import threading
import time
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from benchwright.results import ResultDocument
from benchwright.runner.drivers import new_driver
from benchwright.runner.engine.client_model import _wants_event_loop, default_processes
from benchwright.runner.engine.config import (
    LIVE_PUBLISH_S,
    NS,
    START_DELAY_NS,
    PhaseConfig,
    ProgressFn,
    WorkerReport,
)
from benchwright.runner.engine.document import build_document
from benchwright.runner.engine.periods import _check_period, _PeriodTracker, _PeriodUpdate
from benchwright.runner.engine.worker import _worker_main
from benchwright.runner.workloads.base import ThreadInfo, split, workload_class


def start_method() -> str:
    """How worker processes start. ``fork`` when that is safe (Linux, and this process runs no other
    thread that could hold a lock at the fork): the workers inherit the imported modules instead of
    paying a fresh interpreter and all imports each (about 0.5 s of CPU per worker, charged to the
    client's CPU per operation). Otherwise ``spawn``. ``BENCHWRIGHT_START_METHOD`` overrides."""
    forced = os.environ.get("BENCHWRIGHT_START_METHOD")
    if forced:
        return forced
    if sys.platform.startswith("linux") and threading.active_count() == 1:
        return "fork"
    return "spawn"


def run_phase(config: PhaseConfig, progress: ProgressFn | None = None) -> ResultDocument:
    """Set up, run and measure one phase; return its result document (partial if aborted).

    ``progress`` is called as (elapsed s, operations so far, current ops/s) about twice a second; a
    ``PeriodProgress`` also gets each reporting period's exact aggregates as the run goes."""
    live = _check_period(progress, config)
    workload = workload_class(config.workload)(config.properties)
    probe = new_driver(config.engine, config.properties, 0)
    probe.connect()  # raises TargetUnreachable naming the host before any worker starts
    try:
        workload.setup(probe, config.phase)
        server_version = probe.server_version()
        event_loop = (
            _wants_event_loop(workload, config)
            and probe.event_loop_channel() is not None
            and workload.wire_requests(config.phase, probe, ThreadInfo(0, 1, 0)) is not None
        )
    finally:
        probe.close()

    threads = max(1, config.threads)
    processes = min(threads, config.processes or default_processes(threads, event_loop))
    total = (
        config.operation_count
        if config.operation_count is not None
        else workload.operation_limit(config.phase)
    )
    max_seconds = config.max_seconds if config.max_seconds is not None else workload.time_limit(config.phase)
    config = PhaseConfig(
        **{**config.__dict__, "threads": threads, "processes": processes, "max_seconds": max_seconds}
    )
    assignment = [list(range(p, threads, processes)) for p in range(processes)]
    if total == 0:  # YCSB: operationcount=0 means "until maxexecutiontime"
        total = None
    limits = [[split(total, threads, t) if total is not None else None for t in ts] for ts in assignment]

    ctx: Any = mp.get_context(start_method())
    ready, reports = ctx.Queue(), ctx.Queue()
    start_queues = [ctx.Queue() for _ in range(processes)]
    stop = ctx.Event()
    counts = ctx.Array("q", processes, lock=False)
    workers = [
        ctx.Process(
            target=_worker_main,
            args=(
                config,
                p,
                assignment[p],
                limits[p],
                ready,
                start_queues[p],
                stop,
                counts,
                reports,
                live is not None,
            ),
            name=f"benchwright-worker-{p}",
            daemon=True,
        )
        for p in range(processes)
    ]
    for w in workers:
        w.start()
    try:
        failures = [err for _, err in (ready.get(timeout=120) for _ in workers) if err]
    except queue.Empty:
        failures = ["a worker process did not start within 120 s"]
    if failures:
        for q in start_queues:
            q.put(None)
        for w in workers:
            w.join(5)
        from benchwright.errors import TargetUnreachable

        raise TargetUnreachable(probe.endpoint(), failures[0].split(": ", 1)[-1])

    started_at = datetime.now(UTC)
    start_ns = time.perf_counter_ns() + START_DELAY_NS
    if config.start_at is not None:  # fan-out: every runner host releases its workers at one instant
        start_ns = max(start_ns, time.perf_counter_ns() + int((config.start_at - time.time()) * NS))
        started_at = max(started_at, datetime.fromtimestamp(config.start_at, UTC))  # the release instant
    for q in start_queues:
        q.put(start_ns)

    interrupted = False
    collected: list[WorkerReport] = []
    last_ops, last_t = 0, start_ns
    tracker = _PeriodTracker(live, config, processes) if live is not None else None
    try:
        while len(collected) < processes:
            try:
                item = reports.get(timeout=0.5 if tracker is None else LIVE_PUBLISH_S)
                if isinstance(item, _PeriodUpdate):
                    if tracker is not None:
                        tracker.receive(item)
                else:
                    collected.append(item)
            except queue.Empty:
                if not any(w.is_alive() for w in workers) and reports.empty():
                    break
            now = time.perf_counter_ns()
            if tracker is not None:
                tracker.emit((now - start_ns) / NS)
            if progress and now > start_ns and now - last_t >= 500_000_000:
                ops = sum(counts)
                progress((now - start_ns) / NS, ops, (ops - last_ops) * NS / (now - last_t))
                last_ops, last_t = ops, now
    except KeyboardInterrupt:
        interrupted = True
        stop.set()
        deadline = time.monotonic() + 10
        while len(collected) < processes and time.monotonic() < deadline:
            with contextlib.suppress(queue.Empty):
                item = reports.get(timeout=0.5)
                if not isinstance(item, _PeriodUpdate):  # no more progress once interrupted
                    collected.append(item)
    end_ns = time.perf_counter_ns()
    for w in workers:
        w.join(5)
        if w.is_alive():
            w.terminate()
    ended_at = datetime.now(UTC)
    runtime_s = max(1e-9, (max(end_ns, start_ns + 1) - start_ns) / NS)
    if collected:
        runtime_s = max(r.wall_s for r in collected)
    if tracker is not None and not interrupted and len(collected) == processes:
        tracker.emit(runtime_s, runtime_s)  # the periods that ended with the run

    measured = replace(config, processes=processes)  # the document names the processes that ran
    doc = build_document(
        measured, collected, started_at, ended_at, runtime_s, server_version, probe.endpoint()
    )
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
    if not doc.aborted:
        finisher = new_driver(config.engine, config.properties, 0)
        try:
            if _connect_within(finisher, float(config.properties.get("client.give_up_s") or 0)):
                workload.finish(finisher, config.phase, doc)
            else:
                doc.flag(
                    "finish_skipped",
                    "warning",
                    f"the server did not accept a connection within client.give_up_s after the phase "
                    f"({finisher.endpoint()}): the workload's closing checks did not run",
                )
        finally:
            finisher.close()
    return doc


def _connect_within(driver: Any, seconds: float) -> bool:
    """Connect, retrying for ``seconds`` (a phase with events may end while the server restarts);
    without a give-up time the first failure raises as before."""
    from benchwright.errors import TargetUnreachable

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
