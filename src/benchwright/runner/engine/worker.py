"""The worker process: connects its drivers, waits for the common start instant, runs its clients
(event loop, one thread or several), publishes progress and sends back one ``WorkerReport``."""

from __future__ import annotations

import contextlib
import os
import random
import resource
import signal
import threading
import time
from collections.abc import Iterator
from typing import Any

from benchwright.runner.drivers import new_driver
from benchwright.runner.engine.client_model import _event_loop_connections, _loop_class, alone_in_process
from benchwright.runner.engine.config import (
    ERROR_ABORT_S,
    LIVE_PUBLISH_S,
    NS,
    PUBLISH_S,
    WorkerReport,
)
from benchwright.runner.engine.periods import _SealedIntervals
from benchwright.runner.engine.thread_loop import _thread_loop
from benchwright.runner.event_loop import Connection
from benchwright.runner.measure import LatencyKind, Recorder
from benchwright.runner.plan import PhaseConfig
from benchwright.runner.workloads.base import Operation, ThreadInfo, Workload
from benchwright.runner.workloads.registry import workload_class

LAG_SAMPLE_S = 0.05


class _Lag:
    """Samples how late a ``LAG_SAMPLE_S`` sleep wakes up: a busy interpreter (GIL) or a starved CPU
    shows. Every 50 ms, not 10: each wake-up takes the GIL from the client loop, and at 10 ms the four
    samplers of a 4-process tpcb select-only run held 3.6% of the workers' CPU samples (perf, about
    0.6 us per select); the saturation guard's threshold (50 ms late) is seen as well either way."""

    def __init__(self) -> None:
        self.samples: list[float] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="lag-sampler", daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set() and len(self.samples) < 400_000:
            before = time.perf_counter()
            time.sleep(LAG_SAMPLE_S)
            self.samples.append(max(0.0, (time.perf_counter() - before - LAG_SAMPLE_S) * 1000))

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> float:
        self._stop.set()
        self._thread.join()
        if not self.samples:
            return 0.0
        ordered = sorted(self.samples)
        return ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]


PR_SET_TIMERSLACK = 29  # prctl(2)


def _precise_sleeps() -> None:
    """A paced client sleeps until each request's intended start, and Linux lets a sleep end up to
    the thread's timer slack (50 us by default) late: a latency taken from the intended start would
    carry that oversleep of the runner's own (2.5% of a 2 ms request). 1 us instead, for this
    process and the threads it starts; nothing changes where the call is not available."""
    with contextlib.suppress(Exception):
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_TIMERSLACK, 1, 0, 0, 0)


def _thread_wait_ns() -> int:
    """How long the calling thread has been runnable but waiting for a core (Linux's schedstat, its
    second field); 0 where the kernel does not say. A client starved of CPU by other processes does
    not show in its own CPU time: this is how the saturation guard still sees it."""
    try:
        with open("/proc/thread-self/schedstat", encoding="ascii") as stat:
            return int(stat.read().split()[1])
    except (OSError, ValueError, IndexError):
        return 0


def _worker_main(  # pylint: disable=too-many-positional-arguments  # process entry point; issue 10 item 6
    config: PhaseConfig,
    process_index: int,
    thread_indexes: list[int],
    thread_limits: list[int | None],
    ready: Any,
    start_at: Any,
    stop: Any,
    progress: Any,
    reports: Any,
    live: bool = False,
    parent: tuple[dict[str, str], str] | None = None,
) -> None:
    """Entry point of one worker process. ``live``: also put a ``_PeriodUpdate`` on ``reports``
    whenever intervals are sealed by every thread of the process (before its ``WorkerReport``).
    ``parent``: the parent's environment and working directory (processes.parent_state)."""
    if parent is not None:
        env, cwd = parent
        os.environ.clear()
        os.environ.update(env)
        os.chdir(cwd)
    # A forked worker inherits the parent's signal handlers: start from what a fresh interpreter has.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    workload = workload_class(config.workload)(config.properties)
    workload.warm_up()
    drivers = _connect_drivers(config, thread_indexes)
    if isinstance(drivers, str):
        ready.put((process_index, drivers))
        return
    ready.put((process_index, None))
    start_ns = start_at.get()
    if start_ns is None:  # the parent gave up (another worker failed to connect)
        _close_all(drivers)
        return

    if config.target:
        _precise_sleeps()
    clients = _Clients(config, workload, drivers, thread_indexes, thread_limits, start_ns, stop)
    clients.prepare()  # each client's stream of requests, with what the workload makes up front
    lag = _Lag()
    lag.start()
    cpu0 = os.times()  # the measured window only: imports, connecting and preparing are not charged
    publisher = _Publisher(process_index, clients, progress, reports, live)
    publisher.start()
    waited0 = _thread_wait_ns()
    event_loop = clients.run()
    clients.waited_ns[-1] = _thread_wait_ns() - waited0  # the loop, or the one client run here
    wall = clients.seal_all()
    publisher.finish()
    recorder = clients.merged()
    cpu1 = os.times()
    progress[process_index] = recorder.total_operations()
    lag_p99 = lag.stop()
    _close_all(drivers)
    reports.put(
        WorkerReport(
            process_index=process_index,
            recorder=recorder.export(),
            cpu_user_s=cpu1.user - cpu0.user,
            cpu_system_s=cpu1.system - cpu0.system,
            cpu_wait_s=sum(clients.waited_ns) / NS,
            wall_s=wall,
            peak_rss_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            lag_p99_ms=lag_p99,
            error_kinds=clients.errors,
            failure_windows=clients.failure_windows(),
            aborted_reason=clients.reasons[0] if clients.reasons else None,
            event_loop=event_loop,
            workload_figures=workload.worker_figures(),
        )
    )


