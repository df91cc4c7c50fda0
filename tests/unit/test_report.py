"""Reports: terminal summary, HTML (content, self-containment, size), charts, and a real null-engine run."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from rich.console import Console

from benchwright.judge import judge_run
from benchwright.report import charts
from benchwright.report.html import render_html, write_report
from benchwright.report.sample import (
    EPOCH,
    host_metrics,
    make_document,
    make_run,
    noisy_series,
    step_series,
    sweep_run,
)
from benchwright.report.text import RunProgress, render_summary
from benchwright.runs import CellResult, CostEstimate, RunRecord, Verdict
from tests.report_dom import chart_specs, series_points


def test_summary_lists_every_cell_operation_and_flag() -> None:
    run = judge_run(make_run("demo", "r1", [("gp2", {"storage": "gp2"}, step_series(3000, 1200, at=40, seconds=90)),
                                            ("io1", {"storage": "io1"}, noisy_series(3000, 90))]))  # fmt: skip
    run.verdict = Verdict(kind="slower", metric="throughput", effect=0.8, ci_low=0.75, ci_high=0.85,
                          min_effect=0.05, message="slower vs 5 earlier runs")  # fmt: skip
    run.cost = CostEstimate(
        total=1.25, items={"rds": 1.0, "storage": 0.25}, ops_per_dollar=2e6, source="test"
    )
    text = render_summary(run, width=160)
    for needle in (
        "gp2",
        "io1",
        "READ",
        "UPDATE",
        "p99",
        "throughput_collapse",
        "SLOWER",
        "1.25 USD",
        "2,000,000",
    ):
        assert needle in text, needle
    assert re.search(r"io1 .* ok", text)


def test_summary_shows_confidence_intervals_for_repeats() -> None:
    run = make_run("demo", "r2", [("c", {}, noisy_series(1000, 30))], repeats=3)
    text = render_summary(run, width=160)
    assert "repeats: mean ops/s, 95% CI" in text
    assert re.search(r"c\s+│\s+3\s+│", text)


def test_progress_tracks_cells_and_phases() -> None:
    console = Console(record=True, width=120, force_terminal=False)
    steps = [("c1", "load"), ("c1", "run"), ("c2", "run")]
    with RunProgress(steps, console) as progress:
        for cell, phase in steps:
            progress.start_phase(cell, phase, expected_s=10)
            progress.phase_callback(5.0, 12_345, 2_469.0)
            progress.finish_phase()
    assert progress.completed == 3
    assert "3/3" in console.export_text()


def test_downsampling_bounds_points_and_keeps_spikes() -> None:
    points = [(float(i), 100.0) for i in range(10_000)]
    points[5_555] = (5555.0, 9_999.0)
    out = charts.downsample(points, buckets=200)
    assert len(out) <= 400
    assert (5555.0, 9999.0) in out
    assert [p[0] for p in out] == sorted(p[0] for p in out)


def test_chart_spec_aligns_series_on_one_x_axis_and_drops_what_a_log_axis_cannot_place() -> None:
    chart = charts.Chart("t", "records", "ops/s", log_x=True)
    chart.series += [
        charts.ChartSeries("a", [(0.0, 1.0), (1000.0, 5.0), (1024.0, 6.0)], markers=True),
        charts.ChartSeries("b", [(1024.0, 7.123456), (2048.0, 8.0)], markers=True),
    ]
    spec = charts.spec(chart)
    assert spec is not None
    assert spec["data"] == [[1000, 1024, 2048], [5, 6, None], [None, 7.1235, 8]]  # 5 significant digits
    assert [s["points"] for s in spec["series"]] == [2, 2] and spec["log_x"] is True
    assert charts.spec(charts.Chart("empty", "x", "y")) is None


def svg_paths(html: str) -> dict[str, int]:
    """Series name -> points drawn (the name kept from the SVG charts these tests were written for)."""
    return series_points(html)


def test_html_has_charts_tables_flags_and_facts() -> None:
    run = judge_run(sweep_run(seconds=60))
    run.cells[1].phases["run"] = make_document(step_series(8000, 3000, at=30, seconds=60))
    judge_run(run)
    html = render_html(run, history=[sweep_run(run_id="older", seed=7)])
    paths = svg_paths(html)
    assert paths["ops/s"] >= 50 and paths["p99"] >= 50
    assert any(name.startswith("CPUUtilization (proc:host)") for name in paths)
    assert any(name.startswith("ReadIOPS (proc:host)") for name in paths)
    assert "throughput vs clients" in html and "worst p99 latency vs clients" in html
    assert "throughput across runs of this spec" in html
    assert "throughput_collapse" in html and "t=30" in html
    assert "<h3>load phase</h3>" in html and "<h3>run phase</h3>" in html
    assert "test-host" in html  # environment facts
    assert "postgres" in html  # spec


def test_html_is_self_contained_and_hides_passwords() -> None:
    run = sweep_run()
    run.spec["target"]["url"] = "postgresql://bench:hunter2@db.example:5432/bench"
    run.error = "connect to mysql://root:hunter2@10.0.0.1/x failed"
    html = render_html(run)
    assert "hunter2" not in html
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", html), "the report must not load anything"
    assert "<script src" not in html and "@import" not in html
    assert "var uPlot=function" in html and "uPlot 1.6.32" in html  # the chart library is inlined
    assert len(chart_specs(html)) >= 2


def test_a_one_hour_run_report_stays_under_5_mb(tmp_path: Path) -> None:
    hour = 3600
    cells = [
        (f"clients={c}", {"clients": c}, noisy_series(1000.0 * c, hour, seed=c)) for c in (1, 2, 4, 8, 16, 32)
    ]
    run = make_run("long", "hour", cells, with_metrics=False)
    for cell in run.cells:
        cell.metrics = host_metrics(hour, seed=1)
    path = write_report(run, tmp_path / "report.html")
    size = path.stat().st_size
    assert size < 5_000_000, size
    assert max(svg_paths(path.read_text()).values()) <= 800


def test_a_report_of_a_failed_run_without_results_still_renders() -> None:
    run = RunRecord(run_id="f1", spec_name="broken", status="failed", started_at=EPOCH, error="target not ready",
                    cells=[CellResult(cell_id="c1")])  # fmt: skip
    html = render_html(run)
    assert "target not ready" in html and "no results" in html


@pytest.mark.slow
def test_report_of_a_real_null_engine_run(tmp_path: Path) -> None:
    """A document from the real engine (null driver) flows through judgement, store and report."""
    from benchwright.providers.local.sqlite_store import SQLiteResultStore
    from benchwright.runner.engine import PhaseConfig, run_phase

    props = {"recordcount": "500", "operationcount": "20000", "workload": "workloada"}
    load = run_phase(PhaseConfig(workload="ycsb", phase="load", engine="null", properties=props, threads=1))
    measured = run_phase(
        PhaseConfig(workload="ycsb", phase="run", engine="null", properties=props, threads=2)
    )
    run = RunRecord(run_id="null-1", spec_name="null-quick", started_at=load.started_at, status="succeeded",
                    cells=[CellResult(cell_id="threads=2", parameters={"threads": 2},
                                      phases={"load": load, "run": measured})])  # fmt: skip
    judge_run(run, {"min_duration_s": 3600})
    assert "too_short" in {f.code for f in run.cells[0].validity}
    with SQLiteResultStore(tmp_path / "s.sqlite") as store:
        store.save_run(run)
        again = store.get_run("null-1")
    assert again == run
    html = render_html(again)  # type: ignore[arg-type]
    assert "READ" in html and "UPDATE" in html and "threads=2" in html
    assert svg_paths(html)["ops/s"] >= 1
