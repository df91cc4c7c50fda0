"""The metrics a seed table can show: what each one reads from a result, and where its number
comes from (``source``, printed in the table's notes). report/table.py pivots them."""

from __future__ import annotations

import statistics
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from benchwright.errors import SpecError
from benchwright.results import (
    MetricSeries,
    OperationSummary,
    ResultDocument,
    base_operation,
    failed_name,
    is_failed,
)
from benchwright.runs import CellResult, RunRecord

Scope = Literal["operation", "phase"]
BUCKETS_MS = (1, 5, 50, 100, 300, 500)
DIMENSIONS = ("spec", "run", "cell", "repeat", "phase", "operation", "engine", "workload")


@dataclass(frozen=True)
class Fact:
    """One measured thing to take figures from: an operation of a phase (or the whole phase)."""

    run: RunRecord
    cell: CellResult
    doc: ResultDocument
    operation: str | None = None

    @property
    def summary(self) -> OperationSummary | None:
        return self.doc.operations.get(self.operation) if self.operation else None


@dataclass(frozen=True)
class Metric:
    name: str
    label: str  # column heading
    scope: Scope  # "operation": a figure per operation; "phase": one per phase (tpmC, CPU, cost)
    kind: Literal["rate", "latency", "count", "percent", "number", "usd"]
    get: Callable[[Fact], float | None]
    source: str  # where the number comes from, for the table's notes


def _op(attr: str) -> Callable[[Fact], float | None]:
    def get(f: Fact) -> float | None:
        s = f.summary
        return float(getattr(s, attr)) if s is not None and s.operations else None

    return get


def _throughput(f: Fact) -> float | None:
    if f.operation is None:
        return f.doc.throughput
    if is_failed(f.operation):
        return None  # a rate of failures is never throughput: see errors and error_rate
    s = f.summary
    return s.throughput if s is not None else None


def _errors(f: Fact) -> float | None:
    return float(f.doc.failed(f.operation))


def _error_rate(f: Fact) -> float | None:
    """Failed / tried, in percent, of the fact's operation (READ and READ-FAILED: the same) or phase."""
    failed = f.doc.failed(f.operation)
    if f.operation is None:
        tried = f.doc.attempted
    else:
        done = f.doc.operations.get(base_operation(f.operation))
        tried = failed + (done.operations if done is not None else 0)
    return 100 * failed / tried if tried else None


def _status(*names: str) -> Callable[[Fact], float | None]:
    def get(f: Fact) -> float | None:
        if f.operation:  # the operation's entry and its failed attempts' (RETRY, ERROR are there)
            base = base_operation(f.operation)
            ops = [f.doc.operations.get(base), f.doc.operations.get(failed_name(base))]
        else:
            ops = list(f.doc.operations.values())
        return float(sum(o.statuses.get(n, 0) for o in ops if o is not None for n in names))

    return get


def _bucket(bound_ms: int) -> Callable[[Fact], float | None]:
    def get(f: Fact) -> float | None:
        s = f.summary
        if s is None or not s.histogram or not s.operations:
            return None
        from benchwright.runner.workloads.redisbench.buckets import buckets_from_histogram

        return 100 * buckets_from_histogram(s.histogram)[str(bound_ms)]

    return get


def _extra(*path: str) -> Callable[[Fact], float | None]:
    def get(f: Fact) -> float | None:
        value: Any = f.doc.extra
        for key in path:
            if not isinstance(value, dict) or key not in value:
                return None
            value = value[key]
        return float(value) if isinstance(value, (int, float)) else None

    return get


def _ignored_errors(f: Fact) -> float | None:
    value = _extra("ignored_errors")(f)
    return value if value is not None else _status("RETRY")(f)


def _series(f: Fact, names: Sequence[str], sources: Sequence[str]) -> MetricSeries | None:
    """The first series found by preference of source (cloud before the local /proc sampler)."""
    pools = [f.doc.metrics, f.cell.metrics]
    for source in sources:
        for name in names:
            for pool in pools:
                for s in pool:
                    if s.name == name and s.source.startswith(source) and s.points:
                        return s
    return None


CLOUD_OR_SERVER = ("cloudwatch", "proc:server")
CLOUD_OR_DISK = ("cloudwatch", "proc:host")  # proc:server Read/WriteOps are syscalls, not disk IOPS


def _mean_series(names: Sequence[str], sources: Sequence[str]) -> Callable[[Fact], float | None]:
    def get(f: Fact) -> float | None:
        s = _series(f, names, sources)
        return statistics.fmean(p.value for p in s.points) if s else None

    return get


