"""The site's pages: what each shows, from the nights (nights.py) and their levels (levels.py).

``index_page`` is one row per benchmark; ``benchmark_page`` is one chart per metric with a series per
cell. Both are rendered by the report's Jinja environment (autoescaped), with inline CSS and SVG
only: a page opens from a directory, a bucket or a presigned URL with no other origin.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass

from markupsafe import Markup, escape

from benchwright.report.charts import PALETTE, Chart, ChartSeries
from benchwright.report.templating import render
from benchwright.report.units import fmt_latency, fmt_rate
from benchwright.site import svg
from benchwright.site.levels import CellLevels, Tonight, analyse
from benchwright.site.nights import Benchmark, Night

SPARK_NIGHTS = 30
METRICS: list[tuple[str, str, Callable[[Night], float | None]]] = [
    ("throughput", "ops/s", lambda n: n.throughput),
    ("p99 latency (worst operation)", "p99 (ms)", lambda n: n.p99_ms),
    ("error rate", "errors (%)", lambda n: n.error_rate * 100),
    ("cost per night", "USD", lambda n: n.cost),
    ("operations per dollar", "ops/$", lambda n: n.ops_per_dollar),
]


def repeat_band(night: Night) -> tuple[float, float]:
    """The spread of a night's repeats (min, max); NaN when it had one repeat (no band there)."""
    if len(night.repeats) < 2:
        return math.nan, math.nan
    return min(night.repeats), max(night.repeats)


BANDED = {"throughput"}  # the metrics whose repeats the store keeps per night
RANK = {"alarm": 0, "provisional": 1, "still": 2, "none": 3, "steady": 4}


def slug(name: str) -> str:
    """A benchmark's page name: safe in a path and a URL, stable across builds."""
    return re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-") or "benchmark"


@dataclass
class CellView:
    cell_id: str
    color: str
    verdict: Tonight
    last: Night
    levels: CellLevels


def cell_views(bench: Benchmark) -> list[CellView]:
    """Each cell's newest night and verdict, the alarmed ones first."""
    views = []
    for i, (cid, nights) in enumerate(bench.cells.items()):
        if nights:
            levels = analyse(nights)
            views.append(CellView(cid, PALETTE[i % len(PALETTE)], levels.tonight, nights[-1], levels))
    return sorted(views, key=lambda v: RANK.get(v.verdict.kind, 9))


def summary(views: list[CellView]) -> Tonight:
    """The benchmark's verdict: its most urgent cell's, with how many cells share the kind."""
    if not views:
        return Tonight("none", "no measured cells")
    top = views[0].verdict
    same = sum(1 for v in views if v.verdict.kind == top.kind)
    more = f" (and {same - 1} more cell(s))" if same > 1 and top.kind in ("alarm", "still") else ""
    return Tonight(top.kind, f"{views[0].cell_id}: {top.message}{more}", top.step)


def index_page(
    judged: list[tuple[Benchmark, list[CellView]]], title: str, href: Callable[[str], str] | None = None
) -> str:
    """One row per benchmark: last run, status, verdict, a sparkline per cell, figures and validity.
    ``href`` maps a page's relative path to the link written (a presigned URL in the bucket's site)."""
    rows = []
    for bench, views in judged:
        sparks = []
        for v in views:
            nights = bench.cells[v.cell_id][-SPARK_NIGHTS:]
            line = svg.sparkline([n.throughput for n in nights], [n.valid for n in nights], v.color,
                                 f"{v.cell_id}: ops/s over the last {len(nights)} nights")  # fmt: skip
            sparks.append((v, line))
        last = bench.last
        rows.append({
            "name": bench.name, "href": (href or str)(f"bench/{slug(bench.name)}.html"), "last": last,
            "verdict": summary(views), "sparks": sparks,
            "invalid": sum(1 for v in views if not v.last.valid), "cells": len(views),
        })  # fmt: skip
    return render("site_index.html.j2", title=title, rows=rows, fmt_rate=fmt_rate, fmt_latency=fmt_latency)


def _link(link: str | None) -> str | None:
    """A report link as seen from bench/: relative paths step up one directory."""
    if link is None or link.startswith(("http://", "https://")):
        return link
    return f"../{link}"


def _marks(bench: Benchmark, views: list[CellView]) -> tuple[list[svg.Mark], list[dict[str, object]]]:
    """Context markers (once per night, across cells) and every cell's level changes."""
    marks: list[svg.Mark] = []
    listed: list[dict[str, object]] = []
    seen: set[str] = set()
    for view in views:
        cell_id, nights = view.cell_id, bench.cells[view.cell_id]
        for ctx in view.levels.contexts[1:]:
            night = nights[ctx.start]
            key = f"{night.at:%Y-%m-%d}"
            if key not in seen:
                seen.add(key)
                marks.append(svg.Mark(svg.day(night.at), "context", "context", "; ".join(ctx.changes)))
                listed.append(
                    {"kind": "context", "at": night.at, "cell": cell_id, "text": "; ".join(ctx.changes)}
                )
        tonight_step = view.verdict.step if view.verdict.kind == "alarm" else None
        for step in [*view.levels.steps, *([tonight_step] if tonight_step else [])]:
            label = f"{step.change:+.0%}"
            marks.append(svg.Mark(svg.day(step.at), "change", label, f"{cell_id}: {step.words()}"))
            listed.append({"kind": "change", "at": step.at, "cell": cell_id, "text": step.words()})
    listed.sort(key=lambda m: m["at"], reverse=True)  # type: ignore[arg-type,return-value]
    return marks, listed


def benchmark_page(bench: Benchmark, views: list[CellView], site_title: str) -> str:
    """A chart per metric, a series per cell, with the markers, verdicts and recent runs."""
    marks, listed = _marks(bench, views)
    figures: list[tuple[str, Markup]] = []
    per_cell = []  # each night's x and escaped label, once for all five charts
    for v in views:
        nights = bench.cells[v.cell_id]
        labels = [
            escape(f"{v.cell_id} {n.at:%Y-%m-%d} {n.run_id}{'' if n.valid else ' (invalid)'}: ")
            for n in nights
        ]
        per_cell.append((v, nights, [svg.day(n.at) for n in nights], labels))
    for title, unit, value in METRICS:
        chart, unit_html = Chart(title, "night", unit), str(escape(unit))
        dots: dict[tuple[str, float], svg.Dot] = {}
        bands: dict[str, svg.Band] = {}
        for v, nights, xs, labels in per_cell:
            pts = []
            band: svg.Band = []
            for n, x, label in zip(nights, xs, labels, strict=True):
                y = value(n)
                if y is None:
                    continue
                pts.append((x, y))
                text = f"{label}{y:.4g} {unit_html}"
                if title in BANDED:
                    lo, hi = repeat_band(n)
                    band.append((x, lo, hi))
                    text += f" (repeats {lo:.4g} to {hi:.4g})" if math.isfinite(lo) else ""
                dots[(v.cell_id, x)] = svg.Dot(n.valid, _link(n.report), text)
            if pts:
                chart.series.append(ChartSeries(v.cell_id, pts, markers=True, color=v.color))
                bands[v.cell_id] = band
        if chart.series:
            words = ", the band the min to max of its repeats" if title in BANDED else ""
            figures.append(
                (f"{title} ({unit}), one line per cell{words}", svg.chart(chart, dots, marks, bands))
            )
    return render("site_benchmark.html.j2", site_title=site_title, bench=bench, views=views, figures=figures,
                  listed=listed, runs=list(reversed(bench.runs[-30:])), link=_link,
                  fmt_rate=fmt_rate, fmt_latency=fmt_latency)  # fmt: skip
