"""HdrHistograms as the runner keeps them: microseconds from 1 us to 1 hour at 3 significant digits
(YCSB's HdrHistogram measurement type), summary statistics in one pass, the fold of many latencies
at once (``record_counts``), and HdrHistogram's standard compressed base64 encoding with which
histograms cross process boundaries. Split out of measure.py, which records into them."""

from __future__ import annotations

import math
import sys
from bisect import bisect_left
from collections.abc import Mapping, Sequence
from itertools import accumulate

from hdrh.codec import HdrHistogramEncoder
from hdrh.histogram import HdrHistogram

LOWEST_US = 1
HIGHEST_US = 3_600_000_000
SIGNIFICANT_FIGURES = 3


class Histogram(HdrHistogram):
    """HdrHistogram with the summary statistics computed in one pass over a copy of the counts.

    hdrh computes percentiles, the mean and the standard deviation with pure-Python iterators over
    every one of the ~23,000 buckets (about 0.1 s per operation summary, and again per interval).
    These overrides return exactly the same values (same buckets, same arithmetic in the same
    order; tests/unit/test_measure.py compares them) at a fraction of the cost."""

    def _counts_list(self) -> list[int]:
        n = min(self.counts_len, self.encoder.payload.counts_len)  # decoded arrays may be truncated
        return self.counts[:n]

    def get_value_at_percentile(self, percentile: float) -> int:
        target = self.get_target_count_at_percentile(percentile)
        cumulative = list(accumulate(self._counts_list()))
        index = bisect_left(cumulative, target)
        if index >= len(cumulative):
            return 0
        value = self.get_value_from_index(index)
        if percentile:
            return int(self.get_highest_equivalent_value(value))
        return int(self.get_lowest_equivalent_value(value))

    def _recorded(self) -> list[tuple[int, int]]:
        """(median equivalent value, count) of every non-empty bucket, lowest first."""
        key = (self.lowest_trackable_value, self.highest_trackable_value, self.significant_figures)
        medians = _MEDIANS.get(key)
        if medians is None:
            medians = _MEDIANS[key] = {}
        out = []
        for i, count in enumerate(self._counts_list()):
            if count:
                value = medians.get(i)
                if value is None:
                    value = medians[i] = self._hdr_median_equiv_value(
                        self.get_highest_equivalent_value(self.get_value_from_index(i))
                    )
                out.append((value, count))
        return out

    def _mean(self, recorded: list[tuple[int, int]]) -> float:
        total = 0
        for value, count in recorded:
            total += count * value
        return float(total) / self.total_count

    def get_mean_value(self) -> float:
        if not self.total_count:
            return 0.0
        return self._mean(self._recorded())

    def get_stddev(self) -> float:
        if not self.total_count:
            return 0.0
        recorded = self._recorded()
        mean = self._mean(recorded)
        geometric_dev_total = 0.0
        for value, count in recorded:
            dev = (value * 1.0) - mean
            geometric_dev_total += (dev * dev) * count
        return math.sqrt(geometric_dev_total / self.total_count)


# bucket index -> median equivalent value, per histogram configuration (at most ~23,000 entries each)
_MEDIANS: dict[tuple[int, int, int], dict[int, int]] = {}


def record_counts(histograms: Sequence[HdrHistogram], counted: Mapping[int, int]) -> int:
    """Add ``counted`` (value -> how many times it was seen) to each of ``histograms``, exactly as
    ``record_value(value, count)`` on each would; return the sum of the squared values.

    This is the fold of every operation's latency (issue 12: it ran at up to one hdrh
    ``record_value`` per operation and histogram when latencies spread, four Python calls each).
    Each distinct value's counts index is computed once, inline, for all the histograms, with the
    same arithmetic as hdrh's ``_counts_index_for`` (``int.bit_length`` for its ``_clz``); the
    histograms must share one configuration (``new_histogram``'s). tests/unit/test_measure.py
    compares the result with one ``record_value`` per operation."""
    first = histograms[0]
    assert all(
        (h.lowest_trackable_value, h.highest_trackable_value, h.significant_figures)
        == (first.lowest_trackable_value, first.highest_trackable_value, first.significant_figures)
        for h in histograms
    ), "one configuration for every histogram of a fold"
    mask = first.sub_bucket_mask
    unit = first.unit_magnitude
    half_magnitude = first.sub_bucket_half_count_magnitude
    shift = unit + half_magnitude + 1  # bucket index = bit length of (value | mask) - shift
    half = first.sub_bucket_half_count
    limit = first.counts_len
    arrays = [h.counts for h in histograms]
    squares = total = 0
    low, high = sys.maxsize, 0
    for value, count in counted.items():
        if value < 0:
            continue  # what record_value refuses (the recorder clamps latencies, so never here)
        bucket_index = (value | mask).bit_length() - shift
        index = ((bucket_index + 1) << half_magnitude) + (value >> (bucket_index + unit)) - half
        if index >= limit:
            continue  # likewise: above the histogram's highest trackable value
        for counts in arrays:
            counts[index] += count
        total += count
        squares += value * value * count
        if value < low:
            low = value
        if value > high:
            high = value
    if total:
        for h in histograms:
            h.total_count += total
            h.min_value = min(h.min_value, low)
            h.max_value = max(h.max_value, high)
    return squares


def new_histogram() -> HdrHistogram:
    return Histogram(LOWEST_US, HIGHEST_US, SIGNIFICANT_FIGURES)


def decode_histogram(encoded: str | bytes) -> HdrHistogram:
    data = encoded.encode() if isinstance(encoded, str) else encoded
    hdr_payload = HdrHistogramEncoder.decode(data, True)
    payload = hdr_payload.payload
    return Histogram(
        payload.lowest_trackable_value,
        payload.highest_trackable_value,
        payload.significant_figures,
        hdr_payload=hdr_payload,
    )


def encode_histogram(hist: HdrHistogram) -> str:
    return bytes(hist.encode()).decode("ascii")
