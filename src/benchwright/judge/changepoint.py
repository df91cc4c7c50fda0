"""Change-point analysis of a throughput series: finds where its mean level shifts.

Binary segmentation under a Gaussian mean-shift model: split a segment where the reduction in the
sum of squared deviations is largest, keep the split when that reduction beats a BIC-style penalty
(``penalty * sigma^2 * log n``), and recurse on both halves. Sigma comes from the median absolute
first difference, so the noise estimate is not inflated by the very level shifts we look for.
Prefix sums make each scan O(n), so an hour of 1 s intervals takes milliseconds.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Segment:
    start: int  # index of the first sample
    end: int  # index one past the last sample
    mean: float


def noise_sigma(values: Sequence[float]) -> float:
    """Robust noise level: MAD of successive differences, scaled to a normal sigma."""
    diffs = sorted(abs(b - a) for a, b in itertools.pairwise(values))
    if not diffs:
        return 0.0
    mid = len(diffs) // 2
    median = diffs[mid] if len(diffs) % 2 else (diffs[mid - 1] + diffs[mid]) / 2
    return median / (0.6745 * math.sqrt(2.0))


def _best_split(
    prefix: list[float], prefix_sq: list[float], start: int, end: int, min_size: int
) -> tuple[int, float]:
    """The split point in [start, end) that removes the most squared deviation, and that gain."""

    def cost(a: int, b: int) -> float:
        s = prefix[b] - prefix[a]
        return (prefix_sq[b] - prefix_sq[a]) - s * s / (b - a)

    whole = cost(start, end)
    best, gain = -1, 0.0
    for k in range(start + min_size, end - min_size + 1):
        g = whole - cost(start, k) - cost(k, end)
        if g > gain:
            best, gain = k, g
    return best, gain


def segment(
    values: Sequence[float], min_size: int = 5, penalty: float = 5.0, max_changes: int = 8
) -> list[Segment]:
    """Split ``values`` into segments of (statistically) constant mean, in order."""
    n = len(values)
    if n == 0:
        return []
    prefix, prefix_sq = [0.0], [0.0]
    for v in values:
        prefix.append(prefix[-1] + v)
        prefix_sq.append(prefix_sq[-1] + v * v)
    sigma = noise_sigma(values)
    # a floor keeps a perfectly flat series with one step (sigma 0) from splitting on rounding noise
    scale = max(sigma * sigma, 1e-12 * max(1.0, (prefix_sq[n] / n)))
    threshold = penalty * scale * math.log(max(n, 2))
    cuts: list[int] = []
    pending = [(0, n)]
    while pending and len(cuts) < max_changes:
        start, end = pending.pop()
        if end - start < 2 * min_size:
            continue
        k, gain = _best_split(prefix, prefix_sq, start, end, min_size)
        if k > 0 and gain > threshold:
            cuts.append(k)
            pending.extend([(start, k), (k, end)])
    bounds = [0, *sorted(cuts), n]
    return [Segment(a, b, (prefix[b] - prefix[a]) / (b - a)) for a, b in itertools.pairwise(bounds)]


@dataclass(frozen=True)
class Collapse:
    """A sustained drop: the level after ``index`` is ``drop`` (fraction) below the best level before."""

    index: int
    before: float
    after: float

    @property
    def drop(self) -> float:
        return 1.0 - self.after / self.before if self.before > 0 else 0.0


def find_collapse(values: Sequence[float], drop_fraction: float, min_size: int = 5) -> Collapse | None:
    """The largest later-segment drop against the best earlier segment, if it exceeds ``drop_fraction``.

    Comparing with the best *earlier* level (not the overall mean) is what recognises a drained burst
    bucket: fast while credits last, then a lasting plateau well below.
    """
    segments = segment(values, min_size=min_size)
    worst: Collapse | None = None
    best_before = -math.inf
    for previous, current in itertools.pairwise(segments):
        best_before = max(best_before, previous.mean)
        candidate = Collapse(current.start, best_before, current.mean)
        if candidate.drop > drop_fraction and (worst is None or candidate.drop > worst.drop):
            worst = candidate
    return worst