def _min_series(name: str) -> Callable[[Fact], float | None]:
    def get(f: Fact) -> float | None:
        s = _series(f, [name], ("cloudwatch",))
        return min(p.value for p in s.points) if s else None

    return get


def _usd(f: Fact) -> float | None:
    cost = f.cell.cost
    return cost.total if cost is not None and cost.total > 0 else None


def _ops_per_usd(f: Fact) -> float | None:
    cost = f.cell.cost
    if cost is None or cost.total <= 0:
        return None
    return cost.ops_per_dollar or f.doc.operations_total / cost.total


def _monthly(part: str | None) -> Callable[[Fact], float | None]:
    """A part of the cell's configuration's monthly price (report/monthly_table.py)."""

    def get(f: Fact) -> float | None:
        from benchwright.report.monthly_table import part_getter

        return part_getter(part)(f)

    return get


def _ops_per_monthly_usd(f: Fact) -> float | None:
    from benchwright.report.monthly_table import ops_per_monthly_usd

    return ops_per_monthly_usd(f)


def _floor(attr: str) -> Callable[[Fact], float | None]:
    """The network floor taken before the measured phase (None for the other phases)."""

    def get(f: Fact) -> float | None:
        floor = f.doc.network_floor
        return float(getattr(floor, attr)) if floor is not None else None

    return get


HIST = "the phase's HdrHistogram"
MONTH = "the configuration's monthly price (packaged price list, 730 h/month)"
FLOOR = "round trips of SELECT 1 / PING on one connection before the run phase"
_METRICS = [
    Metric("operations", "operations", "operation", "count", _op("operations"), "operations completed"),
    Metric("throughput", "ops/s", "operation", "rate", _throughput, "operations / phase run time"),
    Metric("tps", "tps", "operation", "rate", _throughput, "transactions / phase run time"),
    Metric("runtime", "RunTime", "phase", "latency", lambda f: f.doc.runtime_ms * 1000, "phase run time"),
    Metric("avg", "avg", "operation", "latency", _op("average_us"), HIST),
    Metric("min", "min", "operation", "latency", _op("min_us"), HIST),
    Metric("max", "max", "operation", "latency", _op("max_us"), HIST),
    Metric("stddev", "stddev", "operation", "latency", _op("stddev_us"), HIST),
    Metric("p50", "p50", "operation", "latency", _op("p50_us"), HIST),
    Metric("p90", "p90", "operation", "latency", _op("p90_us"), HIST),
    Metric("p95", "p95", "operation", "latency", _op("p95_us"), HIST),
    Metric("p99", "p99", "operation", "latency", _op("p99_us"), HIST),
    Metric("p99.9", "p99.9", "operation", "latency", _op("p999_us"), HIST),
    *(
        Metric(f"<={b}ms", f"<={b}ms", "operation", "percent", _bucket(b), f"{HIST}: share <= {b} ms")
        for b in BUCKETS_MS
    ),
    Metric("errors", "errors", "phase", "count", _errors, "operations that failed (the -FAILED entries)"),
    Metric("error_rate", "err %", "phase", "percent", _error_rate, "failed / tried operations"),
    Metric("retries", "retries", "phase", "count", _status("RETRY"), "retried (deadlock, conflict)"),
    Metric("tpmC", "tpmC", "phase", "rate", _extra("tpmC"), "New-Order transactions per minute"),
    Metric("qps", "qps", "phase", "rate", _extra("qps"), "queries per second (sysbench's count)"),
    Metric("reads/s", "reads/s", "phase", "rate", _extra("queries_per_second", "read"), "read queries/s"),
    Metric("writes/s", "writes/s", "phase", "rate", _extra("queries_per_second", "write"), "writes/s"),
    Metric("other/s", "other/s", "phase", "rate", _extra("queries_per_second", "other"), "BEGIN/COMMIT/s"),
    Metric("ignored_errors", "ignored errors", "phase", "count", _ignored_errors, "retried by the tool"),
    Metric(
        "cpu",
        "server CPU %",
        "phase",
        "number",
        _mean_series(["CPUUtilization", "EngineCPUUtilization"], CLOUD_OR_SERVER),
        "mean CPUUtilization (CloudWatch, or the server process locally)",
    ),
    Metric(
        "read_iops",
        "read IOPS",
        "phase",
        "number",
        _mean_series(["ReadIOPS", "VolumeReadOps"], CLOUD_OR_DISK),
        "mean ReadIOPS (CloudWatch, or the host's disk locally)",
    ),
    Metric(
        "write_iops",
        "write IOPS",
        "phase",
        "number",
        _mean_series(["WriteIOPS", "VolumeWriteOps"], CLOUD_OR_DISK),
        "mean WriteIOPS (CloudWatch, or the host's disk locally)",
    ),
    Metric("burst", "burst %", "phase", "number", _min_series("BurstBalance"), "lowest BurstBalance"),
    Metric(
        "credit", "CPU credits", "phase", "number", _min_series("CPUCreditBalance"), "lowest CPUCreditBalance"
    ),
    Metric("floor_p50", "floor p50", "phase", "latency", _floor("p50_us"), f"p50 of the {FLOOR}"),
    Metric("floor_p99", "floor p99", "phase", "latency", _floor("p99_us"), f"p99 of the {FLOOR}"),
    Metric("usd", "USD", "phase", "usd", _usd, "the cell's cost estimate"),
    Metric("ops_per_usd", "ops/USD", "phase", "rate", _ops_per_usd, "operations / the cell's cost"),
    *(
        Metric(f"monthly_{p}_usd", f"{label} $/mo", "phase", "usd", _monthly(p), f"{MONTH}: {what}")
        for p, label, what in (
            ("server", "server", "instances / nodes"),
            ("disk", "disk", "storage GB-month"),
            ("io", "IOPS", "provisioned IOPS, gp3 throughput, magnetic I/O requests"),
        )
    ),
    Metric("monthly_total_usd", "total $/mo", "phase", "usd", _monthly(None), f"{MONTH}: total"),
    Metric(
        "ops_per_monthly_usd",
        "ops/s per $/mo",
        "phase",
        "rate",
        _ops_per_monthly_usd,
        "the phase's ops/s per monthly dollar of its configuration",
    ),
]
METRICS: dict[str, Metric] = {m.name: m for m in _METRICS}
ALIASES = {
    "p999": "p99.9",
    "average": "avg",
    "buckets": "",
    "iops": "",
    "tx": "tps",
    "ops/usd": "ops_per_usd",
    "err%": "error_rate",
    "error-rate": "error_rate",
}
GROUPS = {
    "buckets": [f"<={b}ms" for b in BUCKETS_MS] + ["max"],
    "iops": ["read_iops", "write_iops"],
    "cloud": ["cpu", "read_iops", "write_iops", "burst", "credit"],
    "floor": ["floor_p50", "floor_p99"],
    # the seeds' price tables (experiments 3 and 4): server, disk, provisioned IOPS, total per month
    "monthly_usd": ["monthly_server_usd", "monthly_disk_usd", "monthly_io_usd", "monthly_total_usd"],
}

