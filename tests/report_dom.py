"""Reading a rendered report back: the chart specs uPlot is given, and what a browser drew."""

from __future__ import annotations

import html
import json
import re
from typing import Any

SPEC = re.compile(r'<script type="application/json" class="chart-spec">(.*?)</script>', re.S)


def chart_specs(html: str) -> list[dict[str, Any]]:
    """Every chart of the report, as the JSON handed to uPlot (charts.spec)."""
    return [json.loads(m) for m in SPEC.findall(html)]


def chart(html: str, title_start: str) -> dict[str, Any]:
    found = [c for c in chart_specs(html) if c["title"].startswith(title_start)]
    assert len(found) == 1, (title_start, [c["title"] for c in chart_specs(html)])
    return found[0]


def series_points(html: str) -> dict[str, int]:
    """Series name -> points drawn (the largest, where several charts have a series of that name)."""
    out: dict[str, int] = {}
    for spec in chart_specs(html):
        for s in spec["series"]:
            out[s["name"]] = max(out.get(s["name"], 0), s["points"])
    return out


def drawn_figures(dom: str) -> list[dict[str, Any]]:
    """From a browser's DOM dump: each chart's title, whether uPlot drew it, its axis labels as drawn
    (recorded by report.js) and its legend (uPlot's legend table: the x axis, then each series)."""
    out = []
    for attrs, inner in re.findall(r"<figure ([^>]*)>(.*?)</figure>", dom, re.S):
        fields = {k: html.unescape(v) for k, v in re.findall(r'([\w-]+)="([^"]*)"', attrs)}
        out.append({
            "title": fields.get("data-title", ""),
            "drawn": fields.get("data-drawn") == "1",
            "error": fields.get("data-error"),
            "x": json.loads(fields.get("data-ticks-x", "[]")),
            "y": json.loads(fields.get("data-ticks-y", "[]")),
            "legend": [html.unescape(t) for t in re.findall(r'class="u-label">([^<]*)<', inner)],
        })  # fmt: skip
    return out
