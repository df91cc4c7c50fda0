"""HTML report: the seed's tables, a latency percentile-distribution chart from the stored histograms,
scrollable tables, log-axis labels that do not overlap, sweep legends that name what they show, no
per-cell time series for large matrices, and no socket syscalls presented as IOPS."""

from __future__ import annotations

import itertools
import re

from benchwright.report import charts
from benchwright.report.html import render_html
from benchwright.report.sample import make_run, noisy_series
from benchwright.results import MetricPoint, MetricSeries
from benchwright.runner.measure import encode_histogram, new_histogram


def with_histograms(run):  # type: ignore[no-untyped-def]
    """Give every operation a real HdrHistogram (1-20 ms), as the runner stores it."""
    for cell in run.cells:
        for summary in cell.measured.operations.values():
            hist = new_histogram()
            for i in range(2000):
                hist.record_value(1000 + (i * 37) % 19_000)
            summary.histogram = encode_histogram(hist)
    return run


def test_distribution_chart_and_seed_tables() -> None:
    run = with_histograms(make_run("d", "r", [("c", {}, noisy_series(1000, 20))]))
    html = render_html(run)
    chart = re.search(r"latency percentile distribution.*?</svg>", html, re.S)
    assert chart, "no distribution chart"
    ticks = re.findall(r'class="tick">([^<]*)</text>', chart.group(0))
    assert {"50", "90", "99", "99.9"} <= set(ticks)
    assert chart.group(0).count('class="series"') == 2  # READ and UPDATE
    assert "The seed&#x27;s tables" in html or "The seed's tables" in html
    assert html.count('<div class="table-scroll">') >= 2


def test_log_axis_labels_never_overlap() -> None:
    chart = charts.Chart("t", "records", "ops/s", log_x=True)
    chart.series.append(
        charts.ChartSeries("s", [(1000.0, 5.0), (1024.0, 6.0), (100_000.0, 7.0)], markers=True)
    )
    svg = charts.render(chart)
    xs = [
        (float(x), t)
        for x, t in re.findall(
            r'<text x="([\d.]+)" y="[\d.]+" text-anchor="middle" class="tick">([^<]*)<', svg
        )
    ]
    assert "1000" in [t for _, t in xs] and "1024" not in [t for _, t in xs]  # 1024 sits on 1000: dropped
    positions = sorted(x for x, _ in xs)
    assert all(b - a >= 20 for a, b in itertools.pairwise(positions))


def test_sweep_legend_names_the_figure_and_large_matrices_draw_no_time_series() -> None:
    cells = [
        (f"threads={t}", {"workload.phases.run.threads": t}, noisy_series(100 * t, 20, seed=t))
        for t in range(1, 21)
    ]
    html = render_html(make_run("sweep", "r", cells))
    p99 = re.search(r"worst p99 latency vs workload.phases.run.threads.*?</svg>", html, re.S)
    assert p99 and 'data-name="worst p99"' in p99.group(0) and 'data-name="throughput"' not in p99.group(0)
    assert "throughput and CPU" not in html  # 20 cells: no 40 time-series charts
    assert "20 cells" in html
    assert '<th class="l" rowspan="2">threads</th>' in html  # short parameter names


def test_local_server_syscalls_are_not_iops() -> None:
    run = make_run("redis", "r", [("c", {}, noisy_series(1000, 20))])
    points = [MetricPoint(t=float(i), value=50_000.0) for i in range(20)]
    run.cells[0].metrics.append(
        MetricSeries(name="ReadOps", unit="Count/Second", source="proc:server", points=points)
    )
    html = render_html(run)
    assert "ReadOps (proc:server)" not in html
    assert "ReadIOPS (proc:host)" in html
