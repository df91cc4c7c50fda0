"""HTML report: the seed's tables, a latency percentile-distribution chart from the stored histograms,
scrollable tables, log-axis labels that do not overlap, sweep legends that name what they show, no
per-cell time series for large matrices, and no socket syscalls presented as IOPS."""

from __future__ import annotations

from benchwright.report import charts
from benchwright.report.html import render_html
from benchwright.report.sample import make_run, noisy_series
from benchwright.results import MetricPoint, MetricSeries
from benchwright.runner.measure import encode_histogram, new_histogram
from tests.report_dom import chart, chart_specs


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
    dist = chart(html, "latency percentile distribution")
    ticks = [label for _, label in dist["x_ticks"]]
    assert {"50", "90", "99", "99.9"} <= set(ticks) and len(set(ticks)) == len(ticks)
    assert [s["name"] for s in dist["series"]] == ["READ", "UPDATE"]
    assert (dist["x_label"], dist["y_label"]) == ("percentile", "latency (ms)")
    latencies = [y for y in dist["data"][1] if y is not None]
    assert 0.9 <= latencies[0] <= latencies[-1] <= 20.1 and latencies == sorted(latencies)  # 1-20 ms, rising
    assert "The seed&#x27;s tables" in html or "The seed's tables" in html
    assert html.count('<div class="table-scroll">') >= 2


def test_a_log_axis_gets_its_ticks_from_the_scale_not_from_the_data() -> None:
    """1000 and 1024 are both cells; the old SVG labelled every data x and the two collided. Ticks
    are now uPlot's (powers of ten on a log scale; tests/e2e/test_report_chromium.py reads the drawn
    labels), and the spec carries no data-derived ticks."""
    chart_ = charts.Chart("t", "records", "ops/s", log_x=True)
    chart_.series.append(
        charts.ChartSeries("s", [(1000.0, 5.0), (1024.0, 6.0), (100_000.0, 7.0)], markers=True)
    )
    spec = charts.spec(chart_)
    assert spec is not None and spec["log_x"] is True and spec["x_ticks"] is None
    assert spec["data"][0] == [1000, 1024, 100_000]


def test_sweep_legend_names_the_figure_and_large_matrices_draw_no_time_series() -> None:
    cells = [
        (f"threads={t}", {"workload.phases.run.threads": t}, noisy_series(100 * t, 20, seed=t))
        for t in range(1, 21)
    ]
    html = render_html(make_run("sweep", "r", cells))
    p99 = chart(html, "worst p99 latency vs threads")
    assert [s["name"] for s in p99["series"]] == ["worst p99"] and p99["y_label"] == "p99 latency (ms)"
    tput = chart(html, "throughput vs threads")
    assert [s["name"] for s in tput["series"]] == ["throughput"] and tput["y_label"] == "throughput (ops/s)"
    assert p99["x_label"] == "threads" and len(p99["data"][0]) == 20
    assert "throughput and CPU" not in html  # 20 cells: no 40 time-series charts
    assert len(chart_specs(html)) <= 3  # two sweeps and the distribution, whatever the cell count
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
