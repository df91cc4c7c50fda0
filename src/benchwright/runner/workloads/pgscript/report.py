"""pgbench's end-of-run block for script runs (-f, weighted -b, -r), laid out as pgbench 15 prints it:
"transaction type: FILE" or "multiple scripts", the totals, then with several scripts one "SQL
script N:" block each, and with -r each command's mean latency and failures."""

from __future__ import annotations

import math
from typing import Any

from benchwright.runner.measure import decode_histogram
from benchwright.runner.workloads.pgscript.workload import op_name, scripts_of
from benchwright.runner.workloads.tpcb.pgbench_format import above_limit, header_lines


def summary_lines(
    doc: Any,
    clients: int,
    threads: int,
    per_client: int | None,
    latency_limit_ms: float | None,
    stddev: bool,
) -> list[str]:
    """The whole block (stdout), from a pgbench-script run's document."""
    scripts = doc.extra.get("scripts", [])
    names = [op_name(i, s) for i, s in enumerate(scripts_of(doc.properties))]
    done = sum(s["transactions"] for s in scripts)
    failed = sum(s["failed"] for s in scripts)
    several = len(scripts) > 1
    lines = header_lines(
        "multiple scripts" if several else scripts[0]["name"],
        doc.extra.get("scale") or 1,
        doc.extra.get("query_mode", "simple"),
        (clients, threads, per_client),
        doc.runtime_ms,
        (done, failed),
    )
    if latency_limit_ms is not None:
        late = sum(above_limit(doc, name, latency_limit_ms) for name in names)
        lines.append(
            f"number of transactions above the {latency_limit_ms:.1f} ms latency limit: "
            f"{late}/{done} ({_share(late, done)})"
        )
    mean, sd = pooled(scripts)
    lines.append(f"latency average = {mean:.3f} ms")
    if stddev:
        lines.append(f"latency stddev = {sd:.3f} ms")
    lag = schedule_lag_ms(doc, names)
    if lag is not None:
        lines.append(f"rate limit schedule lag: avg {lag:.3f} ms")
    runtime_s = max(doc.runtime_ms / 1000, 1e-9)
    lines.append(f"tps = {done / runtime_s:.6f} (without initial connection time)")
    if not several:
        return lines + statement_lines(scripts[0], "")
    weights = sum(s["weight"] for s in scripts) or 1
    for number, script in enumerate(scripts, 1):
        n = script["transactions"]
        lines += [
            f"SQL script {number}: {script['name']}",
            f" - weight: {script['weight']} (targets {100 * script['weight'] / weights:.1f}% of total)",
            f" - {n} transactions ({_share(n, done, 1)} of total, tps = {script['tps']:.6f})",
            f" - number of failed transactions: {script['failed']} ({_share(script['failed'], n + script['failed'])})",
            f" - latency average = {script['latency_average_ms']:.3f} ms",
            f" - latency stddev = {script['latency_stddev_ms']:.3f} ms",
            *statement_lines(script, " - "),
        ]
    return lines


def statement_lines(script: dict[str, Any], prefix: str) -> list[str]:
    """-r's table: each command's mean latency in ms, its failures, its text (none without -r)."""
    statements = script.get("statements")
    if not statements:
        return []
    lines = [f"{prefix}statement latencies in milliseconds and failures:"]
    for s in statements:
        lines.append(f"{s['latency_average_ms']:>14.3f}{s['failures']:>12}  {s['command']}")
    return lines


def pooled(scripts: list[dict[str, Any]]) -> tuple[float, float]:
    """The mean and standard deviation of every transaction, from each script's count, mean and
    standard deviation (the pooled moments)."""
    total = sum(s["transactions"] for s in scripts)
    if not total:
        return 0.0, 0.0
    mean = sum(s["transactions"] * s["latency_average_ms"] for s in scripts) / total
    square = sum(
        s["transactions"] * (s["latency_stddev_ms"] ** 2 + s["latency_average_ms"] ** 2) for s in scripts
    )
    return mean, math.sqrt(max(0.0, square / total - mean**2))


def schedule_lag_ms(doc: Any, names: list[str]) -> float | None:
    """With -R: the mean of response minus service time over every transaction (None without -R)."""
    lag_us, count = 0.0, 0
    for name in names:
        summary = doc.operations.get(name)
        if summary is None or not summary.histogram or not summary.service_time_histogram:
            continue
        response = decode_histogram(summary.histogram)
        service = decode_histogram(summary.service_time_histogram)
        n = response.get_total_count()
        lag_us += n * max(0.0, response.get_mean_value() - service.get_mean_value())
        count += n
    return lag_us / count / 1000 if count else None


def _share(part: int, whole: int, digits: int = 3) -> str:
    return f"{100 * part / max(1, whole):.{digits}f}%"
