"""The parent's handle on a phase's worker processes: start them, wait until each has connected,
release them together at one start instant, collect their reports (passing live progress on) and
make sure none outlives the phase. Kept apart from ``phase`` so that module reads as the phase's
steps, and the queues, events and timeouts of multiprocessing live in one place."""

from __future__ import annotations

import contextlib
import multiprocessing as mp
import os
import queue
import sys
import threading
import time
from datetime import UTC, datetime
from typing import Any

from benchwright.errors import TargetUnreachable
from benchwright.runner.engine.config import (
    LIVE_PUBLISH_S,
    NS,
    START_DELAY_NS,
    ProgressFn,
    WorkerReport,
)
from benchwright.runner.engine.periods import _PeriodTracker, _PeriodUpdate
from benchwright.runner.engine.worker import _worker_main
from benchwright.runner.plan import PhaseConfig

READY_TIMEOUT_S = 120  # a worker that has not connected by then counts as failed to start
PROGRESS_EVERY_NS = 500_000_000  # the plain progress callback: about twice a second


# What a forkserver imports once, so that each worker it forks starts with them loaded.
FORKSERVER_PRELOAD = ["benchwright.runner.engine.worker", "benchwright.runner.drivers"]


def start_method() -> str:
    """How worker processes start. ``fork`` when that is safe (Linux, and this process runs no other
    thread that could hold a lock at the fork): the workers inherit the imported modules instead of
    paying a fresh interpreter and all imports each (about 0.5 s of CPU per worker, charged to the
    client's CPU per operation). With other threads on Linux (an embedding service, a test runner's
    I/O thread) ``forkserver``: one single-threaded server that imported the workers' modules once
    forks each of them. Elsewhere ``spawn``. ``BENCHWRIGHT_START_METHOD`` overrides."""
    forced = os.environ.get("BENCHWRIGHT_START_METHOD")
    if forced:
        return forced
    if sys.platform.startswith("linux"):
        return "fork" if threading.active_count() == 1 else "forkserver"
    return "spawn"


def parent_state() -> tuple[dict[str, str], str]:
    """The environment and working directory a worker takes from the phase's parent. A spawned or
    forked worker has them already; a forkserver's worker has the server's, which started with the
    first phase and does not follow later changes (a test setting BENCHWRIGHT_COMPILED_LOOP)."""
    return dict(os.environ), os.getcwd()


class _RateProgress:
    """Calls the plain progress callback with the operations so far and the rate since the last call,
    from the counts the workers publish (shared memory, no locks)."""

    def __init__(self, progress: ProgressFn | None, counts: Any, start_ns: int) -> None:
        self.progress = progress
        self.counts = counts
        self.start_ns = start_ns
        self.last_ops, self.last_t = 0, start_ns

    def report(self, now: int) -> None:
        if not self.progress or now <= self.start_ns or now - self.last_t < PROGRESS_EVERY_NS:
            return
        ops = sum(self.counts)
        self.progress((now - self.start_ns) / NS, ops, (ops - self.last_ops) * NS / (now - self.last_t))
        self.last_ops, self.last_t = ops, now


class WorkerPool:
    """The worker processes of one phase. ``collected`` holds the reports that arrived;
    ``interrupted`` says the parent got a KeyboardInterrupt while waiting for them."""

    def __init__(
        self,
        config: PhaseConfig,
        assignment: list[list[int]],
        limits: list[list[int | None]],
        live: bool,
    ) -> None:
        method = start_method()
        ctx: Any = mp.get_context(method)
        if method == "forkserver":
            ctx.set_forkserver_preload(FORKSERVER_PRELOAD)  # read when the server starts (once)
        self.ready, self.reports = ctx.Queue(), ctx.Queue()
        self.start_queues = [ctx.Queue() for _ in assignment]
        self.stop = ctx.Event()
        self.counts = ctx.Array("q", len(assignment), lock=False)
        self.live = live
        self.processes = [
            ctx.Process(
                target=_worker_main,
                args=(
                    config,
                    p,
                    assignment[p],
                    limits[p],
                    self.ready,
                    self.start_queues[p],
                    self.stop,
                    self.counts,
                    self.reports,
                    live,
                    parent_state(),
                ),
                name=f"benchwright-worker-{p}",
                daemon=True,
            )
            for p in range(len(assignment))
        ]
        self.collected: list[WorkerReport] = []
        self.interrupted = False

    def start(self, endpoint: str) -> None:
        """Start every worker and wait until each has connected its drivers; if one could not, stop
        them all and raise ``TargetUnreachable`` naming ``endpoint``."""
        for w in self.processes:
            w.start()
        try:
            failures = [
                err for _, err in (self.ready.get(timeout=READY_TIMEOUT_S) for _ in self.processes) if err
            ]
        except queue.Empty:
            failures = [f"a worker process did not start within {READY_TIMEOUT_S} s"]
        if failures:
            for q in self.start_queues:
                q.put(None)
            for w in self.processes:
                w.join(5)
            raise TargetUnreachable(endpoint, failures[0].split(": ", 1)[-1])

    def release(self, start_at: float | None) -> tuple[datetime, int]:
        """Give every worker the common start instant; return it as wall-clock time and as
        ``perf_counter_ns``. ``start_at`` (fan-out): every runner host releases at that instant."""
        started_at = datetime.now(UTC)
        start_ns = time.perf_counter_ns() + START_DELAY_NS
        if start_at is not None:
            start_ns = max(start_ns, time.perf_counter_ns() + int((start_at - time.time()) * NS))
            started_at = max(started_at, datetime.fromtimestamp(start_at, UTC))  # the release instant
        for q in self.start_queues:
            q.put(start_ns)
        return started_at, start_ns

    def collect(self, start_ns: int, progress: ProgressFn | None, tracker: _PeriodTracker | None) -> None:
        """Wait for every worker's report, passing progress on; on KeyboardInterrupt stop the workers
        and keep what they send within 10 s."""
        try:
            self._collect(start_ns, progress, tracker)
        except KeyboardInterrupt:
            self.interrupted = True
            self._drain_after_interrupt()

    def _collect(self, start_ns: int, progress: ProgressFn | None, tracker: _PeriodTracker | None) -> None:
        rate = _RateProgress(progress, self.counts, start_ns)
        while len(self.collected) < len(self.processes):
            if not self._receive(tracker):
                break
            now = time.perf_counter_ns()
            if tracker is not None:
                tracker.emit((now - start_ns) / NS)
            rate.report(now)

    def _receive(self, tracker: _PeriodTracker | None) -> bool:
        """Take what a worker sent, if anything; False once every worker is gone and nothing is left."""
        try:
            item = self.reports.get(timeout=0.5 if tracker is None else LIVE_PUBLISH_S)
        except queue.Empty:
            return any(w.is_alive() for w in self.processes) or not self.reports.empty()
        if not isinstance(item, _PeriodUpdate):
            self.collected.append(item)
        elif tracker is not None:
            tracker.receive(item)
        return True

    def _drain_after_interrupt(self) -> None:
        self.stop.set()
        deadline = time.monotonic() + 10
        while len(self.collected) < len(self.processes) and time.monotonic() < deadline:
            with contextlib.suppress(queue.Empty):
                item = self.reports.get(timeout=0.5)
                if not isinstance(item, _PeriodUpdate):  # no more progress once interrupted
                    self.collected.append(item)

    def join(self) -> None:
        """Wait for every worker to exit; one that does not within 5 s is terminated."""
        for w in self.processes:
            w.join(5)
            if w.is_alive():
                w.terminate()
