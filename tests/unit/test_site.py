"""`benchwright site`: a static site across nights from a generated history (issue 26): change points
land on the injected nights, a context change shows as a marker and cuts the series, an invalid night
is greyed and not dropped, and the verdict alarms the night a level changes once only."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from benchwright.cli import main
from benchwright.site.build import write_site
from benchwright.site.levels import analyse, tonight
from benchwright.site.nights import benchmarks
from benchwright.site.sample import Plan, history
from tests import site_history as h


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    with h.store() as store:
        write_site(store, out)
    return out


def page(site: Path, name: str) -> str:
    return (site / "bench" / f"{name}.html").read_text(encoding="utf-8")


def test_change_points_land_on_the_injected_nights(site: Path) -> None:
    slower = page(site, "ycsb-a-pg")
    changes = set(re.findall(r'<g class="mark change" data-night="([0-9-]+)"', slower))
    assert changes == {h.night_date(h.SLOWER_AT)}
    assert "15% slower since " + h.night_date(h.SLOWER_AT) in slower
    faster = set(re.findall(r'<g class="mark change" data-night="([0-9-]+)"', page(site, "tpcc-mysql")))
    assert faster == {h.night_date(h.FASTER_AT)}
    for quiet in ("redis-get", "oltp-read", "tpcb-pg", "sql-custom"):  # no false alarms on steady nights
        assert 'class="mark change"' not in page(site, quiet), quiet


def test_a_context_change_is_a_marker_labelled_with_what_changed(site: Path) -> None:
    text = page(site, "redis-get")
    markers = re.findall(r'<g class="mark context" data-night="([0-9-]+)"><title>([^<]*)</title>', text)
    assert markers and {m[0] for m in markers} == {h.night_date(h.CONTEXT_AT)}
    assert "engine_version 16.3 -&gt; 16.4" in markers[0][1]
    assert "context changed (clients=8): engine_version 16.3 -&gt; 16.4" in text
    assert "no change since " + h.night_date(h.CONTEXT_AT) in text  # the level starts at the new context
    assert 'class="mark context"' not in page(site, "ycsb-a-pg")


def test_invalid_nights_are_greyed_not_dropped(site: Path) -> None:
    text = page(site, "oltp-read")
    for night in h.INVALID_AT:
        dots = re.findall(rf'<circle [^>]*class="(\w+)" data-night="{h.night_date(night)}"', text)
        assert dots and set(dots) == {"invalid"}, night
    ok = re.findall(rf'<circle [^>]*class="(\w+)" data-night="{h.night_date(11)}"', text)
    assert ok and set(ok) == {"ok"}
    assert (
        len(re.findall(r'<circle [^>]*class="(?:ok|invalid)"', text)) == 2 * 5 * h.NIGHTS
    )  # 2 cells x 5 metrics


def test_the_index_lists_every_benchmark_with_its_verdict_and_sparklines(site: Path) -> None:
    index = (site / "index.html").read_text(encoding="utf-8")
    names = re.findall(r'<tr data-benchmark="([^"]+)">', index)
    assert sorted(names) == sorted(p.name for p in h.plans())
    assert index.count('<svg class="spark"') == 11  # 5 benchmarks of 2 cells, 1 of one
    assert 'href="bench/ycsb-a-pg.html"' in index
    assert "still at the level of " + h.night_date(h.SLOWER_AT) in index
    assert "://" not in index.replace("http://www.w3.org", "")  # no other origin: no CDN, no font
    assert "<script" not in index


def test_the_night_a_level_changes_is_alarmed_once() -> None:
    plan = Plan("shift", cells=("c",), shifts={30: 0.8})
    with h.store_of_records(history([plan], 40, seed=3)) as store:
        nights = benchmarks(store)[0].cells["c"]
    verdicts = {n: tonight(nights[: n + 1]) for n in range(3, 40)}  # every night as it was judged then
    assert [n for n, v in verdicts.items() if v.kind == "alarm"] == [30], {
        n: v.message for n, v in verdicts.items()
    }
    assert all(verdicts[n].kind == "steady" for n in range(3, 30))
    assert verdicts[30].message.startswith(f"20% slower since {nights[30].at:%Y-%m-%d}, 95% interval -2")
    for n in range(31, 40):
        assert (
            verdicts[n].kind == "still"
            and f"still at the level of {nights[30].at:%Y-%m-%d}" in verdicts[n].message
        )


def test_with_one_or_two_earlier_nights_the_verdict_is_provisional_on_the_repeat_floor() -> None:
    plan = Plan("young", cells=("c",), shifts={2: 0.7}, repeats=3, noise=0.01)
    with h.store_of_records(history([plan], 3, seed=1)) as store:
        nights = benchmarks(store)[0].cells["c"]
    assert tonight(nights[:1]).message == "no verdict: first night"
    flat = tonight(nights[:2])
    assert flat.kind == "provisional" and "no change beyond the noise floor" in flat.message
    drop = tonight(nights)
    assert drop.kind == "provisional"
    assert re.fullmatch(
        r"provisional: (29|30|31)% slower than 2 earlier night\(s\) \(noise floor \+-\d\.\d% from "
        r"repeats, smallest change 5%\)",
        drop.message,
    ), drop.message
    single = Plan("no-repeats", cells=("c",), repeats=1)
    with h.store_of_records(history([single], 2)) as store:
        lone = benchmarks(store)[0].cells["c"]
    assert tonight(lone).message == "no verdict: 1 earlier night(s) and no repeats to give a noise floor"


def test_a_context_change_cuts_the_series_a_shift_there_is_no_change_point() -> None:
    plan = Plan("moved", cells=("c",), shifts={20: 0.7}, context_at=20)
    with h.store_of_records(history([plan], 40, seed=5)) as store:
        levels = analyse(benchmarks(store)[0].cells["c"])
    assert [c.start for c in levels.contexts] == [0, 20]
    assert levels.steps == []  # the 30% drop came with the engine change: never compared as one level
    assert levels.tonight.kind == "steady"


def test_the_command_builds_from_a_records_file_and_names_bad_options(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    records = tmp_path / "records.json"
    runs = history([Plan("from-file", cells=("c",))], 5)
    records.write_text("[" + ",".join(r.model_dump_json() for r in runs) + "]", encoding="utf-8")
    assert main(["site", "--records", str(records), "--out", str(tmp_path / "out")]) == 0
    assert (tmp_path / "out" / "bench" / "from-file.html").is_file()
    assert "1 benchmark page(s) from 5 run(s)" in capsys.readouterr().out
    assert main(["site", "--records", str(records), "--out", str(tmp_path / "o2"), "--nights", "0"]) != 0
    assert "--nights" in capsys.readouterr().err
    assert not (tmp_path / "o2").exists()
