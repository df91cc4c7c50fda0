"""Judgement on synthetic documents whose right answer is known."""

from __future__ import annotations

import math

import pytest

from benchwright.judge import ValidityPolicy, compare_runs, compare_with_history, judge_document, judge_run
from benchwright.judge.changepoint import find_collapse, segment
from benchwright.judge.compare import repeat_summary
from benchwright.judge.credits import judge_credits
from benchwright.judge.stats import mean_ci, t_cdf, t_quantile, welch_difference
from benchwright.report.sample import EPOCH, make_document, make_run, noisy_series, step_series
from benchwright.results import MetricPoint, MetricSeries


# ---------------------------------------------------------------- t distribution
@pytest.mark.parametrize(
    ("p", "df", "expected"),
    [(0.975, 1, 12.7062), (0.975, 2, 4.3027), (0.975, 4, 2.7764), (0.975, 30, 2.0423), (0.95, 10, 1.8125),
     (0.995, 5, 4.0321), (0.975, 1000, 1.9623)],
    ids=lambda v: str(v),
)  # fmt: skip
def test_t_quantiles_match_published_tables(p: float, df: int, expected: float) -> None:
    assert t_quantile(p, df) == pytest.approx(expected, abs=1e-3)


def test_t_cdf_is_symmetric_and_inverts_the_quantile() -> None:
    assert t_cdf(0.0, 7) == pytest.approx(0.5)
    assert t_cdf(-1.3, 7) == pytest.approx(1 - t_cdf(1.3, 7))
    assert t_cdf(t_quantile(0.9, 3.5), 3.5) == pytest.approx(0.9, abs=1e-9)


def test_mean_ci_of_repeats_uses_the_t_distribution() -> None:
    ci = mean_ci([10.0, 12.0, 11.0, 13.0], confidence=0.95)
    # mean 11.5, s = 1.29099, se = 0.645497, t(3) = 3.18245
    assert ci.estimate == pytest.approx(11.5)
    assert ci.half_width == pytest.approx(3.18245 * 0.645497, rel=1e-4)
    assert math.isinf(mean_ci([5.0]).half_width)


def test_welch_interval_excludes_zero_only_for_a_real_difference() -> None:
    same = welch_difference([10, 11, 9, 10.5], [10.2, 9.8, 10.6, 9.9])
    moved = welch_difference([15, 16, 14, 15.5], [10.2, 9.8, 10.6, 9.9])
    assert same.low < 0 < same.high
    assert moved.low > 0


# ---------------------------------------------------------------- change points
def test_a_series_that_halves_at_60_s_is_split_there() -> None:
    values = step_series(1000, 500, at=60, seconds=120, seed=3)
    segments = segment(values)
    assert [s.start for s in segments] == [0, 60]
    collapse = find_collapse(values, drop_fraction=0.3)
    assert collapse is not None and collapse.index == 60
    assert collapse.drop == pytest.approx(0.5, abs=0.05)


def test_a_steady_noisy_series_has_no_change_point() -> None:
    for seed in range(10):
        assert len(segment(noisy_series(1000, 300, noise=0.08, seed=seed))) == 1


def test_a_rise_is_not_a_collapse() -> None:
    assert find_collapse(step_series(500, 1000, at=30, seconds=90), drop_fraction=0.3) is None


# ---------------------------------------------------------------- validity flags
def codes(doc: object) -> set[str]:
    return {f.code for f in doc.validity}  # type: ignore[attr-defined]


def test_drained_burst_bucket_is_flagged_invalid() -> None:
    doc = make_document(step_series(3000, 1500, at=60, seconds=120))
    judge_document(doc)
    flag = next(f for f in doc.validity if f.code == "throughput_collapse")
    assert flag.severity == "invalid"
    assert "t=60" in flag.message
    assert not doc.valid


def test_a_clean_long_run_gets_no_flags() -> None:
    doc = make_document(noisy_series(3000, 120))
    judge_document(doc)
    assert doc.validity == []


def test_too_short_and_cloud_resolution() -> None:
    doc = make_document(noisy_series(3000, 8))
    judge_document(doc)
    assert "too_short" in codes(doc)
    cloud = make_document(
        noisy_series(3000, 90),
        metrics=[MetricSeries(name="CPUUtilization", unit="Percent", source="cloudwatch:AWS/RDS",
                              points=[MetricPoint(t=60, value=40)])],
    )  # fmt: skip
    judge_document(cloud)
    assert codes(cloud) == {"too_short_for_cloud_metrics"}


def test_error_rate_follows_the_policy_threshold() -> None:
    doc = make_document(noisy_series(1000, 30), errors=200)  # 200 of ~30,000 = 0.67 %
    judge_document(doc, ValidityPolicy(max_error_rate=0.01))
    assert "error_rate" not in codes(doc)
    judge_document(doc, ValidityPolicy(max_error_rate=0.001))
    assert "error_rate" in codes(doc)