def _connect_drivers(config: PhaseConfig, thread_indexes: list[int]) -> list[Any] | str:
    """One connected driver per client, or the first error (the drivers already open are closed)."""
    drivers: list[Any] = []
    try:
        for t in thread_indexes:
            driver = new_driver(config.engine, config.properties, t)
            driver.connect()
            drivers.append(driver)
    except Exception as exc:
        _close_all(drivers)
        return f"{exc}"
    return drivers


def _close_all(drivers: list[Any]) -> None:
    for d in drivers:
        with contextlib.suppress(Exception):
            d.close()


class _Clients:
    """One worker process's clients and what they record: a recorder per client (no shared state on
    the hot path; folded together after the join), the pacing schedule, the error counts, the runs
    of failures and the reasons any client gave up."""

    def __init__(
        self,
        config: PhaseConfig,
        workload: Workload,
        drivers: list[Any],
        thread_indexes: list[int],
        thread_limits: list[int | None],
        start_ns: int,
        stop: Any,
    ) -> None:
        self.config = config
        self.workload = workload
        self.drivers = drivers
        self.thread_indexes = thread_indexes
        self.thread_limits = thread_limits
        self.start_ns = start_ns
        self.stop = stop
        latency_kind: LatencyKind = "response_time" if config.target else "service_time"
        interval_ns = int(config.interval_s * NS)
        self.recorders = [Recorder(start_ns, latency_kind, interval_ns) for _ in thread_indexes]
        self.deadline = start_ns + int(config.max_seconds * NS) if config.max_seconds else 1 << 62
        self.pace_ns = int(NS * config.threads / config.target) if config.target else 0
        # A forked worker inherits the parent's random state: draw a fresh seed from the OS instead.
        self.seed = config.seed if config.seed is not None else random.SystemRandom().randrange(1 << 30)
        self.errors: dict[str, int] = {}
        self.reasons: list[str] = []
        self.give_up_s = float(config.properties.get("client.give_up_s") or ERROR_ABORT_S)
        self.windows: dict[int, list[tuple[int, int | None, int]]] = {t: [] for t in thread_indexes}
        self.stopped_ns = [0] * len(thread_indexes)  # per client: when it stopped, after the start instant
        # per client thread (one slot more: the thread that runs the loop or a lone client): how long
        # it was runnable but waiting for a core
        self.waited_ns = [0] * (len(thread_indexes) + 1)
        self.connections: list[Connection] | None = None  # set by prepare: the event loop's clients
        self.operations: list[Iterator[Operation]] = []  # or each thread's operations

    def prepare(self) -> None:
        """Make every client's stream of requests (event-loop connections, or each thread's
        operations) before the measured window: what a workload makes once per client (YCSB's value
        pool, redis-bench's key digits) is setup, as a C tool's buffers are, not the work of the
        first requests. The requests themselves are still drawn as the clients run."""
        c = self.config
        self.connections = _event_loop_connections(
            self.workload, c, self.drivers, self.thread_indexes, self.thread_limits, self.seed
        )
        if self.connections is None:
            self.operations = [
                self.workload.operations(
                    c.workload_phase,
                    self.drivers[slot],
                    ThreadInfo(
                        index=t,
                        count=c.threads,
                        seed=self.seed * 7919 + t,
                        alone=alone_in_process(c, self.thread_indexes),
                    ),
                )
                for slot, t in enumerate(self.thread_indexes)
            ]

    def run(self) -> str:
        """Run every client to its end (``prepare`` first); the event loop's model when they shared
        one (``EventLoop.model``), else ""."""
        connections = self.connections
        if connections is not None:
            loop = _loop_class(self.drivers[0])(
                connections,
                self.recorders[0],
                self.deadline,
                self.stop,
                self.errors,
                self.give_up_s,
                self.windows,
            )
            for unused in self.recorders[1:]:
                unused.seal()  # the loop records into recorders[0] only: these hold no interval back
            self._gave_up(loop.run(self.start_ns))
            return loop.model
        elif len(self.thread_indexes) == 1:
            self.run_thread(0)  # one thread per process: run it here, no hand-offs between threads
        else:
            threads = [
                threading.Thread(target=self._timed_thread, args=(i,), name=f"worker-{t}")
                for i, t in enumerate(self.thread_indexes)
            ]
            for th in threads:
                th.start()
            for th in threads:
                th.join()
        return ""

    def _timed_thread(self, slot: int) -> None:
        waited0 = _thread_wait_ns()
        try:
            self.run_thread(slot)
        finally:
            self.waited_ns[slot] = _thread_wait_ns() - waited0

    def run_thread(self, slot: int) -> None:
        """One client on the thread model (its loop gets every value it needs as a local)."""
        t = self.thread_indexes[slot]
        ops = self.operations[slot]
        pace_ns = self.pace_ns
        try:
            reason = _thread_loop(
                ops,
                self.recorders[slot],
                self.drivers[slot].recover,
                self.thread_limits[slot],
                self.deadline,
                self.start_ns + (pace_ns * slot // max(1, len(self.thread_indexes)) if pace_ns else 0),
                pace_ns,
                self.stop,
                self.errors,
                self.give_up_s,
                self.windows[t],
            )
        finally:
            self.stopped_ns[slot] = time.perf_counter_ns() - self.start_ns
            self.recorders[slot].seal()  # this client's last interval is final: live progress may use it
        self._gave_up(reason)

    def _gave_up(self, reason: str | None) -> None:
        if reason:
            self.reasons.append(reason)
            self.stop.set()  # a dead server: stop everyone, keep what was measured

    def seal_all(self) -> float:
        """Every client has stopped, however it ran: seal its recorder and note when it stopped.
        Returns the wall time since the common start instant."""
        ended_ns = time.perf_counter_ns() - self.start_ns
        for slot, finished in enumerate(self.recorders):
            finished.seal()
            self.stopped_ns[slot] = self.stopped_ns[slot] or ended_ns
        return max(1e-9, (time.perf_counter_ns() - self.start_ns) / NS)

    def total_operations(self) -> int:
        return sum(r.total_operations() for r in self.recorders)

    def merged(self) -> Recorder:
        """Every client's recorder folded into the first."""
        recorder = self.recorders[0]
        for other in self.recorders[1:]:
            recorder.absorb(other)
        return recorder

    def failure_windows(self) -> list[tuple[int, float, float | None, int]]:
        """Each client's runs of failures, in seconds after the start instant."""
        start_ns = self.start_ns
        return [
            (t, (a - start_ns) / NS, None if b is None else (b - start_ns) / NS, n)
            for t, runs in self.windows.items()
            for a, b, n in runs
        ]


class _Publisher:
    """A thread that publishes the process's operation count (and, ``live``, the intervals every
    client has sealed) until ``finish``; its last round runs after every client has stopped."""

    def __init__(
        self, process_index: int, clients: _Clients, progress: Any, reports: Any, live: bool
    ) -> None:
        self.process_index = process_index
        self.clients = clients
        self.progress = progress
        self.reports = reports
        self.live = live
        self.sealed = _SealedIntervals(process_index, clients.recorders, clients.stopped_ns)
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._publish, daemon=True)

    def start(self) -> None:
        self.thread.start()

    def finish(self) -> None:
        self.done.set()
        self.thread.join()

    def _publish(self) -> None:
        while True:
            finished = self.done.is_set()  # read first: the last round then sees every client sealed
            self.progress[self.process_index] = self.clients.total_operations()
            if self.live:
                update = self.sealed.collect()
                if update is not None:
                    self.reports.put(update)
            if finished:
                return
            self.done.wait(LIVE_PUBLISH_S if self.live else PUBLISH_S)
