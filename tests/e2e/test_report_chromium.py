"""The HTML report opened in headless Chromium: every chart path is laid out with a real length.

The report's inline script counts ``svg.chart path.series`` elements whose getTotalLength() > 0 and
writes the count into ``body[data-rendered]``; --dump-dom shows the DOM after that script ran.
Chromium comes from the Debian packages chromium / chromium-driver (scripts/bootstrap installs them).
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from benchwright.judge import judge_run
from benchwright.report.html import write_report
from benchwright.report.sample import make_document, step_series, sweep_run

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"


def chromium(args: list[str], profile: Path) -> subprocess.CompletedProcess[str]:
    if not Path(CHROMIUM).exists():
        pytest.fail(
            "chromium is not installed: apt-get install -y chromium chromium-driver (or scripts/bootstrap)"
        )
    base = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
            "--disable-component-update", "--disable-sync", "--no-first-run", f"--user-data-dir={profile}"]  # fmt: skip
    return subprocess.run([*base, *args], capture_output=True, text=True, timeout=120, check=False)


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    run = sweep_run(seconds=60)
    run.cells[2].phases["run"] = make_document(step_series(20000, 7000, at=30, seconds=60))
    judge_run(run)
    return write_report(run, tmp_path_factory.mktemp("report") / "report.html")


@pytest.mark.slow
def test_charts_render_in_headless_chromium(report: Path, tmp_path: Path) -> None:
    html = report.read_text()
    expected = len(re.findall(r'<path class="series"', html))
    assert expected >= 10  # 2 sweep charts + 2 charts x 4 cells, several lines each

    result = chromium(["--virtual-time-budget=5000", "--dump-dom", report.as_uri()], tmp_path / "profile")
    assert result.returncode == 0, result.stderr[-2000:]
    dom = result.stdout
    rendered = re.search(r'<body[^>]*data-rendered="(\d+)"', dom)
    assert rendered, "the report's script did not run: " + dom[:500]
    assert int(rendered.group(1)) == expected
    assert "throughput_collapse" in dom


@pytest.mark.slow
def test_screenshot_is_not_blank(report: Path, tmp_path: Path) -> None:
    shot = tmp_path / "shot.png"
    result = chromium(
        ["--window-size=1200,1600", f"--screenshot={shot}", report.as_uri()], tmp_path / "profile"
    )
    assert result.returncode == 0, result.stderr[-2000:]
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert len(data) > 30_000  # a white page compresses to a few kB; charts and tables do not
