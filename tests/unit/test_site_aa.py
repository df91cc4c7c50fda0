"""The A/A noise floor (issue 26): a spec's ``noise: aa`` (validated, naming the field) makes the
site's provisional verdict take its floor from each night's first two repeats on tonight's context,
and say so; without it the floor is the spread of all the repeats."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from benchwright.errors import SpecError
from benchwright.record_files import store_of_records
from benchwright.site.levels import aa_floor, tonight
from benchwright.site.nights import Night, benchmarks
from benchwright.site.sample import Plan, history
from benchwright.spec import parse_spec

BASE: dict[str, Any] = {
    "name": "t",
    "target": {"provider": "local", "engine": "redis"},
    "workload": {"name": "ycsb", "files": ["workloada"]},
}
FIRST = datetime(2026, 11, 1, 2, tzinfo=UTC)


@pytest.mark.parametrize(
    ("extra", "words"),
    [
        ({"noise": "aa"}, "set repeats to 2 or more (it is 1)"),
        ({"noise": "ab", "repeats": 2}, "'repeats' or 'aa'"),
        ({"matrix": {"noise": ["aa", "repeats"]}, "repeats": 2}, "cannot be varied in a matrix"),
    ],
)
def test_a_bad_noise_setting_names_the_field(extra: dict[str, Any], words: str) -> None:
    with pytest.raises(SpecError) as caught:
        parse_spec({**BASE, **extra})
    assert caught.value.field in ("noise", "matrix"), caught.value
    assert words in str(caught.value)


def test_noise_aa_with_repeats_is_a_spec() -> None:
    spec = parse_spec({**BASE, "noise": "aa", "repeats": 3})
    assert spec.noise == "aa"
    assert parse_spec(BASE).noise == "repeats"


def night(i: int, repeats: tuple[float, ...], aa: bool, context: str = "k") -> Night:
    return Night(f"r{i}", FIRST + timedelta(days=i), True, sum(repeats) / len(repeats), repeats, 1.0, 0.0,
                 None, None, None, None, context, aa)  # fmt: skip


# each night: its first two repeats agree within 1 %, the third lies 12 % off (a drift in the night)
STEADY = [(100.0, 101.0, 112.0), (100.5, 99.5, 88.0)]
TONIGHT = (90.0, 90.5, 90.2)  # about 10 % below the earlier nights' level


def test_the_aa_pairs_give_a_narrower_floor_than_all_the_repeats() -> None:
    aa = [night(0, (1.0, 1.0), True, "old"), *(night(i + 1, r, True) for i, r in enumerate(STEADY))]
    aa.append(night(3, TONIGHT, True))
    said = tonight(aa)
    assert said.kind == "provisional"
    assert "slower than 2 earlier night(s)" in said.message
    assert "from 3 A/A pair(s) on this context (noise: aa)" in said.message  # not the "old" night
    plain = [night(i, r, False) for i, r in enumerate([*STEADY, TONIGHT])]
    said = tonight(plain)
    assert said.kind == "provisional" and "no change beyond the noise floor" in said.message
    assert "from repeats" in said.message


def test_the_aa_floor_is_one_runs_deviation_from_the_pairs() -> None:
    floor = aa_floor(
        [night(0, (100.0, 102.0, 50.0), True), night(1, (99.0, 99.0), True), night(2, (5.0,), True)]
    )
    assert floor is not None
    d = 2.0 / 101.0
    assert floor[1] == 2 and math.isclose(floor[0], math.sqrt((d * d + 0.0) / 2 / 2))
    assert aa_floor([night(0, (100.0, 102.0), False)]) is None


def test_the_store_keeps_the_specs_noise_for_the_site() -> None:
    records = history([Plan("aa", cells=("c",), aa=True), Plan("plain", cells=("c",))], nights=3)
    with store_of_records(records) as store:
        assert dict(store.read("SELECT spec_name, MAX(noise) FROM runs GROUP BY spec_name")) == {
            "aa": "aa",
            "plain": None,
        }
        by_name = {b.name: b for b in benchmarks(store)}
    assert all(n.aa for n in by_name["aa"].cells["c"])
    assert not any(n.aa for n in by_name["plain"].cells["c"])
    assert "A/A pair(s) on this context" in tonight(by_name["aa"].cells["c"]).message
