"""pgbench's text output, so users can read our numbers in the layout they know (and diff them
against a real pgbench run).

``progress_line`` formats one live ``Period`` (``benchwright tpcb -P N`` prints them as the run goes,
with the period's exact mean and standard deviation).
"""

from __future__ import annotations

from typing import Any

from benchwright.runner.engine import Period
from benchwright.runner.measure import decode_histogram
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


def header_lines(
    kind: str,
    scale: Any,
    query_mode: str,
    shape: tuple[int, int, int | None],
    runtime_ms: float,
    outcome: tuple[int, int],
) -> list[str]:
    """pgbench's opening lines of its end-of-run block, for built-in and script runs alike:
    ``shape`` is (clients, threads, -t per client or None for -T), ``outcome`` (done, failed)."""
    clients, threads, per_client = shape
    done, failed = outcome
    lines = [
        f"transaction type: {kind}",
        f"scaling factor: {scale}",
        f"query mode: {query_mode}",
        f"number of clients: {clients}",
        f"number of threads: {threads}",
    ]
    if per_client is None:
        lines += [
            f"duration: {round(runtime_ms / 1000)} s",
            f"number of transactions actually processed: {done}",
        ]
    else:
        lines += [
            f"number of transactions per client: {per_client}",
            f"number of transactions actually processed: {done}/{per_client * clients}",
        ]
    lines.append(f"number of failed transactions: {failed} ({100 * failed / max(1, done + failed):.3f}%)")
    return lines


def summary_lines(
    doc: Any,
    clients: int,
    threads: int,
    per_client: int | None = None,
    latency_limit_ms: float | None = None,
    stddev: bool = True,
) -> list[str]:
    """The block pgbench prints at the end of a run: ``per_client`` (-t) replaces the duration line
    with pgbench's "per client" and "N/M" lines; ``latency_limit_ms`` (-L) adds the count of
    transactions slower than it, read from the run's latency histogram. pgbench prints the latency
    stddev only with -P, -R or -L (``stddev``)."""
    script = doc.extra.get("script") or doc.properties.get("tpcb.script", "tpcb-like")
    figures = (
        doc.extra
        if "tps" in doc.extra
        else run_figures(doc, script, doc.extra.get("scale", 0), doc.properties)
    )
    done = figures.get("transactions", 0)
    failed = figures.get("failed", 0)
    lines = header_lines(
        SCRIPTS.get(script, script),
        figures.get("scale", "?"),
        figures.get("query_mode", "simple"),
        (clients, threads, per_client),
        doc.runtime_ms,
        (done, failed),
    )
    if latency_limit_ms is not None:
        late = above_limit(doc, script, latency_limit_ms)
        lines.append(
            f"number of transactions above the {latency_limit_ms:.1f} ms latency limit: "
            f"{late}/{done} ({100 * late / max(1, done):.3f}%)"
        )
    lines.append(f"latency average = {figures.get('latency_average_ms', 0.0):.3f} ms")
    if stddev:
        lines.append(f"latency stddev = {figures.get('latency_stddev_ms', 0.0):.3f} ms")
    if "schedule_lag_avg_ms" in figures:
        lines.append(f"rate limit schedule lag: avg {figures['schedule_lag_avg_ms']:.3f} ms")
    lines.append(f"tps = {figures.get('tps', 0.0):.6f} (without initial connection time)")
    return lines


def above_limit(doc: Any, script: str, limit_ms: float) -> int:
    """Successful transactions slower than ``limit_ms`` (pgbench -L), from the script's histogram."""
    summary = doc.operations.get(script)
    if summary is None or not summary.histogram:
        return 0
    histogram = decode_histogram(summary.histogram)  # microseconds, 3 significant digits
    limit_us = limit_ms * 1000
    return int(
        sum(
            item.count_at_value_iterated_to
            for item in histogram.get_recorded_iterator()
            if histogram.get_lowest_equivalent_value(item.value_iterated_to) > limit_us
        )
    )


INIT_MESSAGES = {
    "drop tables": "dropping old tables...",
    "create tables": "creating tables...",
    "client-side generate": "generating data (client-side)...",
    "vacuum": "vacuuming...",
    "primary keys": "creating primary keys...",
    "foreign keys": "creating foreign keys...",
}


def init_lines(doc: Any) -> list[str]:
    """What `pgbench -i` prints (to stderr), from the load document's step timings: each step's
    message, the rows generated, and the "done in" line with every step's seconds. Printed after
    the load, not as each step starts."""
    steps = [(str(name), float(seconds)) for name, seconds in doc.extra.get("init_steps", [])]
    lines: list[str] = []
    for name, seconds in steps:
        lines.append(INIT_MESSAGES.get(name, f"{name}..."))
        if name == "client-side generate":
            rows = doc.extra.get("rows", {}).get("pgbench_accounts", 0)
            lines.append(f"{rows} of {rows} tuples (100%) done (elapsed {seconds:.2f} s, remaining 0.00 s)")
    total = sum(seconds for _, seconds in steps)
    parts = ", ".join(f"{name} {seconds:.2f} s" for name, seconds in steps)
    lines.append(f"done in {total:.2f} s ({parts}).")
    return lines
