"""Runs one phase of a workload: worker processes x threads, pacing, limits, merging, the document.

Layout: the parent process sets the phase up (schema), starts ``processes`` worker processes, each
opening one driver per thread, and releases them all at one start instant. Every thread pulls
operations from the workload, times each call (the measuring wrapper), and stops at its share of
the operation count, the time limit, a stop request or a dead server. Each worker sends back an
exported Recorder; the parent merges them exactly and builds the ResultDocument.

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
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from benchwright import __version__
from benchwright.errors import RunAborted
from benchwright.results import (
    ClientStats,
    HostFacts,
    IntervalSample,
    Measurement,
    OperationSummary,
    ResultDocument,
    redact,
)
from benchwright.runner.drivers import new_driver
from benchwright.runner.measure import LatencyKind, Recorder, RecorderExport, Status, encode_histogram
from benchwright.runner.workloads.base import Operation, ThreadInfo, split, workload_class

NS = 1_000_000_000
START_DELAY_NS = 200_000_000  # every worker is connected and waiting before the start instant
ERROR_ABORT_S = 3.0  # a thread whose every operation failed for this long gives up
SATURATION_CPU_SHARE = 0.90
SATURATION_LAG_MS = 50.0
ProgressFn = Callable[[float, int, float], None]  # (elapsed s, operations so far, current ops/s)


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
    aborted_reason: str | None = None
    setup_error: str | None = None


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
) -> str | None:
    """Run one thread's operations; return a reason when it gave up because everything failed.

    The hot path: one ``perf_counter_ns`` on each side of the driver call, one ``record``; the stop
    flag is polled every 32 operations and the recorder's buffers are folded every 65536."""
    if limit == 0:  # more threads than operations: this one has nothing to do
        return None
    perf = time.perf_counter_ns
    record = recorder.record
    error = Status.ERROR
    next_ns = start_ns
    failing_since = 0
    now = perf()
    if now < start_ns:
        time.sleep((start_ns - now) / NS)
    for done, (name, call) in enumerate(ops, 1):
        if pace_ns:
            now = perf()
            if next_ns > now:
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
            if not failing_since:
                failing_since = end
            elif end - failing_since > ERROR_ABORT_S * NS:
                return f"every operation failed for {ERROR_ABORT_S:.0f} s (last: {name})"
        elif failing_since:
            failing_since = 0
        if done == limit or end >= deadline_ns:
            return None
        if not done & 31:
            if stop.is_set():
                return None
            if not done & 0xFFFF:
                recorder.flush()  # keeps the pending buffers small when intervals are long
    return None


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
) -> None:
    """Entry point of one worker process."""
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

    def run_thread(slot: int) -> None:
        t = thread_indexes[slot]
        info = ThreadInfo(index=t, count=config.threads, seed=seed * 7919 + t)
        ops = workload.operations(config.phase, drivers[slot], info)
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
        )
        if reason:
            reasons.append(reason)
            stop.set()  # a dead server: stop everyone, keep what was measured

    def total_operations() -> int:
        return sum(r.total_operations() for r in recorders)

    lag = _Lag()
    lag.start()
    cpu0 = os.times()  # the measured window only: imports and connecting are not charged

    def publish() -> None:
        while not done.is_set():
            progress[process_index] = total_operations()
            done.wait(0.25)

    done = threading.Event()
    publisher = threading.Thread(target=publish, daemon=True)
    publisher.start()
    if len(thread_indexes) == 1:
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
            aborted_reason=reasons[0] if reasons else None,
        )
    )


# ---------------------------------------------------------------- in the parent
PROCESSES_PER_CORE = 2


def default_processes(threads: int) -> int:
    """Two worker processes per core: threads in one process queue for the GIL, and measured here
    (4 clients, 2 cores) PostgreSQL point selects cost 14 us of client CPU with 4 processes against
    23 us with 2, while Redis GETs cost the same either way (benchmarks/bench_ycsb.py --only split)."""
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


def run_phase(config: PhaseConfig, progress: ProgressFn | None = None) -> ResultDocument:
    """Set up, run and measure one phase; return its result document (partial if aborted)."""
    workload = workload_class(config.workload)(config.properties)
    probe = new_driver(config.engine, config.properties, 0)
    probe.connect()  # raises TargetUnreachable naming the host before any worker starts
    try:
        workload.setup(probe, config.phase)
        server_version = probe.server_version()
    finally:
        probe.close()

    threads = max(1, config.threads)
    processes = min(threads, config.processes or default_processes(threads))
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
            args=(config, p, assignment[p], limits[p], ready, start_queues[p], stop, counts, reports),
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
    try:
        while len(collected) < processes:
            try:
                collected.append(reports.get(timeout=0.5))
            except queue.Empty:
                if not any(w.is_alive() for w in workers) and reports.empty():
                    break
            now = time.perf_counter_ns()
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
                collected.append(reports.get(timeout=0.5))
    end_ns = time.perf_counter_ns()
    for w in workers:
        w.join(5)
        if w.is_alive():
            w.terminate()
    ended_at = datetime.now(UTC)
    runtime_s = max(1e-9, (max(end_ns, start_ns + 1) - start_ns) / NS)
    if collected:
        runtime_s = max(r.wall_s for r in collected)

    doc = build_document(config, collected, started_at, ended_at, runtime_s, server_version, probe.endpoint())
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
            finisher.connect()
            workload.finish(finisher, config.phase, doc)
        finally:
            finisher.close()
    return doc


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
                "each operation timed by the runner's wrapper with perf_counter_ns around the driver call; "
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
    """Raise ``RunAborted`` for a partial result (the CLI still writes it first)."""
    if doc.aborted:
        reasons = "; ".join(f.message for f in doc.validity if f.severity == "invalid")
        raise RunAborted(f"partial result: {reasons}")


def properties_of(mapping: Mapping[str, Any]) -> dict[str, str]:
    return {str(k): str(v) for k, v in mapping.items()}
