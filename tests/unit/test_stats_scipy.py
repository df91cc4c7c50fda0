"""The hand-written Student-t and Welch code (judge/stats.py) agrees with scipy.stats, a dev-only
dependency, to far better than benchmark noise needs.

Kept rather than replaced because of the Lambda's size: the one code asset (infra/bundling.py) is
83 MB unpacked today; SciPy 1.17.1 with NumPy adds 166 MB (measured with pip for the Lambda's
platform), 249 MB of the 250 MB limit, and 1.17.1 has no manylinux2014 wheel for the bundler.
SciPy is imported, not skipped: it is pinned in the dev extra, so its absence is a broken setup."""

from __future__ import annotations

import math
import random

import pytest
import scipy.stats as scipy_stats

from benchwright.judge import stats


@pytest.mark.parametrize("df", [1, 2, 3, 4.7, 9, 29, 120, 1000])
def test_t_cdf_and_quantile_match_scipy(df: float) -> None:
    for t in (-8.0, -2.5, -1.0, -0.1, 0.0, 0.3, 1.96, 4.0, 12.0):
        assert stats.t_cdf(t, df) == pytest.approx(scipy_stats.t.cdf(t, df), abs=1e-9)
    for p in (0.5, 0.8, 0.9, 0.95, 0.975, 0.995, 0.9995):
        assert stats.t_quantile(p, df) == pytest.approx(scipy_stats.t.ppf(p, df), rel=1e-7, abs=1e-9)


@pytest.mark.parametrize("seed", range(6))
def test_mean_ci_and_welch_interval_match_scipy(seed: int) -> None:
    rng = random.Random(seed)
    a = [rng.gauss(100, 5 + seed) for _ in range(3 + seed)]
    b = [rng.gauss(97, 2 + seed) for _ in range(4 + 2 * seed)]
    ci = stats.mean_ci(a, 0.95)
    low, high = scipy_stats.t.interval(0.95, len(a) - 1, loc=sum(a) / len(a), scale=scipy_stats.sem(a))
    assert (ci.low, ci.high) == pytest.approx((low, high), rel=1e-9)
    welch = stats.welch_difference(a, b, 0.95)
    ref = scipy_stats.ttest_ind(a, b, equal_var=False).confidence_interval(0.95)
    assert (welch.low, welch.high) == pytest.approx((ref.low, ref.high), rel=1e-8)
    assert math.isclose(welch.estimate, sum(a) / len(a) - sum(b) / len(b))


@pytest.mark.parametrize("seed", range(4))
def test_prediction_interval_matches_scipy(seed: int) -> None:
    """One new run against history: single - mean(sample) +- t(n-1) * s * sqrt(1 + 1/n)."""
    rng = random.Random(seed)
    sample = [rng.gauss(1000, 30 + 10 * seed) for _ in range(3 + 2 * seed)]
    single = rng.gauss(980, 30)
    got = stats.prediction_difference(single, sample, 0.95)
    n = len(sample)
    scale = scipy_stats.tstd(sample) * math.sqrt(1 + 1 / n)
    low, high = scipy_stats.t.interval(0.95, n - 1, loc=single - sum(sample) / n, scale=scale)
    assert (got.low, got.high) == pytest.approx((low, high), rel=1e-9)
