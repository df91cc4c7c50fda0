"""The report's per-second server panel: for each cell with Enhanced Monitoring or Performance
Insights series, the client's 1 s throughput and p99 and the server's series on one time axis
(seconds since the measured phase started), and each throughput drop with what moved at its seconds.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from benchwright.judge.validity import complete_intervals
from benchwright.report import charts
from benchwright.report.server_align import annotate, server_series
from benchwright.runs import CellResult, RunRecord

X_LABEL = "seconds since the measured phase started"
OS_SHOWN = ("os.cpu.total", "os.cpu.wait", "os.disk.iops", "os.disk.queue", "os.load.one")


@dataclass
class Panel:
    cell: str
    charts: list[dict[str, Any]]
    drops: list[str]  # one line per drop: its seconds, throughput, what moved


def _line(name: str, points: list[tuple[float, float]], axis: str = "left") -> charts.ChartSeries:
    return charts.ChartSeries(name, points, axis=axis, dashed=axis == "right")


def cell_panel(cell: CellResult, buckets: int) -> Panel | None:
    """The panel of one cell, or None when it has no server series or no client intervals."""
    doc = cell.measured
    if doc is None or not doc.intervals:
        return None
    series = server_series([*cell.metrics, *doc.metrics])
    if not series:
        return None
    intervals = complete_intervals(doc)
    client = charts.Chart(f"{cell.cell_id}: client, per second", X_LABEL, "throughput (ops/s)", "p99 (ms)")
    client.series = [
        _line("ops/s", [(s.t, s.throughput) for s in intervals]),
        _line("p99", [(s.t, s.p99_us / 1000) for s in intervals if s.p99_us], axis="right"),
    ]
    os_chart = charts.Chart(f"{cell.cell_id}: server OS (Enhanced Monitoring)", X_LABEL, "percent", "count")
    for s in series:
        if s.name in OS_SHOWN:
            axis = "left" if s.unit == "Percent" else "right"
            os_chart.series.append(_line(f"{s.name} ({s.source})", [(p.t, p.value) for p in s.points], axis))
    load = charts.Chart(f"{cell.cell_id}: DB load by wait event (Performance Insights)", X_LABEL, "sessions")
    load.series = [
        _line(f"{s.name} ({s.source})", [(p.t, p.value) for p in s.points])
        for s in series
        if s.source.startswith("performance_insights")
    ]
    specs = [charts.spec(c, buckets) for c in (client, os_chart, load) if c.series]
    lines = [d.text() for d in annotate(intervals, series)]
    return Panel(cell=cell.cell_id, charts=[s for s in specs if s is not None], drops=lines)


def server_panels(record: RunRecord, buckets: int) -> list[Panel]:
    """Every cell's panel (cells without server series have none)."""
    return [p for cell in record.cells if (p := cell_panel(cell, buckets)) is not None]
