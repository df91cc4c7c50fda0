"""Runs one phase of a workload: worker processes x threads, pacing, limits, merging, the document.

Layout: the parent process sets the phase up (schema), starts ``processes`` worker processes, each
opening one driver per thread, and releases them all at one start instant. Every thread pulls
operations from the workload, times each call (the measuring wrapper), and stops at its share of
the operation count, the time limit, a stop request or a dead server. Each worker sends back an
exported Recorder; the parent merges them exactly and builds the ResultDocument.

Live progress (``PeriodProgress``): a publisher thread in each worker sends the intervals every
one of its threads has moved past (summed over threads, read without locks: the hot path never
touches a sealed interval again); the parent sums them into reporting periods and calls back.

Pacing (``target``): each thread owns ``target / threads`` of the rate and a fixed schedule; an
operation's latency runs from its scheduled start, so a stall in the server is charged to every
operation that should have been sent during it (no coordinated omission).
"""

from __future__ import annotations

import contextlib
import multiprocessing as mp
import os
import platform
import queue
import random
import resource
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

from benchwright import __version__
from benchwright.errors import AllOperationsFailed, RunAborted, SpecError
from benchwright.results import (
    ClientStats,
    FailureWindow,
    HostFacts,
    IntervalSample,
    Measurement,
    OperationSummary,
    ResultDocument,
    redact,
)
from benchwright.runner.drivers import new_driver
from benchwright.runner.event_loop import Connection, EventLoop
from benchwright.runner.measure import (
    SEALED_ALL,
    LatencyKind,
    PeriodTotals,
    Recorder,
    RecorderExport,
    Status,
    encode_histogram,
)
from benchwright.runner.workloads.base import Operation, ThreadInfo, Workload, split, workload_class

NS = 1_000_000_000
START_DELAY_NS = 200_000_000  # every worker is connected and waiting before the start instant
ERROR_ABORT_S = 3.0  # a thread whose every operation failed for this long gives up
SATURATION_CPU_SHARE = 0.90
SATURATION_LAG_MS = 50.0
ProgressFn = Callable[[float, int, float], None]  # (elapsed s, operations so far, current ops/s)
PERIOD_GRACE_S = 1.0  # a period still incomplete this long after its end is reported as it stands
PUBLISH_S, LIVE_PUBLISH_S = 0.25, 0.1  # how often a worker publishes its count / its sealed intervals


@dataclass(frozen=True)
class Period:
    """One reporting period of a running phase: the operations that ended in [start_s, end_s) after
    the common start instant, with exact latency sums (``totals``: mean, stddev, lag, histogram).

    ``exact`` is False only when a worker was so late (a thread stuck in one long operation) that the
    period was reported ``PERIOD_GRACE_S`` after its end without all of it; its missing operations are
    then counted in the next reported period, as pgbench counts a transaction when it completes."""

    index: int
    start_s: float
    end_s: float
    totals: PeriodTotals
    exact: bool
    latency_kind: LatencyKind
    threads: int  # threads still running at the end of the period (sysbench's "thds")

    @property
    def seconds(self) -> float:
        return self.end_s - self.start_s


class PeriodProgress:
    """A progress callback that also hands over each reporting period's aggregates, live.

    Pass one wherever a ``ProgressFn`` goes (``run_phase``, ``commands.sql.run_and_write``): it is
    still called as ``(elapsed s, operations so far, current ops/s)`` about twice a second (forwarded
    to ``on_progress``), and ``on_period`` gets one ``Period`` per ``every_s`` seconds, in order, as
    soon as every worker has finished with it. ``every_s`` must be a whole number of the phase's
    intervals (``PhaseConfig.interval_s``, 1 s by default): periods are unions of those intervals,
    so they match the result document's interval series exactly."""

    def __init__(
        self, every_s: float, on_period: Callable[[Period], None], on_progress: ProgressFn | None = None
    ) -> None:
        if not every_s > 0:
            raise SpecError("progress", f"the reporting period must be positive, got {every_s}")
        self.every_s = every_s
        self.on_period = on_period
        self.on_progress = on_progress

    def __call__(self, elapsed_s: float, operations: int, rate: float) -> None:
        if self.on_progress is not None:
            self.on_progress(elapsed_s, operations, rate)


