"""YCSB's distributions against theory, and YCSB-identical keys: the fast FNV-1 hash and key
functions form exactly the keys the plain byte loop forms."""

from __future__ import annotations

import math
import random
from collections import Counter

import pytest

from benchwright.runner import compiled
from benchwright.runner.workloads.ycsb import generators as g
from benchwright.runner.workloads.ycsb.workload import YcsbWorkload

N = 100_000


def test_keys_are_formed_as_ycsb_forms_them() -> None:
    # The first keys of every hashed YCSB load (FNV-1 64 of 0, 1, 2).
    w = YcsbWorkload({})
    assert [w.key(i) for i in range(3)] == [
        "user6284781860667377211",
        "user8517097267634966620",
        "user1820151046732198393",
    ]
    ordered = YcsbWorkload({"insertorder": "ordered", "zeropadding": "6"})
    assert ordered.key(42) == "user000042"


def test_zeta_tail_approximation_matches_ycsb_constant() -> None:
    assert g.zeta(10_000_000_000, 0.99) == pytest.approx(g.SCRAMBLED_ZETAN_099, rel=1e-9)


def test_zipfian_rank_frequencies_follow_the_power_law() -> None:
    items, theta = 1000, 0.99
    gen = g.ZipfianGenerator(random.Random(7), 0, items, theta)
    counts = Counter(gen.next() for _ in range(N))
    zetan = g.zeta(items, theta)
    for rank in (1, 2, 10):
        expected = N / rank**theta / zetan
        assert counts[rank - 1] == pytest.approx(expected, rel=0.15)
    assert min(counts) == 0 and max(counts) < items


def test_scrambled_zipfian_spreads_hot_keys_but_stays_skewed() -> None:
    gen = g.ScrambledZipfianGenerator(random.Random(3), 0, 9_999)
    counts = Counter(gen.next() for _ in range(N))
    top = counts.most_common(1)[0]
    assert top[0] != 0  # the hottest item is scattered, not the first
    assert top[1] > 20 * N / 10_000  # far above a uniform share
    assert all(0 <= k < 10_000 for k in counts)


def test_latest_prefers_the_newest_keys() -> None:
    gen = g.SkewedLatestGenerator(random.Random(5), newest=9_999)
    draws = [gen.next() for _ in range(N)]
    assert sum(d >= 9_900 for d in draws) / N > 0.4
    gen.advance(19_999)
    assert max(gen.next() for _ in range(1000)) <= 19_999
    assert Counter(gen.next() for _ in range(N)).most_common(1)[0][0] == 19_999


def test_hotspot_sends_the_configured_share_to_the_hot_set() -> None:
    gen = g.HotspotGenerator(random.Random(9), 0, 999, hot_data=0.2, hot_opn=0.8)
    share = sum(gen.next() < 200 for _ in range(N)) / N
    assert share == pytest.approx(0.8, abs=0.01)


def test_exponential_puts_the_percentile_inside_the_span() -> None:
    gen = g.ExponentialGenerator(random.Random(11), percentile=95, span=1000)
    within = sum(gen.next() < 1000 for _ in range(N)) / N
    assert within == pytest.approx(0.95, abs=0.01)


def test_uniform_and_sequential_cover_the_range() -> None:
    uni = g.UniformGenerator(random.Random(1), 10, 19)
    counts = Counter(uni.next() for _ in range(N))
    assert set(counts) == set(range(10, 20))
    assert max(counts.values()) / min(counts.values()) < 1.1
    seq = g.SequentialGenerator(0, 2)
    assert [seq.next() for _ in range(5)] == [0, 1, 2, 0, 1]


def test_operation_mix_matches_proportions() -> None:
    chooser = g.DiscreteChooser(random.Random(2), [("READ", 0.95), ("UPDATE", 0.05), ("SCAN", 0.0)])
    counts = Counter(chooser.next() for _ in range(N))
    assert "SCAN" not in counts
    assert counts["UPDATE"] / N == pytest.approx(0.05, abs=0.005)
    assert math.isclose(sum(counts.values()), N)


def test_fast_fnv_equals_the_byte_loop_over_every_kind_of_input() -> None:
    rng = random.Random(4)
    values = list(range(70_000))  # every low-16-bit table entry, plus carries into byte 2
    values += [rng.randrange(1 << 32) for _ in range(20_000)]  # the prime^4 shortcut
    values += [rng.randrange(1 << 32, 1 << 64) for _ in range(20_000)]  # high bytes set
    values += [rng.randrange(-(1 << 70), 1 << 70) for _ in range(5_000)]  # negative and > 64 bits
    values += [0, (1 << 32) - 1, 1 << 32, (1 << 63) - 1, 1 << 63, (1 << 64) - 1, -1]
    assert [g.fnv_hash64(v) for v in values] == [g.fnv_hash64_reference(v) for v in values]