FALLBACK_METRICS = ["throughput", "avg", "p95", "p99"]  # a workload that names no default metrics


def groups() -> dict[str, list[str]]:
    """The report's own metric groups, then each registered workload's (its descriptor's
    ``report_groups``: "ycsb" is YCSB's columns)."""
    from benchwright.runner.workloads.registry import descriptors

    out = {name: list(members) for name, members in GROUPS.items()}
    for found in descriptors().values():
        for name, members in found.report_groups.items():
            out.setdefault(name, list(members))
    return out


def expand_groups(names: Iterable[str]) -> list[str]:
    """Metric names with each group replaced by its members (the descriptors name groups)."""
    known = groups()
    return [member for name in names for member in (known.get(name) or [name])]


def default_metrics(workload: str) -> list[str]:
    """What ``workload``'s seed publishes when --metric is not given (its descriptor's
    ``default_metrics``, or a native tool's results that publish like it); the fallback otherwise."""
    from benchwright.runner.workloads.registry import descriptor_of

    found = descriptor_of(workload) if workload else None
    if found is None or found.default_metrics is None:
        return list(FALLBACK_METRICS)
    return expand_groups(found.default_metrics)


def resolve_metrics(names: Iterable[str]) -> list[Metric]:
    """Metric names (with groups such as ``buckets`` and ``cloud``) as Metric objects, in order."""
    out: list[Metric] = []
    known = groups()
    for raw in names:
        for name in (n.strip() for n in raw.split(",") if n.strip()):
            expanded = known.get(name) or [ALIASES.get(name) or name]
            for n in expanded:
                if n not in METRICS:
                    from difflib import get_close_matches

                    near = get_close_matches(n, [*METRICS, *known], n=1)
                    hint = f" (did you mean {near[0]!r}?)" if near else ""
                    raise SpecError("--metric", f"unknown metric {n!r}{hint}; known: {', '.join(METRICS)}")
                if METRICS[n] not in out:
                    out.append(METRICS[n])
    return out