@dataclass
class PhaseConfig:
    """Everything a worker process needs; plain data so it pickles."""

    workload: str
    phase: str
    engine: str
    properties: dict[str, str]
    threads: int = 1
    processes: int | None = None  # default: min(threads, 2 x cores)
    target: float | None = None  # total operations per second, None = as fast as possible
    operation_count: int | None = None  # None: the workload decides (or time-bounded)
    max_seconds: float | None = None
    interval_s: float = 1.0
    seed: int | None = None
    run_id: str | None = None
    start_at: float | None = None  # wall-clock epoch seconds: several runner hosts start together


@dataclass
class WorkerReport:
    process_index: int
    recorder: RecorderExport
    cpu_user_s: float
    cpu_system_s: float
    wall_s: float
    peak_rss_mb: float
    lag_p99_ms: float
    error_kinds: dict[str, int] = field(default_factory=dict)
    # runs of failed operations: (client, first failure s, next success s or None, failures)
    failure_windows: list[tuple[int, float, float | None, int]] = field(default_factory=list)
    aborted_reason: str | None = None
    setup_error: str | None = None
    event_loop: bool = False  # its connections shared one event loop instead of a thread each


# ---------------------------------------------------------------- inside a worker process
class _Lag:
    """Samples how late a 10 ms sleep wakes up: a busy interpreter (GIL) or a starved CPU shows."""

    def __init__(self) -> None:
        self.samples: list[float] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="lag-sampler", daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set() and len(self.samples) < 400_000:
            before = time.perf_counter()
            time.sleep(0.01)
            self.samples.append(max(0.0, (time.perf_counter() - before - 0.01) * 1000))

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> float:
        self._stop.set()
        self._thread.join()
        if not self.samples:
            return 0.0
        ordered = sorted(self.samples)
        return ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]


def _thread_loop(
    ops: Iterator[Operation],
    recorder: Recorder,
    recover: Callable[[], None],
    limit: int | None,
    deadline_ns: int,
    start_ns: int,
    pace_ns: int,
    stop: Any,
    errors: dict[str, int],
    give_up_s: float = ERROR_ABORT_S,
    windows: list[tuple[int, int | None, int]] | None = None,
) -> str | None:
    """Run one thread's operations; return a reason when it gave up because everything failed.

    ``windows`` receives each run of failures as (end of its first failed operation, end of the next
    successful one or None, failed operations): bookkeeping on the error path only.

    The hot path: one ``perf_counter_ns`` on each side of the driver call, one ``record``; the stop
    flag is polled every 32 operations and the recorder's buffers are folded every 65536."""
    if limit == 0:  # more threads than operations: this one has nothing to do
        return None
    perf = time.perf_counter_ns
    record = recorder.record
    idle_until = recorder.idle_until
    error = Status.ERROR
    next_ns = start_ns
    failing_since = 0
    streak = 0
    give_up_ns = int(give_up_s * NS)
    now = perf()
    if now < start_ns:
        time.sleep((start_ns - now) / NS)
    for done, (name, call) in enumerate(ops, 1):
        if pace_ns:
            now = perf()
            if next_ns > now:
                idle_until(next_ns)  # nothing ends before next_ns: lets live progress move on
                time.sleep((next_ns - now) / NS)
            intended = next_ns
            next_ns += pace_ns
            actual = perf()
            try:
                status = call()
            except Exception as exc:
                status = error
                _count_error(errors, name, exc, recover)
            end = perf()
            record(name, intended, end, status, actual)
        else:
            actual = perf()
            try:
                status = call()
            except Exception as exc:
                status = error
                _count_error(errors, name, exc, recover)
            end = perf()
            record(name, actual, end, status)
        if status is error:
            streak += 1
            if not failing_since:
                failing_since = end
            elif end - failing_since > give_up_ns:
                _close_window(windows, failing_since, None, streak)
                return f"every operation failed for {give_up_s:.0f} s (last: {name})"
        elif failing_since:
            _close_window(windows, failing_since, end, streak)
            failing_since = streak = 0
        if done == limit or end >= deadline_ns:
            _close_window(windows, failing_since, None, streak)
            return None
        if not done & 31:
            if stop.is_set():
                _close_window(windows, failing_since, None, streak)
                return None
            if not done & 0xFFFF:
                recorder.flush()  # keeps the pending buffers small when intervals are long
    _close_window(windows, failing_since, None, streak)
    return None


