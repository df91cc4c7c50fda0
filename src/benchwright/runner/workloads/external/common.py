"""What every native-tool wrapper shares: finding the binary, running it while streaming its
progress, measuring its CPU, and turning parsed figures into the one ResultDocument schema.

The numbers in a wrapper's document are the tool's own (``measurement.source`` = the tool); where the
tool prints a latency distribution we rebuild an HdrHistogram from it, otherwise the figures it does
not print are listed in ``extra["not_reported"]`` (and are 0 in the summary).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from hdrh.histogram import HdrHistogram

from benchwright import __version__
from benchwright.errors import RunnerFailed, ToolMissingError
from benchwright.results import (
    ClientStats,
    IntervalSample,
    Measurement,
    OperationSummary,
    ResultDocument,
    failed_name,
    is_failed,
    redact,
    redact_text,
)
from benchwright.runner.measure import HIGHEST_US, encode_histogram, new_histogram

INSTALL_HINTS = {
    "pgbench": "apt-get install postgresql-contrib (Debian/Ubuntu; pgbench ships with the PostgreSQL client "
    "packages), or your platform's PostgreSQL client tools",
    "sysbench": "apt-get install sysbench (Debian/Ubuntu), or build it from https://github.com/akopytov/sysbench",
    "redis-benchmark": "apt-get install redis-tools (Debian/Ubuntu; redis-benchmark ships with Redis)",
    "memtier_benchmark": "memtier_benchmark is not packaged in Debian 12: build it from source "
    "(apt-get install build-essential autoconf automake libpcre3-dev libevent-dev pkg-config zlib1g-dev "
    "libssl-dev; git clone --branch 2.3.0 https://github.com/RedisLabs/memtier_benchmark; cd "
    "memtier_benchmark; autoreconf -ivf && ./configure && make; then make install, or put the build "
    "directory on PATH; 2.3.0 is the version our parser is tested on), or apt-get install "
    "memtier-benchmark after adding Redis' packages.redis.io APT repository",
}
LineSink = Callable[[str], None]
NOT_REPORTED = "not_reported"


def find_tool(binary: str, override: str | None = None) -> str:
    """Absolute path of ``binary`` (or ``override``); ToolMissingError with how to install it."""
    path = shutil.which(override or binary)
    if not path:
        hint = INSTALL_HINTS.get(binary, f"install {binary}")
        raise ToolMissingError(f"{override or binary}: not found on PATH; to install: {hint}")
    return path


def tool_version(path: str, flag: str = "--version") -> str | None:
    try:
        out = subprocess.run([path, flag], capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    text = (out.stdout or out.stderr).strip().splitlines()
    return text[0] if text else None


@dataclass
class ToolRun:
    """One finished tool process: its output and what it cost the client host."""

    argv: list[str]
    output: str
    returncode: int
    started_at: datetime
    ended_at: datetime
    wall_s: float
    cpu_user_s: float
    cpu_system_s: float
    peak_rss_mb: float


def run_tool(
    argv: Sequence[str],
    env: Mapping[str, str] | None = None,
    echo: LineSink | None = None,
    timeout_s: float | None = None,
) -> ToolRun:
    """Run a tool, streaming each line (``\\n`` or ``\\r`` terminated) to ``echo`` as it arrives.

    CPU and peak memory come from ``os.wait4`` on the tool's own pid, so they count the tool alone.
    """
    started_at = datetime.now(UTC)
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        list(argv),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        env={**os.environ, **(env or {})},
    )
    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    chunks: list[bytes] = []
    pending = b""
    deadline = t0 + timeout_s if timeout_s else None
    while True:
        data = os.read(fd, 65536)  # returns what is there: progress streams live
        if not data:
            break
        chunks.append(data)
        if echo is not None:
            pending += data
            parts = re.split(rb"[\r\n]", pending)
            pending = parts.pop()
            for part in parts:
                if part.strip():
                    echo(part.decode(errors="replace"))
        if deadline and time.perf_counter() > deadline:
            proc.kill()
    if echo is not None and pending.strip():
        echo(pending.decode(errors="replace"))
    proc.stdout.close()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - t0
    rss_kb = usage.ru_maxrss if sys.platform != "darwin" else usage.ru_maxrss // 1024
    return ToolRun(
        argv=list(argv),
        output=b"".join(chunks).decode(errors="replace"),
        returncode=proc.returncode,
        started_at=started_at,
        ended_at=datetime.now(UTC),
        wall_s=wall,
        cpu_user_s=usage.ru_utime,
        cpu_system_s=usage.ru_stime,
        peak_rss_mb=rss_kb / 1024,
    )


def check_exit(run: ToolRun, tool: str, secrets: Sequence[str] = ()) -> None:
    """RunnerFailed naming the tool and its last output lines when it exited non-zero."""
    if run.returncode != 0:
        tail = " | ".join(line for line in run.output.strip().splitlines()[-3:])
        raise RunnerFailed(f"{tool} exited with {run.returncode}: {scrub(tail, secrets)}")


def scrub(text: str, secrets: Sequence[str]) -> str:
    """``redact_text`` plus removal of known secret values (passwords given on the command line)."""
    text = redact_text(text)
    for secret in secrets:
        if secret:
            # whole tokens only: a password "bench" must not turn "redis-benchmark" into "redis-***mark"
            text = re.sub(rf"(?<![\w-]){re.escape(secret)}(?!\w)", "***", text)
    return text


# ---------------------------------------------------------------- parsed figures -> document
@dataclass
class OpFigures:
    """One operation as a tool reports it. Latencies in microseconds; None = not printed.
    ``operations`` and ``throughput`` are the successful ones (pgbench's "actually processed");
    ``errors`` are the failed ones, in addition (pgbench's "number of failed transactions")."""

    operations: int
    throughput: float
    average_us: float | None = None
    min_us: float | None = None
    max_us: float | None = None
    stddev_us: float | None = None
    percentiles_us: dict[float, float] = field(default_factory=dict)  # 50.0 -> p50 ...
    errors: int = 0
    histogram: HdrHistogram | None = None  # rebuilt from the tool's printed distribution

    def summary(self) -> tuple[OperationSummary, list[str]]:
        """The summary and the names of the fields the tool did not provide."""
        missing: list[str] = []
        hist = self.histogram if self.histogram is not None and self.histogram.get_total_count() else None

        def pick(name: str, printed: float | None, from_hist: Callable[[HdrHistogram], float]) -> float:
            if printed is not None:
                return float(printed)
            if hist is not None:
                return float(from_hist(hist))
            missing.append(name)
            return 0.0

        def pct(p: float) -> float:
            return pick(f"p{p:g}_us", self.percentiles_us.get(p), lambda h: h.get_value_at_percentile(p))

        summary = OperationSummary(
            operations=self.operations,
            statuses={"OK": self.operations} if self.operations else {},
            throughput=self.throughput,
            average_us=pick("average_us", self.average_us, lambda h: h.get_mean_value()),
            min_us=pick("min_us", self.min_us, lambda h: h.get_min_value()),
            max_us=pick("max_us", self.max_us, lambda h: h.get_max_value()),
            stddev_us=pick("stddev_us", self.stddev_us, lambda h: h.get_stddev()),
            p50_us=pct(50.0),
            p90_us=pct(90.0),
            p95_us=pct(95.0),
            p99_us=pct(99.0),
            p999_us=pct(99.9),
            histogram=encode_histogram(hist) if hist is not None else None,
        )
        return summary, missing

    def failures(self, runtime_s: float) -> OperationSummary | None:
        """The failed operations' own entry: their count and rate (the tools print no latency of
        failures, so its latency fields are 0 and listed as not reported)."""
        if not self.errors:
            return None
        return OperationSummary.model_validate(
            {
                "operations": self.errors,
                "statuses": {"ERROR": self.errors},
                "throughput": self.errors / runtime_s if runtime_s else 0.0,
                **dict.fromkeys(_LATENCY_FIELDS, 0.0),
            }
        )


_LATENCY_FIELDS = (
    "average_us",
    "min_us",
    "max_us",
    "stddev_us",
    "p50_us",
    "p90_us",
    "p95_us",
    "p99_us",
    "p999_us",
)


@dataclass
class Parsed:
    """What a parser got out of a tool's output."""

    operations: dict[str, OpFigures]
    runtime_s: float | None = None
    intervals: list[IntervalSample] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)
    threads: int = 1


def histogram_from_counts(pairs: Sequence[tuple[float, int]]) -> HdrHistogram:
    """An HdrHistogram from (latency in microseconds, count) pairs printed by a tool."""
    hist = new_histogram()
    for value_us, count in pairs:
        if count > 0:
            hist.record_value(max(1, min(HIGHEST_US, round(value_us))), count)
    return hist


def histogram_from_cumulative(points: Sequence[tuple[float, int]]) -> HdrHistogram:
    """From (latency us, cumulative count) points: each step's requests land at the step's bound,
    so shares within a bound are exact at the printed points and never overstated between them."""
    hist = new_histogram()
    previous = 0
    for value_us, cumulative in sorted(points):
        if cumulative > previous:
            hist.record_value(max(1, min(HIGHEST_US, round(value_us))), cumulative - previous)
            previous = cumulative
    return hist


def build_document(
    *,
    tool: str,
    workload: str,
    engine: str,
    phase: str,
    parsed: Parsed,
    run: ToolRun,
    endpoint: str,
    settings: Mapping[str, str],
    secrets: Sequence[str] = (),
    version: str | None = None,
    run_id: str | None = None,
    keep_raw: bool = True,
) -> ResultDocument:
    """The ResultDocument for one tool run; secrets are removed from the command and the output."""
    operations: dict[str, OperationSummary] = {}
    not_reported: dict[str, list[str]] = {}
    runtime_s = parsed.runtime_s or run.wall_s
    for name, figures in parsed.operations.items():
        operations[name], missing = figures.summary()
        if missing:
            not_reported[name] = missing
        failures = figures.failures(runtime_s)
        if failures is not None:
            operations[failed_name(name)] = failures
            not_reported[failed_name(name)] = list(_LATENCY_FIELDS)
    total = sum(o.operations for name, o in operations.items() if not is_failed(name))
    failed = sum(o.statuses.get("ERROR", 0) for name, o in operations.items() if is_failed(name))
    cpu = run.cpu_user_s + run.cpu_system_s
    doc = ResultDocument(
        run_id=run_id,
        tool=tool,
        tool_version=version or "",
        workload=workload,
        phase=phase,
        engine=engine,
        endpoints=[endpoint],
        properties=redact(dict(settings)),
        measurement=Measurement(
            latency="service_time",
            method=(
                f"numbers are {tool}'s own, parsed from its output (Benchwright {__version__} wrapper); "
                "closed loop, latency as the tool measures it; histograms rebuilt from the tool's printed "
                "distribution where it prints one"
            ),
            source=tool,
            threads=parsed.threads,
        ),
        started_at=run.started_at,
        ended_at=run.ended_at,
        runtime_ms=round(runtime_s * 1000, 3),
        operations_total=total,
        throughput=total / runtime_s if runtime_s else 0.0,
        failed_total=failed,
        operations=operations,
        intervals=parsed.intervals,
        client=ClientStats(
            cpu_user_s=round(run.cpu_user_s, 3),
            cpu_system_s=round(run.cpu_system_s, 3),
            cpu_us_per_op=round(cpu * 1e6 / total, 3) if total else 0.0,
            peak_rss_mb=round(run.peak_rss_mb, 1),
            max_process_cpu_share=round(cpu / run.wall_s, 3) if run.wall_s else 0.0,
        ),
    )
    doc.extra.update(parsed.extra)
    doc.extra["command"] = scrub(" ".join(run.argv), secrets)
    if not_reported:
        doc.extra[NOT_REPORTED] = not_reported
    if keep_raw:
        doc.extra["raw_output"] = scrub(run.output, secrets)
    doc.flag_errors(f"{tool} reported no completed operation")
    return doc


def floats(text: str) -> list[float]:
    return [float(x) for x in re.findall(r"-?\d+(?:\.\d+)?", text)]
