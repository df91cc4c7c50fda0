"""Inline SVG for the site: a sparkline per cell on the index, and a chart per metric on a benchmark
page with the nights on a date axis, context markers, change points, greyed invalid nights and a
link per point. SVG (not the report's uPlot canvas) because those marks must be DOM elements a
reader can click and a test can find, and the index must stay small without a script.

What a chart shows comes in as the report's own ``charts.Chart`` / ``ChartSeries`` (names, colours
from ``charts.PALETTE``); this module only places it. The viewBox scales to the page width.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import cache

from markupsafe import Markup, escape

from benchwright.report.charts import Chart

WIDTH, HEIGHT = 1000, 240
LEFT, RIGHT, TOP, BOTTOM = 64, 12, 14, 34


@dataclass(frozen=True)
class Dot:
    """What a point says beyond (x, y): greyed when invalid, a link to its run's report."""

    valid: bool
    link: str | None
    title: str  # HTML text, escaped by the caller once per night (a page has thousands of dots)


@dataclass(frozen=True)
class Mark:
    """A vertical line on a night: ``context`` (the fingerprint changed) or ``change`` (a level step)."""

    x: float
    kind: str
    label: str
    title: str


def day(at: datetime) -> float:
    """A night as a number on the x axis (days since 1970, UTC)."""
    return at.timestamp() / 86400.0


@cache
def _date(x: float) -> str:
    return f"{(datetime(1970, 1, 1, tzinfo=UTC) + timedelta(days=x)).date():%Y-%m-%d}"


def nice_ticks(low: float, high: float, count: int = 5) -> list[float]:
    """Round-numbered ticks (1, 2, 2.5, 5 x 10^k) covering [low, high]; distinct by construction."""
    if not math.isfinite(low) or not math.isfinite(high):
        return [0.0]
    if high <= low:
        high = low + (abs(low) or 1.0)
    raw = (high - low) / count
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw)
    first = math.floor(low / step) * step
    return [first + i * step for i in range(math.ceil((high - first) / step) + 1)]


def _label(value: float) -> str:
    a = abs(value)
    if a >= 1e6:
        return f"{value / 1e6:.4g}M"
    if a >= 1e4:
        return f"{value / 1e3:.4g}k"
    return f"{value:.4g}"


def sparkline(values: Sequence[float | None], valid: Sequence[bool], color: str, title: str) -> Markup:
    """A 120 x 26 line of the last nights; invalid nights as grey dots, gaps where a night is missing."""
    w, h = 120.0, 26.0
    nums = [v for v in values if v is not None]
    if not nums:
        return Markup('<span class="muted">no data</span>')
    lo, hi = min(nums), max(nums)
    span = (hi - lo) or (abs(hi) or 1.0)
    step = w / max(len(values) - 1, 1)

    def y(v: float) -> float:
        return h - 2 - (v - lo) / span * (h - 4)

    pts = " ".join(f"{i * step:.1f},{y(v):.1f}" for i, v in enumerate(values) if v is not None)
    grey = "".join(f'<circle cx="{i * step:.1f}" cy="{y(v):.1f}" r="1.8" class="invalid"/>'
                   for i, (v, ok) in enumerate(zip(values, valid, strict=True)) if v is not None and not ok)  # fmt: skip
    return Markup(
        f'<svg class="spark" viewBox="-2 0 {w + 4:.0f} {h:.0f}" width="{w + 4:.0f}" height="{h:.0f}" role="img">'
        f"<title>{escape(title)}</title>"
        f'<polyline fill="none" stroke="{color}" stroke-width="1.4" points="{pts}"/>{grey}</svg>'
    )


Band = list[tuple[float, float, float]]  # (x, low, high) per night: the spread of its repeats


def _runs(band: Band) -> list[Band]:
    """A band split where a night has no spread to show (one repeat): no area is drawn across it."""
    out: list[Band] = [[]]
    for x, lo, hi in sorted(band):
        if math.isfinite(lo) and math.isfinite(hi):
            out[-1].append((x, lo, hi))
        elif out[-1]:
            out.append([])
    return [r for r in out if len(r) >= 2]