def _close_window(
    windows: list[tuple[int, int | None, int]] | None, since: int, until: int | None, errors: int
) -> None:
    if windows is not None and since:
        windows.append((since, until, errors))


@dataclass
class _PeriodUpdate:
    """Worker -> parent: intervals every thread of one process is done with, summed over threads."""

    process_index: int
    sealed_below: int  # every interval below this index is final in that process (SEALED_ALL: done)
    intervals: dict[int, tuple[Any, ...]]  # index -> PeriodTotals.to_wire(), non-empty ones only
    stopped_s: list[float]  # when each of its stopped threads stopped, after the start instant


class _SealedIntervals:
    """The worker side of live progress. Runs on the publisher thread: it only reads buckets the
    worker threads have sealed (they never touch those again), so the hot path takes no lock."""

    def __init__(self, process_index: int, recorders: list[Recorder], stopped_ns: list[int]) -> None:
        self.process_index = process_index
        self.recorders = recorders
        self.stopped_ns = stopped_ns
        self.sent_below = 0
        self.done = False

    def collect(self) -> _PeriodUpdate | None:
        """What was sealed since the last call (None: nothing new)."""
        if self.done:
            return None
        sealed = min(r.sealed_below for r in self.recorders)
        stop = sealed
        if sealed == SEALED_ALL:
            self.done = True
            stop = max(r.last_interval() for r in self.recorders) + 1
        elif sealed <= self.sent_below:
            return None
        intervals = {}
        for index in range(self.sent_below, stop):
            totals = PeriodTotals()
            for recorder in self.recorders:
                bucket = recorder.sealed_bucket(index)
                if bucket is not None:
                    totals.add_bucket(bucket)
            if totals.counts:
                intervals[index] = totals.to_wire()
        self.sent_below = max(self.sent_below, stop)
        stopped = [ns / NS for ns in self.stopped_ns if ns]
        return _PeriodUpdate(self.process_index, sealed, intervals, stopped)


def _count_error(errors: dict[str, int], name: str, exc: Exception, recover: Callable[[], None]) -> None:
    kind = f"{name}:{type(exc).__name__}"
    errors[kind] = errors.get(kind, 0) + 1
    with contextlib.suppress(Exception):
        recover()


