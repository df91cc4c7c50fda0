"""The result document of one phase: the workers' recorders merged exactly, per-operation and
per-interval summaries, client CPU and saturation, host facts, and the completeness check."""

from __future__ import annotations

import os
import platform
import socket
import sys
from datetime import datetime
from typing import Any

from benchwright import __version__
from benchwright.errors import AllOperationsFailed, RunAborted
from benchwright.results import (
    ClientStats,
    FailureWindow,
    HostFacts,
    IntervalSample,
    Measurement,
    OperationSummary,
    ResultDocument,
    is_failed,
    redact,
)
from benchwright.runner.engine.config import NS, WorkerReport
from benchwright.runner.entry import AZ_ENV, AZ_ID_ENV
from benchwright.runner.measure import Recorder, encode_histogram
from benchwright.runner.plan import PhaseConfig

SATURATION_CPU_SHARE = 0.90
SATURATION_LAG_MS = 50.0


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
    total = sum(o.operations for name, o in operations.items() if not is_failed(name))
    failed = sum(o.statuses.get("ERROR", 0) for name, o in operations.items() if is_failed(name))
    tried = sum(o.operations for o in operations.values())  # with failed and retried attempts
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
    busy = [(r.cpu_user_s + r.cpu_system_s, r.cpu_wait_s, r.wall_s) for r in reports if r.wall_s > 0]
    share = max((cpu / wall for cpu, _, wall in busy), default=0.0)
    # what the busiest process asked of a core: CPU it got plus the time it waited for one. A host
    # whose other processes starve the runner limits the run as surely as the runner's own CPU does
    wanted, waited = (
        max(((cpu + wait) / wall, wait / wall) for cpu, wait, wall in busy) if busy else (0.0, 0.0)
    )
    lag = max((r.lag_p99_ms for r in reports), default=0.0)
    saturated = share >= SATURATION_CPU_SHARE or wanted >= SATURATION_CPU_SHARE or lag >= SATURATION_LAG_MS
    doc = ResultDocument(
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
                    f"each request timed by the runner's {_loop_models(reports)} with perf_counter_ns, "
                    "from just before its first byte is sent until its last reply is parsed (many "
                    "connections per process); "
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
        failed_total=failed,
        operations=operations,
        intervals=intervals,
        client=ClientStats(
            cpu_user_s=round(cpu_user, 3),
            cpu_system_s=round(cpu_sys, 3),
            # per operation tried: a failed one cost the client CPU too
            cpu_us_per_op=round((cpu_user + cpu_sys) * 1e6 / tried, 3) if tried else 0.0,
            peak_rss_mb=round(max((r.peak_rss_mb for r in reports), default=0.0), 1),
            max_process_cpu_share=round(share, 3),
            max_process_cpu_wait_share=round(waited, 3),
            schedule_lag_p99_ms=round(lag, 3),
            saturated=saturated,
        ),
        host=host_facts(),
    )
    if saturated:
        doc.flag(
            "client_saturated",
            "warning",
            f"the runner itself was near its limit (busiest worker process at {share:.0%} of a core"
            f"{f' and {waited:.0%} more waiting for one' if waited >= 0.05 else ''}, timer lag p99 "
            f"{lag:.1f} ms): add processes or client hosts (or free the host) before trusting the throughput",
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


def _loop_models(reports: list[WorkerReport]) -> str:
    """The event loops that timed the requests, as each worker named its own (``EventLoop.model``)."""
    return " and ".join(sorted({r.event_loop for r in reports if r.event_loop}))


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
        availability_zone=os.environ.get(AZ_ENV),
        availability_zone_id=os.environ.get(AZ_ID_ENV),
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
