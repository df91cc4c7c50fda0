"""The report's charts as data for uPlot: what to draw is decided here, how to draw it by uPlot.

A chart is a ``Chart`` of named series; ``spec()`` turns it into the JSON uPlot is given (one x
array shared by every series, ``null`` where a series has no point) plus the labels and axis
settings. Ticks, legends, zoom and tooltips are uPlot's (report/templates/report.js builds the
options), so no tick placement or legend layout is hand-written here. Long series are downsampled
with min/max buckets, which keeps every spike visible while bounding the file size.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

PALETTE = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf"]
Point = tuple[float, float]


def downsample(points: Sequence[Point], buckets: int = 400) -> list[Point]:
    """At most ``2 * buckets`` points: the minimum and maximum of each bucket, in time order."""
    n = len(points)
    if n <= 2 * buckets:
        return list(points)
    out: list[Point] = []
    size = n / buckets
    for b in range(buckets):
        chunk = points[int(b * size) : int((b + 1) * size)]
        if not chunk:
            continue
        low = min(chunk, key=lambda p: p[1])
        high = max(chunk, key=lambda p: p[1])
        out.extend(sorted({low, high}, key=lambda p: p[0]))
    return out


@dataclass
class ChartSeries:
    name: str  # the legend's text: it says what the line is (metric and source, or the cell)
    points: list[Point]
    axis: str = "left"  # or "right": a second y axis for overlaid host metrics
    dashed: bool = False
    markers: bool = False
    color: str | None = None


@dataclass
class Chart:
    title: str
    x_label: str  # with its unit: "seconds", "percentile"
    y_label: str  # with its unit: "ops/s", "latency (ms)"
    y2_label: str = ""
    series: list[ChartSeries] = field(default_factory=list)
    log_x: bool = False
    x_ticks: list[tuple[float, str]] | None = None  # fixed (value, label) ticks, e.g. percentiles


def _compact(value: float) -> float | int:
    """Five significant digits: the chart cannot show more, and the report stays small."""
    if not math.isfinite(value):
        return 0
    short = float(f"{value:.5g}")
    return int(short) if short.is_integer() and abs(short) < 1e15 else short


def _aligned(series: Sequence[list[Point]]) -> list[list[float | int | None]]:
    """uPlot's data layout: the sorted union of x values, then each series' y at those x (or None)."""
    xs = sorted({_compact(x) for pts in series for x, _ in pts})
    data: list[list[float | int | None]] = [list(xs)]
    for pts in series:
        by_x = {_compact(x): _compact(y) for x, y in pts}
        data.append([by_x.get(x) for x in xs])
    return data


def spec(chart: Chart, buckets: int = 400) -> dict[str, Any] | None:
    """The JSON the report's script hands to uPlot, or None when no series has a point to draw
    (a log axis drops x <= 0, which it cannot place)."""
    kept: list[tuple[ChartSeries, list[Point]]] = []
    for s in chart.series:
        pts = list(s.points) if s.markers else downsample(s.points, buckets)
        pts = [p for p in pts if not chart.log_x or p[0] > 0]
        if pts:
            kept.append((s, pts))
    if not kept:
        return None
    return {
        "title": chart.title,
        "x_label": chart.x_label,
        "y_label": chart.y_label,
        "y2_label": chart.y2_label if any(s.axis == "right" for s, _ in kept) else "",
        "log_x": chart.log_x,
        "x_ticks": [[_compact(v), label] for v, label in chart.x_ticks] if chart.x_ticks else None,
        "series": [
            {
                "name": s.name,
                "axis": s.axis,
                "dashed": s.dashed,
                "markers": s.markers,
                "color": s.color or PALETTE[i % len(PALETTE)],
                "points": len(pts),
            }
            for i, (s, pts) in enumerate(kept)
        ],
        "data": _aligned([pts for _, pts in kept]),
    }