def _worker_main(
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
) -> None:
    """Entry point of one worker process. ``live``: also put a ``_PeriodUpdate`` on ``reports``
    whenever intervals are sealed by every thread of the process (before its ``WorkerReport``)."""
    # A forked worker inherits the parent's signal handlers: start from what a fresh interpreter has.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    workload = workload_class(config.workload)(config.properties)
    drivers = []
    try:
        for t in thread_indexes:
            driver = new_driver(config.engine, config.properties, t)
            driver.connect()
            drivers.append(driver)
    except Exception as exc:
        for d in drivers:
            with contextlib.suppress(Exception):
                d.close()
        ready.put((process_index, f"{exc}"))
        return
    ready.put((process_index, None))
    start_ns = start_at.get()
    if start_ns is None:  # the parent gave up (another worker failed to connect)
        for d in drivers:
            d.close()
        return

    latency_kind: LatencyKind = "response_time" if config.target else "service_time"
    interval_ns = int(config.interval_s * NS)
    # One recorder per thread: no shared state on the hot path; folded together after the join.
    recorders = [Recorder(start_ns, latency_kind, interval_ns) for _ in thread_indexes]
    deadline = start_ns + int(config.max_seconds * NS) if config.max_seconds else 1 << 62
    pace_ns = int(NS * config.threads / config.target) if config.target else 0
    # A forked worker inherits the parent's random state: draw a fresh seed from the OS instead.
    seed = config.seed if config.seed is not None else random.SystemRandom().randrange(1 << 30)
    errors: dict[str, int] = {}
    reasons: list[str] = []
    give_up_s = float(config.properties.get("client.give_up_s") or ERROR_ABORT_S)
    windows: dict[int, list[tuple[int, int | None, int]]] = {t: [] for t in thread_indexes}
    stopped_ns = [0] * len(thread_indexes)  # per thread: when it stopped, after the start instant

    def run_thread(slot: int) -> None:
        t = thread_indexes[slot]
        info = ThreadInfo(index=t, count=config.threads, seed=seed * 7919 + t)
        ops = workload.operations(config.phase, drivers[slot], info)
        try:
            reason = _thread_loop(
                ops,
                recorders[slot],
                drivers[slot].recover,
                thread_limits[slot],
                deadline,
                start_ns + (pace_ns * slot // max(1, len(thread_indexes)) if pace_ns else 0),
                pace_ns,
                stop,
                errors,
                give_up_s,
                windows[t],
            )
        finally:
            stopped_ns[slot] = time.perf_counter_ns() - start_ns
            recorders[slot].seal()  # this thread's last interval is final: live progress may use it
        if reason:
            reasons.append(reason)
            stop.set()  # a dead server: stop everyone, keep what was measured

    def total_operations() -> int:
        return sum(r.total_operations() for r in recorders)

    lag = _Lag()
    lag.start()
    cpu0 = os.times()  # the measured window only: imports and connecting are not charged

    sealed = _SealedIntervals(process_index, recorders, stopped_ns)

    def publish() -> None:
        while True:
            finished = done.is_set()  # read first: the last round then sees every thread sealed
            progress[process_index] = total_operations()
            if live:
                update = sealed.collect()
                if update is not None:
                    reports.put(update)
            if finished:
                return
            done.wait(LIVE_PUBLISH_S if live else PUBLISH_S)

    done = threading.Event()
    publisher = threading.Thread(target=publish, daemon=True)
    publisher.start()
    connections = _event_loop_connections(workload, config, drivers, thread_indexes, thread_limits, seed)
    if connections is not None:
        loop = _loop_class(drivers[0])(connections, recorders[0], deadline, stop, errors, give_up_s, windows)
        for unused in recorders[1:]:
            unused.seal()  # the loop records into recorders[0] only: these hold no interval back
        reason = loop.run(start_ns)
        if reason:
            reasons.append(reason)
            stop.set()
    elif len(thread_indexes) == 1:
        run_thread(0)  # one thread per process: run it here, no hand-offs between threads
    else:
        threads = [
            threading.Thread(target=run_thread, args=(i,), name=f"worker-{t}")
            for i, t in enumerate(thread_indexes)
        ]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
    ended_ns = time.perf_counter_ns() - start_ns
    for slot, finished in enumerate(recorders):  # every client has stopped, however it ran
        finished.seal()
        stopped_ns[slot] = stopped_ns[slot] or ended_ns
    wall = max(1e-9, (time.perf_counter_ns() - start_ns) / NS)  # from the common start instant
    done.set()
    publisher.join()
    recorder = recorders[0]
    for other in recorders[1:]:
        recorder.absorb(other)
    cpu1 = os.times()
    progress[process_index] = recorder.total_operations()
    lag_p99 = lag.stop()
    for d in drivers:
        with contextlib.suppress(Exception):
            d.close()
    reports.put(
        WorkerReport(
            process_index=process_index,
            recorder=recorder.export(),
            cpu_user_s=cpu1.user - cpu0.user,
            cpu_system_s=cpu1.system - cpu0.system,
            wall_s=wall,
            peak_rss_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            lag_p99_ms=lag_p99,
            error_kinds=errors,
            failure_windows=[
                (t, (a - start_ns) / NS, None if b is None else (b - start_ns) / NS, n)
                for t, runs in windows.items()
                for a, b, n in runs
            ],
            aborted_reason=reasons[0] if reasons else None,
            event_loop=connections is not None,
        )
    )


def _event_loop_connections(
    workload: Any,
    config: PhaseConfig,
    drivers: list[Any],
    thread_indexes: list[int],
    thread_limits: list[int | None],
    seed: int,
) -> list[Connection] | None:
    """This process's clients as event-loop connections, or None to run a thread each: when the
    phase is paced (threads keep the schedules), ``client.model=threads`` asks for threads, the
    workload has no wire requests for the driver or a driver lends no channel (Redis over TLS,
    MySQL)."""
    if not _wants_event_loop(workload, config):
        return None
    connections = []
    for slot, t in enumerate(thread_indexes):
        info = ThreadInfo(index=t, count=config.threads, seed=seed * 7919 + t)
        driver = drivers[slot]
        if driver.event_loop_channel() is None:
            return None
        requests = workload.wire_requests(config.phase, driver, info)
        if requests is None:
            return None
        connection = Connection(_channel_of(driver), driver.drop_channel, requests, thread_limits[slot])
        connection.index = t
        connections.append(connection)
    return connections


def _loop_class(driver: Any) -> type[EventLoop]:
    """The loop that speaks the driver's channel: RESP over a socket, or libpq's non-blocking API."""
    from benchwright.runner.event_loop_pq import PqChannel, PqEventLoop

    return PqEventLoop if isinstance(driver.event_loop_channel(), PqChannel) else EventLoop


def _wants_event_loop(workload: Any, config: PhaseConfig) -> bool:
    """The phase could run on event loops, if its drivers lend channels."""
    return (
        not config.target
        and config.properties.get("client.model", "auto") != "threads"
        and type(workload).wire_requests is not Workload.wire_requests
    )


def _channel_of(driver: Any) -> Callable[[], Any]:
    def open_channel() -> Any:
        channel = driver.event_loop_channel()
        assert channel is not None, "a driver that lent a channel once lends one again"
        return channel

    return open_channel


# ---------------------------------------------------------------- in the parent
PROCESSES_PER_CORE = 2
CLIENTS_PER_LOOP = 50  # connections one event-loop process drives before the default adds another


def default_processes(threads: int, event_loop: bool = False) -> int:
    """Two worker processes per core for threads: threads in one process queue for the GIL, and
    measured here (4 clients, 2 cores) PostgreSQL point selects cost 14 us of client CPU with 4
    processes against 23 us with 2, while Redis GETs cost the same either way
    (benchmarks/bench_ycsb.py --only split). Event loops switch nothing and get cheaper the more
    connections share a wake-up, so one process drives up to ``CLIENTS_PER_LOOP`` connections, as
    redis-benchmark's one thread drives its 50 clients: YCSB C on Redis with 4 clients cost 24 us of
    client CPU per GET in one process against 62 us in two, on a busy 2-core host; redis-bench with
    50 clients 28-30 us against 33 us. More connections get more processes, up to one per core; a
    process that runs out of core is flagged ``client_saturated`` (add ``processes``)."""
    if event_loop:
        return max(1, min(-(-threads // CLIENTS_PER_LOOP), os.cpu_count() or 1))
    return max(1, min(threads, PROCESSES_PER_CORE * (os.cpu_count() or 1)))


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


class _PeriodTracker:
    """The parent side of live progress: sums the workers' sealed intervals into periods of
    ``every_s`` and hands each to the caller once every worker is done with it (or, for a worker
    stuck in a long operation, ``PERIOD_GRACE_S`` after the period's end)."""

    def __init__(self, live: PeriodProgress, config: PhaseConfig, processes: int) -> None:
        self.live = live
        self.every_s = live.every_s
        self.per = round(live.every_s / config.interval_s)  # intervals per period
        self.limit_s = config.max_seconds
        self.threads = config.threads
        self.kind: LatencyKind = "response_time" if config.target else "service_time"
        self.sealed = [0] * processes
        self.stopped: list[list[float]] = [[] for _ in range(processes)]
        self.pending: dict[int, PeriodTotals] = {}  # interval index -> totals not reported yet
        self.next = 0  # index of the next period to report

    def receive(self, update: _PeriodUpdate) -> None:
        self.sealed[update.process_index] = update.sealed_below
        self.stopped[update.process_index] = update.stopped_s
        for index, wire in update.intervals.items():
            totals = PeriodTotals.from_wire(wire)
            mine = self.pending.get(index)
            if mine is None:
                self.pending[index] = totals
            else:
                mine.add(totals)

    def emit(self, elapsed_s: float, runtime_s: float | None = None) -> None:
        """Report every period that is due at ``elapsed_s``; ``runtime_s`` once the run is over (then
        every period that ended within the run is due, and nothing more will arrive)."""
        while True:
            start_i, end_i = self.next * self.per, (self.next + 1) * self.per
            end_s = (self.next + 1) * self.every_s
            complete = min(self.sealed) >= end_i
            if runtime_s is not None:
                if end_s > min(runtime_s, self.limit_s or runtime_s) + 1e-3:
                    return  # the stragglers after the deadline are not a period of their own
            elif min(self.sealed) == SEALED_ALL:
                return  # every thread has stopped: the run's end decides which periods count
            elif elapsed_s < end_s:
                return
            elif self.limit_s is not None and end_s > self.limit_s + 1e-3:
                return  # past the time limit: wait for the end of the run
            elif not complete and (
                elapsed_s < end_s + PERIOD_GRACE_S
                or (self.limit_s is not None and end_s > self.limit_s - 1e-3)
            ):
                return  # the last period of a timed run waits, so its lines sum to every operation
            totals = PeriodTotals()
            late = False
            for index in sorted(i for i in self.pending if i < end_i):
                late = late or index < start_i
                totals.add(self.pending.pop(index))
            stopped = sum(1 for ts in self.stopped for t in ts if t < end_s)
            self.live.on_period(
                Period(
                    index=self.next,
                    start_s=round(self.next * self.every_s, 9),
                    end_s=round(end_s, 9),
                    totals=totals,
                    exact=complete and not late,
                    latency_kind=self.kind,
                    threads=self.threads - stopped,
                )
            )
            self.next += 1


def _check_period(progress: ProgressFn | None, config: PhaseConfig) -> PeriodProgress | None:
    if not isinstance(progress, PeriodProgress):
        return None
    per = progress.every_s / config.interval_s
    if round(per) < 1 or abs(per - round(per)) > 1e-9:
        raise SpecError(
            "progress",
            f"a reporting period of {progress.every_s:g} s is not a whole number of the "
            f"{config.interval_s:g} s intervals",
        )
    return progress


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


def _summary(name: str, series: Any, runtime_s: float) -> OperationSummary:
    hist = series.histogram
    count = sum(series.statuses.values())
    return OperationSummary(
        operations=count,
        statuses=dict(sorted(series.statuses.items())),
        throughput=count / runtime_s,
        average_us=round(hist.get_mean_value(), 3),
        min_us=float(hist.get_min_value()),
        max_us=float(hist.get_max_value()),
        stddev_us=round(hist.get_stddev(), 3),
        p50_us=float(hist.get_value_at_percentile(50)),
        p90_us=float(hist.get_value_at_percentile(90)),
        p95_us=float(hist.get_value_at_percentile(95)),
        p99_us=float(hist.get_value_at_percentile(99)),
        p999_us=float(hist.get_value_at_percentile(99.9)),
        histogram=encode_histogram(hist),
        service_time_histogram=encode_histogram(series.service_histogram)
        if series.service_histogram is not None
        else None,
    )


def merged_recorder(config: PhaseConfig, reports: list[WorkerReport]) -> Recorder:
    merged = Recorder(0, "response_time" if config.target else "service_time", int(config.interval_s * NS))
    for report in sorted(reports, key=lambda r: r.process_index):
        merged.merge(report.recorder)
    return merged


def build_document(
    config: PhaseConfig,
    reports: list[WorkerReport],
    started_at: datetime,
    ended_at: datetime,
    runtime_s: float,
    server_version: str | None,
    endpoint: str,
) -> ResultDocument:
    merged = merged_recorder(config, reports)
    operations = {name: _summary(name, s, runtime_s) for name, s in sorted(merged.ops.items())}
    total = sum(o.operations for o in operations.values())
    intervals = []
    for index in sorted(merged.intervals):
        b = merged.intervals[index]
        n = sum(b.counts.values())
        intervals.append(
            IntervalSample(
                t=round((index + 1) * config.interval_s, 3),
                operations=dict(sorted(b.counts.items())),
                errors=sum(b.errors.values()),
                throughput=n / config.interval_s,
                average_us={op: round(b.latency_sum_us[op] / c, 1) for op, c in b.counts.items() if c},
                p50_us=float(b.histogram.get_value_at_percentile(50)),
                p99_us=float(b.histogram.get_value_at_percentile(99)),
                max_us=float(b.histogram.get_max_value()),
            )
        )
    cpu_user = sum(r.cpu_user_s for r in reports)
    cpu_sys = sum(r.cpu_system_s for r in reports)
    share = (
        max((r.cpu_user_s + r.cpu_system_s) / r.wall_s for r in reports if r.wall_s > 0) if reports else 0.0
    )
    lag = max((r.lag_p99_ms for r in reports), default=0.0)
    saturated = share >= SATURATION_CPU_SHARE or lag >= SATURATION_LAG_MS
    doc = ResultDocument(
        run_id=config.run_id,
        tool_version=__version__,
        workload=config.workload,
        phase=config.phase,
        engine=config.engine,
        server_version=server_version,
        endpoints=[endpoint],
        properties=redact(config.properties),
        measurement=Measurement(
            latency="response_time" if config.target else "service_time",
            method=(
                (
                    "each request timed by the runner's event loop with perf_counter_ns, from just before "
                    "its first byte is sent until its last reply is parsed (many connections per process); "
                    if any(r.event_loop for r in reports)
                    else "each operation timed by the runner's wrapper with perf_counter_ns around the "
                    "driver call; "
                )
                + (
                    "latency from the intended start in a fixed schedule (coordinated omission corrected)"
                    if config.target
                    else "closed loop: latency from the actual send (service time)"
                )
            ),
            target_ops_per_sec=config.target,
            interval_s=config.interval_s,
            processes=config.processes or 1,
            threads=config.threads,
        ),
        started_at=started_at,
        ended_at=ended_at,
        runtime_ms=round(runtime_s * 1000, 3),
        operations_total=total,
        throughput=total / runtime_s,
        operations=operations,
        intervals=intervals,
        client=ClientStats(
            cpu_user_s=round(cpu_user, 3),
            cpu_system_s=round(cpu_sys, 3),
            cpu_us_per_op=round((cpu_user + cpu_sys) * 1e6 / total, 3) if total else 0.0,
            peak_rss_mb=round(max((r.peak_rss_mb for r in reports), default=0.0), 1),
            max_process_cpu_share=round(share, 3),
            schedule_lag_p99_ms=round(lag, 3),
            saturated=saturated,
        ),
        host=host_facts(),
    )
    if saturated:
        doc.flag(
            "client_saturated",
            "warning",
            f"the runner itself was near its limit (busiest worker process at {share:.0%} of a core, "
            f"timer lag p99 {lag:.1f} ms): add processes or client hosts before trusting the throughput",
        )
    error_kinds: dict[str, int] = {}
    for r in reports:
        for k, n in r.error_kinds.items():
            error_kinds[k] = error_kinds.get(k, 0) + n
    if error_kinds:
        doc.extra["error_kinds"] = dict(sorted(error_kinds.items()))
    doc.failure_windows = sorted(
        (
            FailureWindow(client=c, start_s=round(a, 6), end_s=None if b is None else round(b, 6), errors=n)
            for r in reports
            for c, a, b, n in r.failure_windows
        ),
        key=lambda w: (w.start_s, w.client),
    )
    doc.flag_errors()
    return doc


def host_facts() -> HostFacts:
    try:
        import psutil

        memory = int(psutil.virtual_memory().total / 2**20)
    except Exception:  # pragma: no cover - psutil is a core dependency
        memory = 0
    return HostFacts(
        hostname=socket.gethostname(),
        platform=platform.platform(),
        python=sys.version.split()[0],
        cpus=os.cpu_count() or 0,
        memory_mb=memory,
        availability_zone=os.environ.get("BENCHWRIGHT_AZ"),
        availability_zone_id=os.environ.get("BENCHWRIGHT_AZ_ID"),
    )


def ensure_complete(doc: ResultDocument) -> None:
    """Raise ``RunAborted`` for a partial result and ``AllOperationsFailed`` when every operation
    failed (the CLI still writes the document first): either way the command exits non-zero."""
    reasons = "; ".join(f.message for f in doc.validity if f.severity == "invalid")
    if doc.aborted:
        raise RunAborted(f"partial result: {reasons}")
    failed = doc.all_failed()
    if failed:
        raise AllOperationsFailed(failed)


def properties_of(mapping: Mapping[str, Any]) -> dict[str, str]:
    return {str(k): str(v) for k, v in mapping.items()}
