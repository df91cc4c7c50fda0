"""pgbench's text output, so users can read our numbers in the layout they know (and diff them
against a real pgbench run).

``progress_line`` formats one live ``Period`` (``benchwright tpcb -P N`` prints them as the run goes,
with the period's exact mean and standard deviation).
"""

from __future__ import annotations

from typing import Any

from benchwright.runner.engine import Period
from benchwright.runner.workloads.tpcb.workload import SCRIPTS, run_figures


def format_progress(
    t: float, tps: float, lat_ms: float, stddev_ms: float, failed: int, lag_ms: float | None
) -> str:
    """`progress: 5.0 s, 1234.5 tps, lat 0.810 ms stddev 0.412, 0 failed[, lag 0.010 ms]`"""
    line = f"progress: {t:.1f} s, {tps:.1f} tps, lat {lat_ms:.3f} ms stddev {stddev_ms:.3f}, {failed} failed"
    if lag_ms is not None:
        line += f", lag {lag_ms:.3f} ms"
    return line


def progress_line(period: Period) -> str:
    """pgbench's progress line for one live period: transactions that succeeded per second, the
    exact mean and population standard deviation of the period's latencies (from the intended start
    with -R, so they include the schedule lag, as pgbench's do), failures, and the mean lag with -R."""
    totals = period.totals
    return format_progress(
        period.end_s,
        totals.ok / period.seconds,
        totals.mean_us / 1000,
        totals.stddev_us / 1000,
        totals.failed,
        totals.lag_avg_us / 1000 if period.latency_kind == "response_time" else None,
    )


def summary_lines(doc: Any, clients: int, threads: int) -> list[str]:
    """The block pgbench prints at the end of a run."""
    script = doc.extra.get("script") or doc.properties.get("tpcb.script", "tpcb-like")
    figures = (
        doc.extra
        if "tps" in doc.extra
        else run_figures(doc, script, doc.extra.get("scale", 0), doc.properties)
    )
    done = figures.get("transactions", 0)
    failed = figures.get("failed", 0)
    total = max(1, done + failed)
    lines = [
        f"transaction type: {SCRIPTS.get(script, script)}",
        f"scaling factor: {figures.get('scale', '?')}",
        f"query mode: {figures.get('query_mode', 'simple')}",
        f"number of clients: {clients}",
        f"number of threads: {threads}",
        f"duration: {round(doc.runtime_ms / 1000)} s",
        f"number of transactions actually processed: {done}",
        f"number of failed transactions: {failed} ({100 * failed / total:.3f}%)",
        f"latency average = {figures.get('latency_average_ms', 0.0):.3f} ms",
        f"latency stddev = {figures.get('latency_stddev_ms', 0.0):.3f} ms",
    ]
    if "schedule_lag_avg_ms" in figures:
        lines.append(f"rate limit schedule lag: avg {figures['schedule_lag_avg_ms']:.3f} ms")
    lines.append(f"tps = {figures.get('tps', 0.0):.6f} (without initial connection time)")
    return lines