def test_saturated_client_severity_comes_from_the_policy() -> None:
    doc = make_document(noisy_series(1000, 30), saturated=True)
    judge_document(doc)  # the default: a warning
    assert [(f.code, f.severity) for f in doc.validity] == [("client_saturated", "warning")]
    assert doc.valid
    # the runner has already flagged it as a warning: a strict policy still makes the cell invalid
    judge_document(doc, ValidityPolicy(client_saturation="invalid"))
    assert [(f.code, f.severity) for f in doc.validity] == [("client_saturated", "invalid")]
    assert not doc.valid


def test_a_drained_burst_balance_in_cell_metrics_invalidates_the_cell() -> None:
    run = make_run(cells=[("gp2", {"storage": "gp2"}, noisy_series(1000, 30))])
    run.cells[0].metrics.append(
        MetricSeries(name="BurstBalance", unit="Percent", source="cloudwatch:AWS/RDS",
                     points=[MetricPoint(t=60.0 * i, value=v) for i, v in enumerate([100, 60, 20, 0.5])])
    )  # fmt: skip
    judge_run(run, {"collapse_drop": 0.4, "unknown_spec_field": 1})
    (flag,) = [f for f in run.cells[0].validity if f.code == "credits_exhausted"]
    assert flag.severity == "invalid" and "BurstBalance" in flag.message and "0.5%" in flag.message


def _cpu_credits(values: list[float]) -> MetricSeries:
    points = [MetricPoint(t=60.0 * i, value=v) for i, v in enumerate(values)]
    return MetricSeries(name="CPUCreditBalance", unit="Count", source="cloudwatch:AWS/RDS", points=points)


@pytest.mark.parametrize(
    ("target_class", "code", "severity", "says"),
    [
        ("db.t3.micro", "credits_surplus", "warning", "db.t3.micro runs in Unlimited mode"),
        ("db.t4g.medium", "credits_surplus", "warning", "billed for surplus CPU credits"),
        ("db.t2.small", "credits_exhausted", "invalid", "db.t2.small was throttled to its CPU baseline"),
        (None, "credits_exhausted", "invalid", "throttled to its CPU baseline (a T class in Standard mode)"),
    ],
)
def test_an_empty_cpu_credit_balance_is_judged_by_the_class_s_credit_mode(
    target_class: str | None, code: str, severity: str, says: str
) -> None:
    """RDS runs T3/T4g in Unlimited mode: a drained balance kept the speed and cost money (a warning);
    a T2 in Standard mode was throttled, so the measurement is of its baseline (invalid)."""
    (flag,) = judge_credits([_cpu_credits([120, 40, 0.0])], target_class=target_class)
    assert (flag.code, flag.severity) == (code, severity) and says in flag.message, flag


def test_policy_rejects_nonsense_values() -> None:
    with pytest.raises(ValueError, match="collapse_drop"):
        ValidityPolicy(collapse_drop=1.5)


# ---------------------------------------------------------------- verdicts
def two_runs(level_a: float, level_b: float, seconds: int = 120, noise: float = 0.05, repeats: int = 3,
             seed_b: int = 99) -> tuple:  # fmt: skip
    a = make_run(
        "s", "a", [("c1", {}, noisy_series(level_a, seconds, noise, seed=1))], repeats=repeats, seed=1
    )
    b = make_run("s", "b", [("c1", {}, noisy_series(level_b, seconds, noise, seed=seed_b))], repeats=repeats,
                 started_at=EPOCH.replace(day=2), seed=seed_b)  # fmt: skip
    return a, b


@pytest.mark.parametrize("seed", range(5))
def test_two_runs_from_the_same_distribution_give_no_change(seed: int) -> None:
    a, b = two_runs(2000, 2000, seed_b=100 + seed)
    verdict = compare_runs(b, a)
    assert verdict.kind == "no_change", verdict.message
    assert verdict.ci_low is not None and verdict.ci_low < 1 < verdict.ci_high  # type: ignore[operator]


def test_a_20_percent_drop_is_slower_with_an_interval() -> None:
    a, b = two_runs(2000, 1600)
    verdict = compare_runs(b, a)
    assert verdict.kind == "slower"
    assert verdict.effect == pytest.approx(0.8, abs=0.02)
    assert verdict.ci_high is not None and verdict.ci_high < 1 - verdict.min_effect
    assert "CI" in verdict.message


def test_a_20_percent_gain_is_faster_and_p99_direction_is_inverted() -> None:
    a, b = two_runs(2000, 2400)
    assert compare_runs(b, a).kind == "faster"
    # for latency lower is better: halving the latency is "faster"
    for i, (new, old) in enumerate(zip(b.cells, a.cells, strict=True)):
        new.phases["run"] = make_document(noisy_series(2000, 120, seed=5), latency_us=400 * (1 + 0.01 * i))
        old.phases["run"] = make_document(noisy_series(2000, 120, seed=6), latency_us=800 * (1 - 0.01 * i))
    assert compare_runs(b, a, metric="p99_us").kind == "faster"
    assert compare_runs(a, b, metric="p99_us").kind == "slower"


