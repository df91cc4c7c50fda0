"""sysbench's id distributions (oltp.rand_type) against their definitions: sysbench 1.0's defaults,
the shape of each distribution, ids always inside the table, one seed one sequence, and bad knobs
refused with the property's name."""

from __future__ import annotations

import math
import random
import statistics
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from benchwright.cli import main
from benchwright.errors import SpecError
from benchwright.runner.engine import PhaseConfig, run_phase
from benchwright.runner.workloads.oltp.rand import RAND_TYPES, RandSpec
from benchwright.runner.workloads.oltp.workload import OltpWorkload

DRAWS = 100_000
SIZE = 10_000


def draws(spec: RandSpec, size: int = SIZE, n: int = DRAWS, seed: int = 1, low: int = 1) -> list[int]:
    draw = spec.drawer(low, low + size - 1, random.Random(seed))
    return [draw() for _ in range(n)]


def test_defaults_are_sysbench_1_0_s() -> None:
    """`sysbench --help` (1.0.20): --rand-type [special], --rand-spec-iter [12], --rand-spec-pct [1],
    --rand-spec-res [75], --rand-pareto-h [0.2]; sysbench 1.1's --rand-zipfian-exp [0.8]."""
    spec = RandSpec.from_properties({})
    assert spec == RandSpec("special", 12, 1, 75, 0.2, 0.8)
    assert OltpWorkload({}).s.rand == spec
    assert spec.sysbench_flags() == [
        "--rand-type=special",
        "--rand-spec-iter=12",
        "--rand-spec-pct=1",
        "--rand-spec-res=75",
    ]


def test_uniform_covers_the_range_evenly() -> None:
    xs = draws(RandSpec(type="uniform"), size=1000)
    assert min(xs) == 1 and max(xs) == 1000
    assert abs(statistics.fmean(xs) - 500.5) < 3  # standard error ~0.9
    counts = Counter(xs)
    chi2 = sum((counts[v] - DRAWS / 1000) ** 2 / (DRAWS / 1000) for v in range(1, 1001))
    assert len(counts) == 1000 and chi2 < 1200  # 999 degrees of freedom: mean 999, sd 45


def gaussian_share(half_width: float, iterations: int) -> float:
    """P(|mean of `iterations` uniforms - 1/2| < half_width) (normal approximation of Irwin-Hall)."""
    sd = 1 / math.sqrt(12 * iterations)
    return math.erf(half_width / (sd * math.sqrt(2)))


@pytest.mark.parametrize(
    ("pct", "res"),
    [(1, 75), (10, 50), (5, 0), (20, 100)],
    ids=["sysbench-default", "10pct-50res", "res0-all-gaussian", "res100-all-hot"],
)
def test_special_sends_res_percent_of_draws_to_the_middle_pct_percent(pct: int, res: int) -> None:
    xs = draws(RandSpec(type="special", spec_pct=pct, spec_res=res))
    t = SIZE - 1
    band_lo, band_hi = 1 + t / 2 - t * pct / 200, 1 + t / 2 + t * pct / 200 + 1
    share = sum(1 for x in xs if band_lo <= x <= band_hi) / DRAWS
    expected = res / 100 + (1 - res / 100) * gaussian_share(pct / 200, 12)
    assert abs(share - expected) < 0.01, (share, expected)


def test_special_default_hot_values_sit_in_the_middle_percent() -> None:
    counts = Counter(draws(RandSpec()))
    hottest = [v for v, _ in counts.most_common(50)]
    assert all(4950 <= v <= 5051 for v in hottest)
    # a hot value gets ~0.75 / 75 = 1% of the draws; a value outside the band gets < 0.01%
    assert counts[hottest[-1]] > 0.005 * DRAWS and counts[100] + counts[9900] < 0.001 * DRAWS


def test_special_with_res_100_spreads_over_pct_percent_of_the_values() -> None:
    counts = Counter(draws(RandSpec(type="special", spec_pct=20, spec_res=100)))
    assert min(counts) >= 4000 and max(counts) <= 6001
    assert abs(len(counts) - 0.2 * SIZE) <= 0.01 * SIZE


@pytest.mark.parametrize("iterations", [1, 2, 12, 50])
def test_gaussian_is_centred_with_irwin_hall_spread(iterations: int) -> None:
    xs = draws(RandSpec(type="gaussian", spec_iter=iterations))
    sd = SIZE / math.sqrt(12 * iterations)
    assert abs(statistics.fmean(xs) - (SIZE + 1) / 2) < 0.02 * sd
    assert abs(statistics.pstdev(xs) / sd - 1) < 0.03
    assert abs(sum(1 for x in xs if x <= SIZE / 2) / DRAWS - 0.5) < 0.01


@pytest.mark.parametrize("h", [0.1, 0.2, 0.3, 0.5])
def test_pareto_gives_the_lowest_h_of_ids_one_minus_h_of_draws(h: float) -> None:
    xs = draws(RandSpec(type="pareto", pareto_h=h))
    share = sum(1 for x in xs if x <= h * SIZE) / DRAWS
    assert abs(share - (1 - h)) < 0.01, share
    counts = Counter(xs)
    if h < 0.5:  # skewed: rank 1 is the hottest id
        assert counts.most_common(1)[0][0] == 1


