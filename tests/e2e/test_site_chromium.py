"""The nightly site in headless Chromium at 1280 px (issue 26): the index and a benchmark page render
with nothing wider than the window, the change points and the context marker are drawn where the
generated history put them, and the screenshots are kept as artifacts.

Each page is copied with a small probe script appended (the site itself has none): after layout it
writes into ``body[data-probe]`` the page's scroll width and every element whose right edge passes
the window, the drawn marks and the greyed dots; --dump-dom returns the DOM after it ran.
Screenshots go to $BENCHWRIGHT_ARTIFACTS/site (default build/test-artifacts/site, git-ignored).
"""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from benchwright.site.build import write_site
from tests import site_history as h
from tests.e2e.test_report_chromium import chromium

WIDTH = 1280
PROBE = """<script>
window.addEventListener("load", function () {
  var wide = [];
  document.querySelectorAll("body *").forEach(function (el) {
    var r = el.getBoundingClientRect();
    if (r.width > 0 && r.right > window.innerWidth + 0.5) { wide.push(el.tagName + "." + el.className.baseVal + el.className); }
  });
  var marks = function (kind) {
    return Array.from(document.querySelectorAll("g.mark." + kind)).map(function (g) {
      var r = g.getBoundingClientRect(); return [g.getAttribute("data-night"), r.width > 0 || r.height > 0];
    });
  };
  document.body.setAttribute("data-probe", JSON.stringify({
    innerWidth: window.innerWidth, scrollWidth: document.documentElement.scrollWidth, wide: wide.slice(0, 10),
    change: marks("change"), context: marks("context"),
    greyed: Array.from(document.querySelectorAll("circle.invalid")).map(function (c) { return getComputedStyle(c).fill; })
  }));
});
</script>"""


def artifacts() -> Path:
    root = Path(
        os.environ.get("BENCHWRIGHT_ARTIFACTS")
        or Path(__file__).resolve().parents[2] / "build" / "test-artifacts"
    )
    (root / "site").mkdir(parents=True, exist_ok=True)
    return root / "site"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    with h.store() as store:
        write_site(store, out)
    return out


def probe(page: Path, tmp: Path) -> dict[str, Any]:
    probed = page.with_name(page.stem + ".probe.html")
    probed.write_text(
        page.read_text(encoding="utf-8").replace("</body>", PROBE + "</body>"), encoding="utf-8"
    )
    result = chromium(
        [f"--window-size={WIDTH},900", "--virtual-time-budget=3000", "--dump-dom", probed.as_uri()],
        tmp / "profile",
    )
    assert result.returncode == 0, result.stderr[-2000:]
    found = re.search(r'data-probe="([^"]*)"', result.stdout)
    assert found, "the probe did not run: " + result.stdout[-500:]
    data: dict[str, Any] = json.loads(found.group(1).replace("&quot;", '"').replace("&amp;", "&"))
    return data


def screenshot(page: Path, name: str, tmp: Path, height: int) -> Path:
    shot = tmp / f"{name}.png"
    result = chromium(
        [f"--window-size={WIDTH},{height}", f"--screenshot={shot}", page.as_uri()], tmp / "profile"
    )
    assert result.returncode == 0, result.stderr[-2000:]
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 30_000  # a blank page compresses to a few kB
    return Path(shutil.copy(shot, artifacts() / f"{name}.png"))


@pytest.mark.slow
def test_the_index_fits_1280_px(site: Path, tmp_path: Path) -> None:
    seen = probe(site / "index.html", tmp_path)
    assert seen["innerWidth"] == WIDTH
    assert seen["scrollWidth"] <= WIDTH and seen["wide"] == [], seen
    assert screenshot(site / "index.html", "index", tmp_path, 900).is_file()


@pytest.mark.slow
def test_a_benchmark_page_draws_its_change_point_and_fits_1280_px(site: Path, tmp_path: Path) -> None:
    seen = probe(site / "bench" / "ycsb-a-pg.html", tmp_path)
    assert seen["scrollWidth"] <= WIDTH and seen["wide"] == [], seen
    drawn = {night for night, visible in seen["change"] if visible}
    assert drawn == {h.night_date(h.SLOWER_AT)}, seen["change"]
    assert screenshot(site / "bench" / "ycsb-a-pg.html", "benchmark", tmp_path, 1800).is_file()


@pytest.mark.slow
def test_the_context_marker_and_the_greyed_nights_are_drawn(site: Path, tmp_path: Path) -> None:
    context = probe(site / "bench" / "redis-get.html", tmp_path)
    assert context["scrollWidth"] <= WIDTH and context["wide"] == [], context
    assert {night for night, visible in context["context"] if visible} == {h.night_date(h.CONTEXT_AT)}
    invalid = probe(site / "bench" / "oltp-read.html", tmp_path)
    assert len(invalid["greyed"]) == 2 * 5 * len(h.INVALID_AT)  # 2 cells x 5 charts x 2 invalid nights
    assert set(invalid["greyed"]) == {"rgb(187, 187, 187)"}
