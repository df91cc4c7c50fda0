"""Small statistics we need for honest comparisons, written here so the core needs no SciPy.

Student's t distribution (CDF through the regularized incomplete beta function, quantiles by
bisection on that CDF), means with t confidence intervals, and Welch's unequal-variance interval
for a difference of means. Accurate to ~1e-10, far beyond what benchmark noise needs.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass


def _beta_continued_fraction(a: float, b: float, x: float) -> float:
    """Continued fraction of the incomplete beta function, evaluated with the modified Lentz method."""
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    result = d
    for m in range(1, 400):
        # even step
        numerator = m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m))
        d = 1.0 + numerator * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + numerator / c
        c = c if abs(c) > tiny else tiny
        result *= d * c
        # odd step
        numerator = -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))
        d = 1.0 + numerator * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + numerator / c
        c = c if abs(c) > tiny else tiny
        step = d * c
        result *= step
        if abs(step - 1.0) < 1e-15:
            break
    return result


def regularized_beta(a: float, b: float, x: float) -> float:
    """I_x(a, b), the regularized incomplete beta function."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    log_front = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(log_front) * _beta_continued_fraction(a, b, x) / a
    return 1.0 - math.exp(log_front) * _beta_continued_fraction(b, a, 1.0 - x) / b


def t_cdf(t: float, df: float) -> float:
    """P(T <= t) for Student's t with ``df`` degrees of freedom (df may be fractional, as in Welch)."""
    if df <= 0:
        raise ValueError("degrees of freedom must be positive")
    tail = 0.5 * regularized_beta(df / 2.0, 0.5, df / (df + t * t))
    return 1.0 - tail if t >= 0 else tail


def t_quantile(p: float, df: float) -> float:
    """The t value with P(T <= t) = p, found by bisection on ``t_cdf``."""
    if not 0.0 < p < 1.0:
        raise ValueError("p must be in (0, 1)")
    if p == 0.5:
        return 0.0
    if p < 0.5:
        return -t_quantile(1.0 - p, df)
    low, high = 0.0, 1.0
    while t_cdf(high, df) < p:
        high *= 2.0
        if high > 1e12:
            return math.inf
    for _ in range(200):
        mid = (low + high) / 2.0
        if t_cdf(mid, df) < p:
            low = mid
        else:
            high = mid
        if high - low < 1e-12 * max(1.0, high):
            break
    return (low + high) / 2.0


def mean(values: Sequence[float]) -> float:
    return sum(values) / len(values)


def variance(values: Sequence[float]) -> float:
    """Sample variance (n - 1 denominator); 0 for fewer than two values."""
    n = len(values)
    if n < 2:
        return 0.0
    m = mean(values)
    return sum((v - m) ** 2 for v in values) / (n - 1)


@dataclass(frozen=True)
class Interval:
    estimate: float
    low: float
    high: float
    n: int
    confidence: float

    @property
    def half_width(self) -> float:
        return (self.high - self.low) / 2.0


def mean_ci(values: Sequence[float], confidence: float = 0.95) -> Interval:
    """Mean of the repeats with a t-distribution interval; one value gives an unbounded interval."""
    if not values:
        raise ValueError("no values")
    m = mean(values)
    n = len(values)
    if n < 2:
        return Interval(m, -math.inf, math.inf, n, confidence)
    half = t_quantile(0.5 + confidence / 2.0, n - 1) * math.sqrt(variance(values) / n)
    return Interval(m, m - half, m + half, n, confidence)


def welch_difference(a: Sequence[float], b: Sequence[float], confidence: float = 0.95) -> Interval:
    """Interval for mean(a) - mean(b) without assuming equal variances (Welch-Satterthwaite df).

    Needs at least two values on each side; identical constant samples give a zero-width interval.
    """
    if len(a) < 2 or len(b) < 2:
        raise ValueError("Welch's interval needs at least two values per side")
    va, vb = variance(a) / len(a), variance(b) / len(b)
    diff = mean(a) - mean(b)
    se2 = va + vb
    if se2 == 0.0:
        return Interval(diff, diff, diff, len(a) + len(b), confidence)
    df = se2**2 / ((va**2 / (len(a) - 1)) + (vb**2 / (len(b) - 1)))
    half = t_quantile(0.5 + confidence / 2.0, df) * math.sqrt(se2)
    return Interval(diff, diff - half, diff + half, len(a) + len(b), confidence)


def prediction_difference(single: float, sample: Sequence[float], confidence: float = 0.95) -> Interval:
    """Interval for ``single`` minus the mean of ``sample``, treating ``single`` as one more draw with
    the sample's spread (used when the new run has one repeat and history has several)."""
    if len(sample) < 2:
        raise ValueError("the sample needs at least two values")
    n = len(sample)
    diff = single - mean(sample)
    half = t_quantile(0.5 + confidence / 2.0, n - 1) * math.sqrt(variance(sample) * (1.0 + 1.0 / n))
    return Interval(diff, diff - half, diff + half, n + 1, confidence)


def batch_means(values: Sequence[float], batches: int = 10) -> list[float]:
    """Means of ``batches`` contiguous blocks: nearly independent values from an autocorrelated series."""
    n = len(values)
    batches = max(1, min(batches, n))
    size = n // batches
    return [mean(values[i * size : (i + 1) * size]) for i in range(batches)] if size else list(values)