@pytest.mark.parametrize("exponent", [0.0, 0.8, 1.0, 1.5])
def test_zipfian_rank_frequency_follows_k_to_the_minus_exponent(exponent: float) -> None:
    n = 50
    xs = draws(RandSpec(type="zipfian", zipfian_exp=exponent), size=n)
    counts = Counter(xs)
    weights = [k**-exponent for k in range(1, n + 1)]
    total = sum(weights)
    chi2 = sum((counts[k] - DRAWS * w / total) ** 2 / (DRAWS * w / total) for k, w in enumerate(weights, 1))
    assert chi2 < 100, chi2  # 49 degrees of freedom: mean 49, sd 10
    assert abs(counts[1] / counts[2] / 2**exponent - 1) < 0.1


def test_zipfian_needs_no_table_for_a_large_range() -> None:
    xs = draws(RandSpec(type="zipfian", zipfian_exp=1.0), size=10**9, n=20_000)
    harmonic = math.log(10**9) + 0.5772156649
    assert abs(xs.count(1) / 20_000 - 1 / harmonic) < 0.01
    assert max(xs) > 10**6  # the long tail is reached


@pytest.mark.parametrize("kind", RAND_TYPES)
def test_one_seed_one_sequence(kind: str) -> None:
    spec = RandSpec(type=kind)
    assert draws(spec, n=500, seed=7) == draws(spec, n=500, seed=7)
    assert draws(spec, n=500, seed=7) != draws(spec, n=500, seed=8)


knob_specs = st.builds(
    RandSpec,
    type=st.sampled_from(RAND_TYPES),
    spec_iter=st.integers(1, 30),
    spec_pct=st.integers(0, 100),
    spec_res=st.integers(0, 100),
    pareto_h=st.floats(0.001, 0.999),
    zipfian_exp=st.floats(0.0, 5.0),
)


@settings(max_examples=300, deadline=None)
@given(
    spec=knob_specs,
    low=st.sampled_from([1, 5, 1000]),
    size=st.one_of(st.integers(1, 5), st.integers(1, 2**31 - 1)),
    seed=st.integers(0, 2**32),
)
def test_ids_always_stay_inside_the_table(spec: RandSpec, low: int, size: int, seed: int) -> None:
    xs = draws(spec, size=size, n=200, seed=seed, low=low)
    assert all(low <= x <= low + size - 1 for x in xs)


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("rand_type", "special2"),
        ("rand_type", "zipf"),
        ("rand_spec_iter", "0"),
        ("rand_spec_iter", "1.5"),
        ("rand_spec_pct", "101"),
        ("rand_spec_pct", "-1"),
        ("rand_spec_res", "x"),
        ("rand_spec_res", "200"),
        ("rand_pareto_h", "0"),
        ("rand_pareto_h", "1"),
        ("rand_pareto_h", "nan"),
        ("rand_zipfian_exp", "-0.1"),
        ("rand_zipfian_exp", "inf"),
    ],
)
def test_bad_distribution_options_name_the_property(key: str, value: str) -> None:
    with pytest.raises(SpecError) as err:
        OltpWorkload({f"oltp.{key}": value})
    assert err.value.field == f"oltp.{key}" and repr(value) in str(err.value)


def test_every_id_an_event_draws_comes_from_the_distribution() -> None:
    """With pareto h=0.01 (99% of draws in the lowest 1%), every id-bearing statement is skewed."""
    workload = OltpWorkload(
        {"oltp.test": "read_write", "oltp.rand_type": "pareto", "oltp.rand_pareto_h": "0.01"}
    )
    rnd = random.Random(3)
    ids: dict[str, list[int]] = {"point": [], "range": [], "update": [], "delete": [], "insert_k": []}
    for _ in range(300):
        for sql, params, _ in workload._event(rnd):
            if "BETWEEN" in sql:
                ids["range"].append(params[0])
            elif sql.startswith("SELECT"):
                ids["point"].append(params[0])
            elif sql.startswith("UPDATE"):
                ids["update"].append(params[-1])
            elif sql.startswith("DELETE"):
                ids["delete"].append(params[0])
            else:
                ids["insert_k"].append(params[1])
    for kind, values in ids.items():
        assert sum(1 for v in values if v <= 100) / len(values) > 0.9, kind


def test_a_group_of_statements_uses_one_table_as_sysbench_does() -> None:
    workload = OltpWorkload({"oltp.test": "read_only", "oltp.tables": "8"})
    statements = workload._event(random.Random(4))
    point_tables = {sql.split(" FROM ")[1].split()[0] for sql, _, _ in statements[:10]}
    assert len(point_tables) == 1


def test_the_result_says_which_distribution_ran() -> None:
    doc = run_phase(
        PhaseConfig(
            workload="oltp",
            phase="run",
            engine="null",
            processes=1,
            operation_count=10,
            properties={"oltp.test": "point_select"},
        )
    )
    assert doc.extra["rand"] == {
        "rand_type": "special",
        "rand_spec_iter": 12,
        "rand_spec_pct": 1,
        "rand_spec_res": 75,
    }
    assert "sysbench --rand-type=special (rand-spec-iter=12, rand-spec-pct=1, rand-spec-res=75)" in (
        doc.measurement.method
    )


def test_cli_refuses_a_bad_knob_before_connecting(capsys: pytest.CaptureFixture[str]) -> None:
    url = "postgresql://bench@127.0.0.1:1/nowhere"  # never reached: validation comes first
    code = main(["oltp", "run", "read_only", "--url", url, "--rand-type", "pareto", "--rand-pareto-h", "2"])
    assert code == 2
    assert "oltp.rand_pareto_h" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["oltp", "run", "read_only", "--url", url, "--rand-type", "hotspot"])
