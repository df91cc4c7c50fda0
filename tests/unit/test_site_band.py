"""The band from repeats on a benchmark page (issue 26): each night's min to max of its repeats is a
shaded area under the throughput line, absent where a night had one repeat, and the y axis holds it."""

from __future__ import annotations

import math
import re
from pathlib import Path

from benchwright.record_files import store_of_records
from benchwright.site import svg
from benchwright.site.build import write_site
from benchwright.site.sample import Plan, history


def _pages(tmp_path: Path) -> tuple[str, str]:
    plans = [Plan("two", cells=("c",), repeats=2, noise=0.05), Plan("one", cells=("c",), repeats=1)]
    records = history(plans, nights=12, seed=3)
    with store_of_records(records) as store:
        write_site(store, tmp_path)
    return tuple((tmp_path / "bench" / f"{n}.html").read_text(encoding="utf-8") for n in ("two", "one"))  # type: ignore[return-value]


def test_the_band_spans_each_nights_repeats(tmp_path: Path) -> None:
    two, one = _pages(tmp_path)
    bands = re.findall(r'<polygon class="band" data-name="c"[^>]* points="([^"]+)"', two)
    assert len(bands) == 1  # throughput only: the store keeps the repeats of that figure
    points = [tuple(map(float, p.split(","))) for p in bands[0].split()]
    assert len(points) == 2 * 12  # upper edge left to right, lower edge back
    upper, lower = points[:12], points[12:][::-1]
    assert all(u[0] == lo[0] for u, lo in zip(upper, lower, strict=True))
    assert all(u[1] <= lo[1] for u, lo in zip(upper, lower, strict=True))  # SVG y grows downwards
    assert sum(u[1] < lo[1] for u, lo in zip(upper, lower, strict=True)) >= 10  # noise 5 %: a real spread
    spreads = re.findall(r"([0-9.e+]+) ops/s \(repeats ([0-9.e+]+) to ([0-9.e+]+)\)", two)
    assert len(spreads) == 12
    assert all(float(lo) <= float(m) <= float(hi) for m, lo, hi in spreads)
    assert "the band the min to max of its repeats" in two
    assert 'class="band"' not in one and "(repeats " not in one  # one repeat a night: no spread to show


def test_a_night_without_spread_splits_the_band() -> None:
    band: svg.Band = [
        (1, 1, 2),
        (2, 1, 3),
        (3, math.nan, math.nan),
        (4, 2, 3),
        (5, 1, 2),
        (6, math.nan, math.nan),
        (7, 1, 1),
    ]
    assert svg._runs(band) == [[(1, 1, 2), (2, 1, 3)], [(4, 2, 3), (5, 1, 2)]]
