"""Which charts a run's report shows, built from its record: sweeps over numeric matrix parameters,
the latency percentile distribution from the stored histograms, each cell's series over time (small
matrices only), and throughput across earlier runs. Each returns ``charts.spec`` dicts for the template.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from benchwright.judge.validity import complete_intervals
from benchwright.report import charts
from benchwright.results import MetricSeries, as_number
from benchwright.runs import CellResult, RunRecord

Spec = dict[str, Any]

CPU_METRICS = ("cpu_percent", "CPUUtilization", "EngineCPUUtilization", "server_cpu_percent")
# Not the local server's ReadOps/WriteOps: those count read()/write() syscalls (a Redis socket's),
# not disk operations. Locally IOPS are the host disk's (proc:host ReadIOPS / WriteIOPS).
IOPS_METRICS = ("ReadIOPS", "WriteIOPS", "VolumeReadOps", "VolumeWriteOps", "read_iops", "write_iops")
BALANCE_METRICS = ("BurstBalance", "CPUCreditBalance", "EBSIOBalance%", "EBSByteBalance%")
PERCENTILES = (50.0, 90.0, 99.0, 99.9, 99.99, 99.999)
MAX_DISTRIBUTION_LINES = 12
MAX_SERIES_CELLS = 8  # more cells than this: sweep charts and the table, not 2 x N time series


def _some(*specs: Spec | None) -> list[Spec]:
    return [s for s in specs if s is not None]


def _short(param: str) -> str:
    return param.rsplit(".", 1)[-1]


def _sweep_groups(
    record: RunRecord, param: str, params: list[str]
) -> dict[str, dict[float, list[tuple[float, float]]]]:
    """(throughput, worst p99 in ms) per x value, per combination of the other parameters."""
    groups: dict[str, dict[float, list[tuple[float, float]]]] = {}
    for cell in record.cells:
        doc = cell.measured
        x = as_number(cell.parameters.get(param))
        if doc is None or x is None:
            continue
        others = ", ".join(
            f"{_short(k)}={cell.parameters[k]}" for k in params if k != param and k in cell.parameters
        )
        p99 = max((s.p99_us for s in doc.succeeded().values()), default=0.0) / 1000
        groups.setdefault(others, {}).setdefault(x, []).append((doc.throughput, p99))
    return groups


def sweep_charts(record: RunRecord) -> list[Spec]:
    """For each numeric matrix parameter with 2+ values: throughput and worst p99 against it, one
    line per combination of the other parameters (means over repeats). The legend names the other
    parameters, or the figure itself ("throughput", "worst p99") when there are none."""
    params = sorted({k for c in record.cells for k in c.parameters})
    out: list[Spec] = []
    for param in params:
        values = {as_number(c.parameters.get(param)) for c in record.cells}
        if None in values or len(values) < 2:
            continue
        xs = sorted(v for v in values if v is not None)
        log_x = xs[0] > 0 and xs[-1] / xs[0] >= 10
        name = _short(param)
        tput = charts.Chart(f"throughput vs {name}", name, "throughput (ops/s)", log_x=log_x)
        lat = charts.Chart(f"worst p99 latency vs {name}", name, "p99 latency (ms)", log_x=log_x)
        for others, by_x in _sweep_groups(record, param, params).items():
            mean = sorted((x, [sum(col) / len(v) for col in zip(*v, strict=True)]) for x, v in by_x.items())
            tput.series.append(
                charts.ChartSeries(others or "throughput", [(x, m[0]) for x, m in mean], markers=True)
            )
            lat.series.append(charts.ChartSeries(others or "worst p99", [(x, m[1]) for x, m in mean], markers=True))  # fmt: skip
        out += _some(charts.spec(tput), charts.spec(lat))
    return out


def _nines(percentile: float) -> float:
    """Percentile on a "number of nines" axis: 90 -> 1, 99 -> 2, 99.9 -> 3 (the tail spread out)."""
    return -math.log10(1 - percentile / 100)


def distribution_chart(record: RunRecord) -> Spec | None:
    """Latency by percentile (50 to 99.999) per cell and operation, from each phase's HdrHistogram:
    the whole distribution, where the tables give five points of it."""
    from benchwright.runner.measure import decode_histogram

    chart = charts.Chart(
        "latency percentile distribution (measured phase)",
        "percentile",
        "latency (ms)",
        x_ticks=[(_nines(p), f"{p:g}") for p in PERCENTILES],
    )
    steps = [50 + 50 * (1 - 10 ** (-k / 8)) for k in range(0, 41)]  # 50 .. 99.999, dense in the tail
    for cell in record.cells:
        doc = cell.measured
        if doc is None or cell.repeat:
            continue
        for op, summary in doc.operations.items():
            if not summary.histogram or not summary.operations:
                continue
            hist = decode_histogram(summary.histogram)
            pts = [(_nines(q), hist.get_value_at_percentile(q) / 1000) for q in steps]
            name = op if len(record.cells) == 1 else f"{cell.cell_id} {op}"
            chart.series.append(charts.ChartSeries(name, pts))
    chart.series = chart.series[:MAX_DISTRIBUTION_LINES]
    return charts.spec(chart)


def _metric(series: Sequence[MetricSeries], names: Sequence[str]) -> list[MetricSeries]:
    """The named series, each (name, source) once: cell and document may both carry it."""
    unique = {(s.name, s.source): s for s in series if s.name in names and s.points}
    return list(unique.values())


def _overlay(metrics: Sequence[MetricSeries], names: Sequence[str], axis: str = "right") -> list[charts.ChartSeries]:  # fmt: skip
    return [
        charts.ChartSeries(
            f"{m.name} ({m.source})", [(p.t, p.value) for p in m.points], axis=axis, dashed=axis == "right"
        )
        for m in _metric(metrics, names)
    ]


def cell_charts(cell: CellResult, buckets: int) -> list[Spec]:
    """Throughput with CPU, latency percentiles with IOPS, and any burst/credit balances, over time."""
    doc = cell.measured
    if doc is None or not doc.intervals:
        return []
    intervals = complete_intervals(doc)
    metrics = [*cell.metrics, *doc.metrics]
    title = f"{cell.cell_id} (repeat {cell.repeat})" if cell.repeat else cell.cell_id
    throughput = charts.Chart(f"{title}: throughput and CPU", "seconds", "throughput (ops/s)", "CPU %")
    throughput.series.append(charts.ChartSeries("ops/s", [(s.t, s.throughput) for s in intervals]))
    if any(s.errors for s in intervals):  # failures per second, on the same axis: never in ops/s
        width = doc.measurement.interval_s
        throughput.series.append(charts.ChartSeries("errors/s", [(s.t, s.errors / width) for s in intervals]))
    throughput.series += _overlay(metrics, CPU_METRICS)
    latency = charts.Chart(f"{title}: latency and IOPS", "seconds", "latency (ms)", "IOPS")
    latency.series.append(charts.ChartSeries("p50", [(s.t, s.p50_us / 1000) for s in intervals if s.p50_us]))
    latency.series.append(charts.ChartSeries("p99", [(s.t, s.p99_us / 1000) for s in intervals if s.p99_us]))
    latency.series += _overlay(metrics, IOPS_METRICS)
    balances = charts.Chart(f"{title}: burst and credit balances", "seconds", "balance")
    balances.series = _overlay(metrics, BALANCE_METRICS, axis="left")
    return _some(
        charts.spec(throughput, buckets),
        charts.spec(latency, buckets),
        charts.spec(balances, buckets) if balances.series else None,
    )


def series_charts(record: RunRecord, buckets: int) -> list[Spec] | None:
    """Every cell's charts over time, or None past MAX_SERIES_CELLS cells (the sweeps compare them)."""
    if len(record.cells) > MAX_SERIES_CELLS:
        return None
    return [s for cell in record.cells for s in cell_charts(cell, buckets)]


def history_chart(record: RunRecord, history: Sequence[RunRecord]) -> Spec | None:
    """Measured throughput per cell across earlier runs of the same spec and this one."""
    runs = sorted([*[h for h in history if h.run_id != record.run_id], record], key=lambda r: r.started_at)
    if len(runs) < 2:
        return None
    chart = charts.Chart(
        "throughput across runs of this spec", "run number (oldest first)", "throughput (ops/s)"
    )
    by_cell: dict[str, list[tuple[float, float]]] = {}
    for i, run in enumerate(runs, start=1):
        for cell in run.cells:
            doc = cell.measured
            if doc is not None and cell.repeat == 0:
                by_cell.setdefault(cell.cell_id, []).append((float(i), doc.throughput))
    chart.series = [charts.ChartSeries(cid, pts, markers=True) for cid, pts in by_cell.items()]
    return charts.spec(chart)
