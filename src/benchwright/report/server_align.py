"""The client's 1 s series and the server's own per-second series on one time axis, and what moved
on the server in the seconds the throughput dropped.

Both sides count seconds since the measured phase started: a client interval ending at ``t`` covers
the second ``[t - 1, t)``, a server point stamped ``t`` falls in the second ``floor(t)``. A drop is a
run of seconds whose throughput is below the phase's median by more than the noise (three robust
standard deviations, 1.4826 x the median absolute deviation, and at least ``MIN_DROP`` of the
median, so a perfectly flat run does not flag its smallest wobble). For each drop, a server series
"moved" when its mean over the drop's seconds differs from its median over the other seconds by
more than its own noise (the same three robust deviations) and by at least ``MIN_MOVE`` relative.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field

from benchwright.providers.aws.server_series import DOC_BYTES, EM_SOURCE, PI_SOURCE
from benchwright.results import IntervalSample, MetricSeries

MAD_SIGMA = 1.4826  # median absolute deviation -> standard deviation (normal data)
NOISE_SIGMAS = 3.0
MIN_DROP = 0.05  # of the median throughput
MIN_MOVE = 0.2  # relative change of a server series (or an absolute 0.1 where its baseline is ~0)
MAX_MOVES = 4  # the strongest movers named per drop
SERVER_SOURCES = (EM_SOURCE, PI_SOURCE)


@dataclass
class Move:
    series: str  # "os.disk.queue (enhanced_monitoring:db-1)"
    before: float
    during: float
    score: float  # change in units of the series' own noise

    def text(self) -> str:
        arrow = "rose" if self.during > self.before else "fell"
        return f"{self.series} {arrow} {self.before:.3g} -> {self.during:.3g}"


@dataclass
class Drop:
    start: int  # first second (since the phase start)
    end: int  # last second, inclusive
    throughput: float  # mean ops/s over the drop
    baseline: float  # the phase's median ops/s
    moves: list[Move] = field(default_factory=list)

    def text(self) -> str:
        span = f"{self.start} s" if self.start == self.end else f"{self.start}-{self.end} s"
        head = f"{span}: {self.throughput:,.0f} ops/s against a median of {self.baseline:,.0f}"
        if not self.moves:
            return head + "; no server series moved beyond its noise in those seconds"
        return head + "; at the same seconds " + "; ".join(m.text() for m in self.moves)


def server_series(metrics: Sequence[MetricSeries]) -> list[MetricSeries]:
    """The per-second server series (Enhanced Monitoring, Performance Insights), each once; not the
    documents' sizes (what they cost, not what the server did)."""
    found = {
        (m.name, m.source): m
        for m in metrics
        if m.source.split(":", 1)[0] in SERVER_SOURCES and m.points and m.name != DOC_BYTES
    }
    return list(found.values())


def by_second(series: MetricSeries) -> dict[int, float]:
    """A series' value in each whole second (the mean where a second holds several points)."""
    slots: dict[int, list[float]] = {}
    for p in series.points:
        slots.setdefault(math.floor(p.t), []).append(p.value)
    return {s: statistics.fmean(v) for s, v in slots.items()}


def client_seconds(intervals: Sequence[IntervalSample]) -> dict[int, IntervalSample]:
    """Each 1 s interval by the second it covers (``[t - 1, t)``)."""
    return {max(0, math.ceil(s.t - 1e-9) - 1): s for s in intervals}


def _noise(values: Sequence[float]) -> tuple[float, float]:
    median = statistics.median(values)
    mad = statistics.median(abs(v - median) for v in values)
    return median, MAD_SIGMA * mad


def drops(intervals: Sequence[IntervalSample]) -> list[Drop]:
    """Runs of seconds with throughput below the median by more than the noise."""
    seconds = client_seconds(intervals)
    if len(seconds) < 5:
        return []
    median, sigma = _noise([s.throughput for s in seconds.values()])
    limit = median - max(NOISE_SIGMAS * sigma, MIN_DROP * median)
    low = sorted(sec for sec, s in seconds.items() if s.throughput < limit)
    out: list[Drop] = []
    for sec in low:
        if out and sec == out[-1].end + 1:
            out[-1].end = sec
        else:
            out.append(Drop(start=sec, end=sec, throughput=0.0, baseline=median))
    for d in out:
        d.throughput = statistics.fmean(seconds[s].throughput for s in range(d.start, d.end + 1))
    return out


def moves(drop: Drop, series: Sequence[MetricSeries], drop_seconds: set[int]) -> list[Move]:
    """The server series that moved beyond their noise during ``drop``, strongest first."""
    found: list[Move] = []
    inside = set(range(drop.start, drop.end + 1))
    for s in series:
        values = by_second(s)
        during = [v for sec, v in values.items() if sec in inside]
        rest = [v for sec, v in values.items() if sec not in drop_seconds]
        if not during or len(rest) < 3:
            continue
        before, sigma = _noise(rest)
        now = statistics.fmean(during)
        change = abs(now - before)
        if change <= NOISE_SIGMAS * sigma or change < max(
            MIN_MOVE * abs(before), 0.1 if before == 0 else 0.0
        ):
            continue
        score = change / sigma if sigma > 0 else math.inf
        found.append(Move(series=f"{s.name} ({s.source})", before=before, during=now, score=score))
    found.sort(key=lambda m: (-m.score, -abs(m.during - m.before)))
    return found[:MAX_MOVES]


def annotate(intervals: Sequence[IntervalSample], metrics: Sequence[MetricSeries]) -> list[Drop]:
    """Every throughput drop beyond the noise, with what moved on the server at the same seconds."""
    found = drops(intervals)
    series = server_series(metrics)
    all_drop_seconds = {s for d in found for s in range(d.start, d.end + 1)}
    for d in found:
        d.moves = moves(d, series, all_drop_seconds)
    return found