def _band_polygons(
    spec: Chart, bands: dict[str, Band], px: Callable[[float], float], py: Callable[[float], float]
) -> list[str]:
    """Each series' band (the min-max of a night's repeats) as shaded polygons, one per unbroken run."""
    out: list[str] = []
    for s in spec.series:
        for run in _runs(bands.get(s.name, [])):
            upper = " ".join(f"{px(x):.1f},{py(hi):.1f}" for x, _, hi in run)
            lower = " ".join(f"{px(x):.1f},{py(lo):.1f}" for x, lo, _ in reversed(run))
            out.append(f'<polygon class="band" data-name="{escape(s.name)}" fill="{s.color}" fill-opacity="0.18" '
                       f'stroke="none" points="{upper} {lower}"><title>{escape(s.name)}: min to max of the '
                       "night's repeats</title></polygon>")  # fmt: skip
    return out


def chart(
    spec: Chart,
    dots: dict[tuple[str, float], Dot],
    marks: Sequence[Mark],
    bands: dict[str, Band] | None = None,
) -> Markup:
    """One metric over the nights: a line per series, a dot per night (linked, greyed when invalid),
    and, where ``bands`` has the series, the min-max of each night's repeats as a shaded area."""
    bands = bands or {}
    xs = [x for s in spec.series for x, _ in s.points]
    ys = [y for s in spec.series for _, y in s.points if math.isfinite(y)]
    ys += [v for b in bands.values() for _, lo, hi in b for v in (lo, hi) if math.isfinite(v)]
    if not xs or not ys:
        return Markup(f'<p class="muted">{escape(spec.title)}: no nights with this figure</p>')
    x0, x1 = min(xs), max(xs)
    x1 = x1 if x1 > x0 else x0 + 1
    yt = nice_ticks(min(0.0, min(ys)), max(ys))
    y0, y1 = yt[0], yt[-1]
    pw, ph = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    def px(x: float) -> float:
        return LEFT + (x - x0) / (x1 - x0) * pw

    def py(y: float) -> float:
        return TOP + ph - (y - y0) / ((y1 - y0) or 1) * ph

    out = [f'<svg class="chart" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" data-title="{escape(spec.title)}">',
           f"<title>{escape(spec.title)}</title>"]  # fmt: skip
    for t in yt:
        out.append(f'<line class="grid" x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{py(t):.1f}" y2="{py(t):.1f}"/>'
                   f'<text class="tick" x="{LEFT - 6}" y="{py(t) + 4:.1f}" text-anchor="end">{_label(t)}</text>')  # fmt: skip
    for t in nice_ticks(x0, x1, 6) if x1 - x0 >= 6 else range(math.ceil(x0), math.floor(x1) + 1):
        if x0 <= t <= x1:
            out.append(f'<text class="tick" x="{px(t):.1f}" y="{HEIGHT - 12}" text-anchor="middle">'
                       f"{_date(t)}</text>")  # fmt: skip
    out.append(f'<text class="axis" x="12" y="{TOP + ph / 2:.0f}" transform="rotate(-90 12 {TOP + ph / 2:.0f})" '
               f'text-anchor="middle">{escape(spec.y_label)}</text>')  # fmt: skip
    for m in marks:
        x = px(m.x)
        out.append(f'<g class="mark {m.kind}" data-night="{_date(m.x)}"><title>{escape(m.title)}</title>'
                   f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{TOP}" y2="{TOP + ph}"/>'
                   f'<text x="{x + 3:.1f}" y="{TOP + (10 if m.kind == "change" else 22)}">{escape(m.label)}</text></g>')  # fmt: skip
    out += _band_polygons(spec, bands, px, py)
    blank = Dot(True, None, "")
    for s in spec.series:
        pts = sorted((px(x), py(y), x) for x, y in s.points if math.isfinite(y))
        line = " ".join(f"{a:.1f},{b:.1f}" for a, b, _ in pts)
        out.append(f'<g class="series" data-name="{escape(s.name)}"><polyline fill="none" stroke="{s.color}" '
                   f'stroke-width="1.5" points="{line}"/>')  # fmt: skip
        ok = f'r="3" fill="{s.color}" class="ok"'
        for a, b, x in pts:
            d = dots.get((s.name, x), blank)
            look = ok if d.valid else 'r="3" fill="#bbb" class="invalid"'
            dot = f'<circle cx="{a:.1f}" cy="{b:.1f}" {look} data-night="{_date(x)}"><title>{d.title}</title></circle>'
            out.append(f'<a href="{escape(d.link)}">{dot}</a>' if d.link else dot)
        out.append("</g>")
    out.append("</svg>")
    return Markup("".join(out))
