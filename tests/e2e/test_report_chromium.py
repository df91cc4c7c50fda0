"""The HTML report opened in headless Chromium: uPlot draws every chart, with distinct axis labels
and legends that name what each line is.

The report's script (report/templates/report.js) records, for each chart, whether uPlot drew it and
the axis labels it drew (``data-ticks-x`` / ``data-ticks-y``), and the count of drawn charts in
``body[data-rendered]``; --dump-dom shows the DOM after that script ran. Chromium comes from the
Debian packages chromium / chromium-driver (scripts/bootstrap installs them).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from benchwright.judge import judge_run
from benchwright.report.html import write_report
from benchwright.report.sample import make_document, make_run, noisy_series, step_series, sweep_run
from tests.report_dom import chart_specs, drawn_figures

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"


def chromium(args: list[str], profile: Path) -> subprocess.CompletedProcess[str]:
    if not Path(CHROMIUM).exists():
        pytest.fail(
            "chromium is not installed: apt-get install -y chromium chromium-driver (or scripts/bootstrap)"
        )
    base = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
            "--disable-component-update", "--disable-sync", "--no-first-run", f"--user-data-dir={profile}"]  # fmt: skip
    return subprocess.run([*base, *args], capture_output=True, text=True, timeout=120, check=False)


def dump(report: Path, profile: Path) -> str:
    result = chromium(["--virtual-time-budget=5000", "--dump-dom", report.as_uri()], profile)
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    run = sweep_run(seconds=60)
    run.cells[2].phases["run"] = make_document(step_series(20000, 7000, at=30, seconds=60))
    judge_run(run)
    return write_report(run, tmp_path_factory.mktemp("report") / "report.html")


def by_title(figures: list[dict[str, Any]], start: str) -> dict[str, Any]:
    found = [f for f in figures if f["title"].startswith(start)]
    assert len(found) == 1, (start, [f["title"] for f in figures])
    return found[0]


@pytest.mark.slow
def test_charts_render_in_headless_chromium(report: Path, tmp_path: Path) -> None:
    expected = len(chart_specs(report.read_text()))
    assert expected >= 10  # 2 sweep charts + 2 charts x 4 cells
    dom = dump(report, tmp_path / "profile")
    assert f'data-rendered="{expected}"' in dom, "uPlot did not draw every chart: " + dom[-800:]
    figures = drawn_figures(dom)
    assert len(figures) == expected and all(f["drawn"] and not f["error"] for f in figures)
    for f in figures:  # every axis has labels, none repeated (the old SVG's 1000 / 1024 collision)
        assert len(f["x"]) >= 2 and len(set(f["x"])) == len(f["x"]), f
        assert len(f["y"]) >= 2 and len(set(f["y"])) == len(f["y"]), f
    assert by_title(figures, "worst p99 latency vs clients")["legend"] == ["clients", "worst p99"]
    assert by_title(figures, "throughput vs clients")["legend"] == ["clients", "throughput"]
    cpu = by_title(figures, "clients=1: throughput and CPU")["legend"]
    assert cpu == ["seconds", "ops/s", "CPUUtilization (proc:host) (right axis)"]
    assert "throughput_collapse" in dom


@pytest.mark.slow
def test_a_log_axis_over_1000_and_1024_draws_distinct_labels(tmp_path: Path) -> None:
    cells = [(f"records={n}", {"recordcount": n}, noisy_series(1000.0 + n / 100, 20, seed=n))
             for n in (100, 1000, 1024, 10_000, 100_000)]  # fmt: skip
    path = write_report(make_run("log", "r", cells), tmp_path / "report.html")
    figures = drawn_figures(dump(path, tmp_path / "profile"))
    sweep = by_title(figures, "throughput vs recordcount")
    assert sweep["drawn"] and len(set(sweep["x"])) == len(sweep["x"]) >= 3, sweep
    assert not {"1000", "1024"} <= set(sweep["x"]) and "1024" not in sweep["x"]
    assert {"100", "1000", "10k", "100k"} <= set(sweep["x"]), sweep["x"]  # powers of ten on a log scale


@pytest.mark.slow
def test_screenshot_is_not_blank(report: Path, tmp_path: Path) -> None:
    shot = tmp_path / "shot.png"
    result = chromium(
        ["--window-size=1200,1600", "--virtual-time-budget=5000", f"--screenshot={shot}", report.as_uri()],
        tmp_path / "profile",
    )
    assert result.returncode == 0, result.stderr[-2000:]
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert len(data) > 30_000  # a white page compresses to a few kB; charts and tables do not
