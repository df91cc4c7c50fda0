"""Stalls: stretches of a measured phase in which no operation completed.

A collapse (judge/changepoint.py) is a lasting lower level; a stall is a hole. A server that froze
for 10 s of a 20 s run and then caught up leaves the phase's mean throughput plausible and its
levels equal before and after, so only the interval series shows it: the seconds in which not one
operation succeeded. The engine keeps only the intervals in which something happened, so a stall
is a gap between intervals with successes (or between the phase's start or end and the nearest
one), not only a run of zero-throughput samples.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from benchwright.results import IntervalSample, ResultDocument

# A throttled phase completes an operation every 1/target s; a stall must be this many of those
# gaps long before it is more than the schedule's own pace.
SCHEDULE_GAPS = 3.0


@dataclass(frozen=True)
class Stall:
    """No operation completed from ``start_s`` to ``end_s`` (seconds since the phase's start)."""

    start_s: float
    end_s: float

    @property
    def seconds(self) -> float:
        return self.end_s - self.start_s

    def describe(self) -> str:
        return f"no operation completed from {self.start_s:g} s to {self.end_s:g} s ({self.seconds:g} s)"


def _succeeded(sample: IntervalSample) -> bool:
    return sample.throughput > 0 or any(n > 0 for n in sample.operations.values())


def find_stalls(
    intervals: Sequence[IntervalSample], interval_s: float, runtime_s: float, threshold_s: float
) -> list[Stall]:
    """Every stretch longer than ``threshold_s`` in which no interval had a successful operation.

    ``t`` is an interval's end, so successes of the interval ending at ``t`` happened in
    ``(t - interval_s, t]``; the stretch between two such intervals is free of completions. The
    phase's start (0) and end (``runtime_s``) bound the first and last stretch: a phase that
    completed nothing at all is one stall from start to end."""
    stalls = []
    quiet_from = 0.0  # the end of the last interval with a success
    for sample in sorted(intervals, key=lambda s: s.t):
        if not _succeeded(sample):
            continue
        start = max(sample.t - interval_s, 0.0)
        if start - quiet_from > threshold_s + 1e-9:
            stalls.append(Stall(round(quiet_from, 3), round(start, 3)))
        quiet_from = max(quiet_from, sample.t)
    if runtime_s - quiet_from > threshold_s + 1e-9:
        stalls.append(Stall(round(quiet_from, 3), round(runtime_s, 3)))
    return stalls


def stall_threshold(doc: ResultDocument, max_stall_s: float) -> float:
    """The policy's threshold, or a throttled phase's own pace when that is slower."""
    target = doc.measurement.target_ops_per_sec
    pace = SCHEDULE_GAPS / target if target else 0.0
    return max(max_stall_s, pace)


def stalls_of(doc: ResultDocument, max_stall_s: float) -> list[Stall]:
    """The phase's stalls under the policy. A phase without an interval series shows none: a native
    tool that reports no intervals cannot, and one that did nothing is ``no_operations`` already."""
    if not doc.intervals:
        return []
    threshold = stall_threshold(doc, max_stall_s)
    return find_stalls(doc.intervals, doc.measurement.interval_s, doc.runtime_ms / 1000.0, threshold)