def test_a_tiny_but_significant_change_is_no_change() -> None:
    a, b = two_runs(2000, 2040, seconds=600, noise=0.01)  # +2 % with min effect 5 %
    assert compare_runs(b, a).kind == "no_change"


def test_noisy_repeats_give_unstable_not_a_guess() -> None:
    a = make_run("s", "a", [("c1", {}, noisy_series(2000, 20, 0.05, seed=1))], repeats=2, seed=1)
    b = make_run("s", "b", [("c1", {}, noisy_series(2000, 20, 0.05, seed=2))], repeats=2, seed=2)
    a.cells[0].phases["run"].throughput = 1500.0
    a.cells[1].phases["run"].throughput = 2500.0
    assert compare_runs(b, a).kind == "unstable"


def test_one_run_each_gets_no_verdict_however_long_its_series() -> None:
    """Within-run noise is not between-run variance: a 10 % gap between two single runs is no verdict."""
    a, b = two_runs(2000, 1800, seconds=600, repeats=1)
    verdict = compare_runs(b, a)
    assert verdict.kind == "no_verdict"
    assert verdict.message.startswith("one run: no verdict")


def test_invalid_earlier_runs_are_left_out_of_the_baseline() -> None:
    history = [
        make_run("s", f"h{i}", [("c1", {}, noisy_series(2000, 60, seed=i))], started_at=EPOCH.replace(day=1 + i), seed=i)
        for i in range(4)
    ]  # fmt: skip
    history[0].cells[0].phases["run"] = make_document(step_series(2000, 900, at=30, seconds=60))
    judge_run(history[0])
    new = make_run(
        "s", "new", [("c1", {}, noisy_series(2000, 60, seed=40))], started_at=EPOCH.replace(day=20)
    )
    verdict = compare_with_history(new, history)
    assert verdict.kind == "no_change", verdict.message
    assert "1 invalid baseline result(s) left out" in verdict.message


def test_invalid_results_are_never_compared() -> None:
    a, b = two_runs(2000, 2000)
    for cell in b.cells:
        cell.phases["run"] = make_document(step_series(2000, 900, at=60, seconds=120))
    judge_run(b)
    verdict = compare_runs(b, a)
    assert verdict.kind == "unstable"
    assert "throughput_collapse" in verdict.message


def test_history_uses_repeats_of_earlier_runs() -> None:
    history = [
        make_run("s", f"h{i}", [("c1", {}, noisy_series(2000 * (1 + 0.01 * (i % 3 - 1)), 60, seed=i))],
                 started_at=EPOCH.replace(day=1 + i), seed=i)
        for i in range(6)
    ]  # fmt: skip
    slower = make_run(
        "s", "new", [("c1", {}, noisy_series(1500, 60, seed=50))], started_at=EPOCH.replace(day=20)
    )
    same = make_run(
        "s", "new2", [("c1", {}, noisy_series(2000, 60, seed=51))], started_at=EPOCH.replace(day=20)
    )
    assert compare_with_history(slower, history).kind == "slower"
    verdict = compare_with_history(same, history)
    assert verdict.kind == "no_change", verdict.message
    assert "prediction interval" in verdict.message
    assert compare_with_history(same, []).kind == "no_history"


def test_repeat_summary_gives_a_confidence_interval_per_cell() -> None:
    run = make_run(
        "s", "r", [("c1", {}, noisy_series(1000, 30)), ("c2", {}, noisy_series(3000, 30))], repeats=3
    )
    summary = repeat_summary(run)
    assert set(summary) == {"c1", "c2"}
    assert summary["c2"].n == 3
    assert summary["c2"].low < summary["c2"].estimate < summary["c2"].high


def test_a_partial_last_interval_is_not_a_collapse() -> None:
    """The engine's last interval ends after the phase did: its low rate is an artefact, not a drop."""
    from benchwright.judge.validity import complete_intervals

    doc = make_document(noisy_series(3000, 30))
    doc.runtime_ms = 29_400.0  # the phase ended 0.6 s into its 30th interval
    doc.intervals[-1].throughput = 1200.0
    assert len(complete_intervals(doc)) == 29
    judge_document(doc, ValidityPolicy(collapse_min_segment_s=1))
    assert "throughput_collapse" not in codes(doc)
    whole = make_document(noisy_series(3000, 30))
    assert len(complete_intervals(whole)) == 30


def test_retries_are_counted_as_retries_not_failures() -> None:
    """sysbench's "ignored errors" (deadlocks retried) do not make a run invalid; real errors do."""
    doc = make_document(noisy_series(2000, 30))
    doc.operations["UPDATE"].statuses["RETRY"] = 900  # ~3 % of all operations
    judge_document(doc)
    assert doc.valid
    assert [f.severity for f in doc.validity if f.code == "retries"] == ["info"]
    # failures are their own entry (UPDATE-FAILED, all ERROR), as the runner records them
    doc.operations["UPDATE-FAILED"] = doc.operations["UPDATE"].model_copy(
        update={"operations": 900, "statuses": {"ERROR": 900}, "throughput": 30.0}
    )
    judge_document(doc)
    assert not doc.valid
