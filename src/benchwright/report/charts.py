"""Inline SVG charts for the HTML report: no JavaScript library, no network, no dependency.

Charts are drawn here in Python as plain SVG so the report is one self-contained file that renders
anywhere (a browser, a CI artifact viewer, an e-mail client that allows SVG). Long series are
downsampled with min/max buckets, which keeps every spike visible while bounding the file size.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from html import escape

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


def nice_ticks(low: float, high: float, count: int = 5) -> list[float]:
    """Round tick values (1, 2, 2.5, 5 x 10^k steps) covering [low, high]."""
    if not math.isfinite(low) or not math.isfinite(high):
        return [0.0, 1.0]
    if high <= low:
        high = low + (abs(low) or 1.0)
    raw = (high - low) / max(count, 1)
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw)
    start = math.floor(low / step) * step
    ticks = []
    value = start
    while value <= high + step * 1e-9:
        ticks.append(round(value, 10))
        value += step
    if ticks[-1] < high:
        ticks.append(round(value, 10))
    return ticks


def fmt_tick(value: float) -> str:
    magnitude = abs(value)
    if magnitude >= 1e6:
        return f"{value / 1e6:g}M"
    if magnitude >= 1e4:
        return f"{value / 1e3:g}k"
    return f"{value:g}"


@dataclass
class ChartSeries:
    name: str
    points: list[Point]
    axis: str = "left"  # or "right": a second y axis for overlaid host metrics
    dashed: bool = False
    markers: bool = False
    color: str | None = None


@dataclass
class Chart:
    title: str
    x_label: str
    y_label: str
    y2_label: str = ""
    series: list[ChartSeries] = field(default_factory=list)
    log_x: bool = False
    x_ticks: list[tuple[float, str]] | None = None  # fixed (value, label) ticks, e.g. percentiles
    width: int = 860
    height: int = 300


MARGIN_LEFT, MARGIN_RIGHT, MARGIN_TOP, MARGIN_BOTTOM = 64, 64, 34, 64


def _legend_label(s: ChartSeries) -> str:
    return s.name + (" (right axis)" if s.axis == "right" else "")


def render(chart: Chart, buckets: int = 400) -> str:
    """The chart as an ``<svg>`` element; every series is a ``<path class="series">``."""
    series = [s for s in chart.series if s.points]
    w = chart.width
    # the legend wraps onto as many rows as it needs, below the plot
    legend_rows: list[int] = []  # row index per series
    row, cursor = 0, MARGIN_LEFT
    for s in series:
        width = 30 + 7 * len(_legend_label(s))
        if cursor + width > w - 8 and cursor > MARGIN_LEFT:
            row, cursor = row + 1, MARGIN_LEFT
        legend_rows.append(row)
        cursor += width
    extra = 16 * (legend_rows[-1] if legend_rows else 0)
    h = chart.height + extra
    plot_w, plot_h = w - MARGIN_LEFT - MARGIN_RIGHT, chart.height - MARGIN_TOP - MARGIN_BOTTOM
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" viewBox="0 0 {w} {h}" width="{w}" height="{h}" '
        f'role="img" aria-label="{escape(chart.title)}">',
        f'<text x="{MARGIN_LEFT}" y="20" class="chart-title">{escape(chart.title)}</text>',
    ]
    if not series:
        parts.append(f'<text x="{w / 2}" y="{h / 2}" text-anchor="middle" class="empty">no data</text></svg>')
        return "".join(parts)

    def xv(x: float) -> float:
        return math.log10(x) if chart.log_x else x

    drawn = {id(s): downsample(s.points, buckets) if not s.markers else list(s.points) for s in series}
    xs = [xv(p[0]) for s in series for p in drawn[id(s)] if not chart.log_x or p[0] > 0]
    x_low, x_high = min(xs), max(xs)
    if x_high == x_low:
        x_low, x_high = x_low - 1, x_high + 1

    def y_range(axis: str) -> list[float]:
        ys = [p[1] for s in series if s.axis == axis for p in drawn[id(s)]]
        return nice_ticks(min(0.0, *ys), max(ys)) if ys else []

    ticks = {"left": y_range("left"), "right": y_range("right")}

    def px(x: float) -> float:
        return MARGIN_LEFT + (xv(x) - x_low) / (x_high - x_low) * plot_w

    def py(y: float, axis: str) -> float:
        t = ticks[axis]
        return MARGIN_TOP + plot_h - (y - t[0]) / ((t[-1] - t[0]) or 1.0) * plot_h

    # grid and axes
    bottom, right = MARGIN_TOP + plot_h, MARGIN_LEFT + plot_w
    for value in ticks["left"]:
        y = py(value, "left")
        parts.append(f'<line x1="{MARGIN_LEFT}" y1="{y:.1f}" x2="{right}" y2="{y:.1f}" class="grid"/>')
        parts.append(f'<text x="{MARGIN_LEFT - 6}" y="{y + 4:.1f}" text-anchor="end" class="tick">'
                     f"{fmt_tick(value)}</text>")  # fmt: skip
    for value in ticks["right"]:
        y = py(value, "right")
        parts.append(f'<text x="{right + 6}" y="{y + 4:.1f}" class="tick">{fmt_tick(value)}</text>')
    labelled: list[tuple[float, str]]
    if chart.x_ticks is not None:
        labelled = list(chart.x_ticks)
    elif chart.log_x:
        # the data's own x values first (1000 and 1024 are both real cells), then powers of ten
        data_x = sorted({p[0] for s in series for p in drawn[id(s)] if s.markers and p[0] > 0})
        powers = [10.0**e for e in range(math.floor(x_low), math.ceil(x_high) + 1)]
        labelled = [(v, fmt_tick(v)) for v in [*data_x, *powers]]
    else:
        labelled = [(v, fmt_tick(v)) for v in nice_ticks(x_low, x_high, 8)]
    kept: list[float] = []  # pixel positions of drawn labels: none closer than their width
    for value, text in labelled:
        if chart.log_x and value <= 0:
            continue
        x = px(value)
        too_close = any(abs(x - k) < 7 * max(len(text), 3) + 6 for k in kept)
        if MARGIN_LEFT - 0.5 <= x <= right + 0.5 and not too_close:
            kept.append(x)
            parts.append(f'<line x1="{x:.1f}" y1="{bottom}" x2="{x:.1f}" y2="{bottom + 4}" class="axis"/>')
            parts.append(f'<text x="{x:.1f}" y="{bottom + 16}" text-anchor="middle" class="tick">'
                         f"{escape(text)}</text>")  # fmt: skip
    parts.append(
        f'<rect x="{MARGIN_LEFT}" y="{MARGIN_TOP}" width="{plot_w}" height="{plot_h}" class="frame"/>'
    )
    parts.append(f'<text x="{MARGIN_LEFT + plot_w / 2}" y="{chart.height - 30}" text-anchor="middle" class="label">'
                 f"{escape(chart.x_label)}</text>")  # fmt: skip
    parts.append(f'<text transform="translate(14 {MARGIN_TOP + plot_h / 2}) rotate(-90)" text-anchor="middle" '
                 f'class="label">{escape(chart.y_label)}</text>')  # fmt: skip
    if ticks["right"]:
        parts.append(f'<text transform="translate({w - 10} {MARGIN_TOP + plot_h / 2}) rotate(90)" '
                     f'text-anchor="middle" class="label">{escape(chart.y2_label)}</text>')  # fmt: skip

    # series and legend
    legend_x, current_row = MARGIN_LEFT, 0
    for i, s in enumerate(series):
        color = s.color or PALETTE[i % len(PALETTE)]
        pts = [(px(x), py(y, s.axis)) for x, y in drawn[id(s)] if not chart.log_x or x > 0]
        d = "M" + " L".join(f"{x:.1f} {y:.1f}" for x, y in pts)
        dash = ' stroke-dasharray="5 3"' if s.dashed else ""
        parts.append(f'<path class="series" data-name="{escape(s.name)}" data-points="{len(pts)}" d="{d}" '
                     f'fill="none" stroke="{color}" stroke-width="1.6"{dash}><title>{escape(s.name)}</title></path>')  # fmt: skip
        if s.markers:
            for (x, y), (vx, vy) in zip(pts, drawn[id(s)], strict=False):
                parts.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3.5" fill="{color}">'
                             f"<title>{escape(s.name)}: {fmt_tick(vx)} -> {vy:,.1f}</title></circle>")  # fmt: skip
        label = _legend_label(s)
        if legend_rows[i] != current_row:
            legend_x, current_row = MARGIN_LEFT, legend_rows[i]
        ly = chart.height - 10 + 16 * current_row
        parts.append(f'<line x1="{legend_x}" y1="{ly}" x2="{legend_x + 18}" y2="{ly}" stroke="{color}" '
                     f'stroke-width="3"{dash}/><text x="{legend_x + 22}" y="{ly + 4}" class="legend">{escape(label)}</text>')  # fmt: skip
        legend_x += 30 + 7 * len(label)
    parts.append("</svg>")
    return "".join(parts)