def test_java_abs_leaves_long_min_value_negative() -> None:
    assert g.java_abs(1 << 63) == -(1 << 63)
    assert g.java_abs((1 << 64) - 5) == 5
    assert g.java_abs(5) == 5
    assert g.fnv_hash64(0) == 6284781860667377211


@pytest.mark.parametrize(
    "props",
    [{}, {"zeropadding": "25"}, {"insertorder": "ordered"}, {"insertorder": "ordered", "zeropadding": "9"}],
    ids=["hashed", "hashed-padded", "ordered", "ordered-padded"],
)
def test_key_function_equals_the_documented_key_formation(props: dict[str, str]) -> None:
    w = YcsbWorkload(props)
    key = w.key_function()
    pad = int(props.get("zeropadding", "1"))
    ordered = props.get("insertorder") == "ordered"
    for number in [0, 1, 2, 41, 99_999, 10_000_000, 123_456_789_012]:
        raw = number if ordered else g.fnv_hash64_reference(number)
        assert key(number) == w.key(number) == "user" + str(raw).zfill(pad)


@pytest.mark.parametrize("pad", ["1", "20", "25", "64"])
def test_keys_made_in_c_for_a_block_are_the_key_function_s(pad: str) -> None:
    w = YcsbWorkload({"zeropadding": pad})
    assert compiled.ycsb_keys() is not None, "the C part is built here (make ext)"
    rng = random.Random(9)
    numbers = list(range(300)) + [rng.randrange(1 << 64) for _ in range(20_000)]
    numbers += [(1 << 32) - 1, 1 << 32, (1 << 63) - 1, 1 << 63, (1 << 64) - 1, 1 << 64, (1 << 70) + 3]
    made = w.key_block()(numbers)
    assert made == [w.key_function()(n) for n in numbers]
    assert made[0] == "user" + str(6284781860667377211).zfill(int(pad))


@pytest.mark.parametrize(("insertorder", "built"), [("hashed", True), ("ordered", False)])
def test_warm_up_builds_the_key_hash_table_before_the_clock_starts(insertorder: str, built: bool) -> None:
    g._LOW16.clear()  # rebuilt on first use: clearing it costs the next test nothing but the build
    YcsbWorkload({"recordcount": "100", "insertorder": insertorder}).warm_up()
    assert len(g._LOW16) == (65536 if built else 0)


def _generators(seed: int) -> list[tuple[str, object]]:
    rng = random.Random(seed)
    return [
        ("uniform", g.UniformGenerator(rng, 10, 10_009)),
        ("zipfian", g.ZipfianGenerator(rng, 5, 1000)),
        ("scrambled", g.ScrambledZipfianGenerator(rng, 0, 99_999)),
        ("latest", g.SkewedLatestGenerator(rng, 5000)),
        ("hotspot", g.HotspotGenerator(rng, 0, 999, 0.2, 0.8)),
        ("exponential", g.ExponentialGenerator(rng, 95, 1000)),
        ("sequential", g.SequentialGenerator(3, 9)),
        ("mix", g.DiscreteChooser(rng, [("READ", 0.5), ("UPDATE", 0.3), ("SCAN", 0.0), ("INSERT", 0.2)])),
        ("one", g.DiscreteChooser(rng, [("READ", 1.0), ("UPDATE", 0.0)])),
    ]


@pytest.mark.parametrize("index", range(9))
def test_block_draws_are_next_draws_from_the_same_stream(index: int) -> None:
    """``block(n)`` is n calls of ``next`` (same formula, same random stream): the run phase's
    blocks have exactly the distributions above."""
    name, one = _generators(5)[index]
    _, many = _generators(5)[index]
    singles = [one.next() for _ in range(3000)]  # type: ignore[attr-defined]
    blocks = many.block(1000) + many.block(1) + many.block(1999)  # type: ignore[attr-defined]
    assert blocks == singles, name
    if name == "latest":  # after an insert the block follows the new newest record
        one.advance(9000)  # type: ignore[attr-defined]
        many.advance(9000)  # type: ignore[attr-defined]
        assert many.block(500) == [one.next() for _ in range(500)]  # type: ignore[attr-defined]
