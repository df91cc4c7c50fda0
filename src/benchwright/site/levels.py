"""Verdicts across nights: where a cell's nightly level changed, found by ``ruptures`` (binary
segmentation, L2 cost; site/binseg.py, the same search without ruptures in the Lambda asset), and
what tonight's night says against that level. judge/nightly.py makes one run's verdict of it for
`compare`, `--fail-on` and FinishRun.

A series is first cut at context markers (``Fingerprint.key()`` changes): nights on different
contexts are never one level. Within a context, ruptures' Binseg finds the nights where the mean
shifts, with a BIC-style penalty scaled by the series' own night-to-night noise
(judge.changepoint.noise_sigma: robust to the very shifts we look for). A level needs a few nights
before ruptures can place it, so tonight is judged on its own against the level before it: outside
a 99.9 % prediction interval and by at least compare's min_effect, it is alarmed that night (with
the 95 % interval of the step); the next nights, still away from the old level, say "still at the
level of" that night, until ruptures finds the change point there. With 1-2 earlier nights the
verdict is provisional, against a noise floor from the context's nights: their repeats' spread, or,
for a spec with ``noise: aa``, the A/A pairs (the same config twice a night), stated as such.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import cache
from statistics import median

from benchwright.judge.changepoint import noise_sigma
from benchwright.judge.compare import DEFAULT_MIN_EFFECT
from benchwright.judge.stats import mean, t_quantile, variance
from benchwright.site.binseg import breakpoints
from benchwright.site.nights import Night

MIN_STEP = DEFAULT_MIN_EFFECT  # a smaller level change is not called a change (compare's min_effect)
ALARM_QUANTILE = 0.9995  # a night alone alarms outside a 99.9 % prediction interval: rare by chance
MIN_NIGHTS = 2  # a level needs at least this many nights
PENALTY = 8.0  # times sigma^2 * log(n): the price of one more change point
FLOOR_SIGMAS = 3.0  # a provisional change must exceed this many repeat standard deviations


@dataclass(frozen=True)
class Context:
    """A run of nights on one fingerprint key; ``changes`` says what changed at its first night."""

    key: str
    start: int  # index into the cell's nights
    end: int  # one past the last
    changes: tuple[str, ...]


@dataclass(frozen=True)
class Step:
    """A level change at ``night`` (index), as after / before - 1 with its 95 % interval."""

    night: int
    at: datetime
    change: float
    low: float
    high: float

    def words(self) -> str:
        way = "faster" if self.change > 0 else "slower"
        return (f"{abs(self.change):.0%} {way} since {self.at:%Y-%m-%d}, "
                f"95% interval {_pct(self.low)} to {_pct(self.high)}")  # fmt: skip


@dataclass(frozen=True)
class Tonight:
    """The newest night's verdict: ``kind`` is alarm, still, steady, provisional or none."""

    kind: str
    message: str
    step: Step | None = None
    moved: float | None = None  # a provisional verdict's change beyond the noise floor (after / before - 1)


def _way(change: float) -> str:
    return f"{abs(change):.0%} {'faster' if change > 0 else 'slower'}"


def _pct(value: float) -> str:
    return f"{value:+.0%}"


def contexts(nights: Sequence[Night]) -> list[Context]:
    """The cell's nights cut where the fingerprint key changes (the markers on a page)."""
    out: list[Context] = []
    start = 0
    for i in range(1, len(nights) + 1):
        if i == len(nights) or nights[i].context != nights[start].context:
            changes: tuple[str, ...] = ()
            before, first = (nights[start - 1], nights[start]) if start else (None, None)
            if before and first and before.fingerprint and first.fingerprint:
                changes = tuple(first.fingerprint.changes(before.fingerprint))
            elif start:
                changes = ("fingerprint unknown on one side",)
            out.append(Context(nights[start].context, start, i, changes))
            start = i
    return out


@cache
def _t(df: int, quantile: float = 0.975) -> float:
    """A t quantile at whole degrees of freedom (rounded down: a little wider), kept: judge.stats
    finds it by bisection, and a site asks for it thousands of times."""
    return t_quantile(quantile, max(df, 1))


def _welch(a: Sequence[float], b: Sequence[float]) -> tuple[float, float]:
    """95 % interval of mean(a) - mean(b), Welch (as judge.stats.welch_difference, cached quantile)."""
    va, vb = variance(a) / len(a), variance(b) / len(b)
    diff = mean(a) - mean(b)
    se2 = va + vb
    if se2 == 0.0:
        return diff, diff
    df = se2**2 / ((va**2 / (len(a) - 1)) + (vb**2 / (len(b) - 1)))
    half = _t(int(df)) * math.sqrt(se2)
    return diff - half, diff + half


def _prediction(single: float, sample: Sequence[float], quantile: float = 0.975) -> tuple[float, float]:
    """Interval of ``single`` - mean(sample), ``single`` one more draw (judge.stats.prediction_difference)."""
    n = len(sample)
    diff = single - mean(sample)
    half = _t(n - 1, quantile) * math.sqrt(variance(sample) * (1.0 + 1.0 / n))
    return diff - half, diff + half


def _step(nights: Sequence[Night], before: Sequence[int], after: Sequence[int]) -> Step:
    a = [nights[i].throughput for i in after]
    b = [nights[i].throughput for i in before]
    base = mean(b)
    if len(a) >= 2 and len(b) >= 2:
        low, high = (d / base for d in _welch(a, b))
    else:
        low, high = -math.inf, math.inf
    first = nights[after[0]]
    return Step(after[0], first.at, mean(a) / base - 1, low, high)


def change_points(nights: Sequence[Night], context: Context, min_step: float = MIN_STEP) -> list[Step]:
    """Level changes within one context, valid nights only (an invalid night's number does not stand);
    steps below MIN_STEP are merged into the level before them."""
    idx = [i for i in range(context.start, context.end) if nights[i].valid]
    if len(idx) < 2 * MIN_NIGHTS:
        return []
    values = [nights[i].throughput for i in idx]
    scale = median(values) or 1.0
    signal = [v / scale for v in values]
    sigma = max(noise_sigma(signal), 1e-3)
    bounds = [0, *breakpoints(signal, PENALTY * sigma**2 * math.log(len(idx)), MIN_NIGHTS)]
    if len(bounds) > 2 and bounds[-1] - bounds[-2] <= MIN_NIGHTS:
        # a newest level of MIN_NIGHTS nights is placed one night early as often as not (the split
        # must leave MIN_NIGHTS on each side): it stands from one night more; until then the night
        # it began was alarmed on its own (``tonight``) and later nights say "still at" that level
        del bounds[-2]
    steps: list[Step] = []
    start = 0
    for k in range(1, len(bounds) - 1):
        step = _step(nights, idx[start : bounds[k]], idx[bounds[k] : bounds[k + 1]])
        if abs(step.change) >= min_step:
            steps.append(step)
            start = bounds[k]
    return steps


def repeat_floor(nights: Sequence[Night]) -> float | None:
    """The noise within a night, relative: the pooled coefficient of variation of the repeats."""
    cvs = []
    for night in nights:
        if len(night.repeats) >= 2 and night.throughput > 0:
            m = night.throughput
            var = sum((r - m) ** 2 for r in night.repeats) / (len(night.repeats) - 1)
            cvs.append(var / (m * m))
    return math.sqrt(sum(cvs) / len(cvs)) if cvs else None


def aa_floor(nights: Sequence[Night]) -> tuple[float, int] | None:
    """The noise between two runs of one config, relative, from the A/A pairs (each ``noise: aa``
    night's first two repeats) of ``nights``: one run's standard deviation, sqrt(mean(d^2) / 2) with
    d the pair's difference over its mean; with how many pairs it rests on."""
    squares = []
    for night in nights:
        if night.aa and len(night.repeats) >= 2:
            a, b = night.repeats[0], night.repeats[1]
            if a + b > 0:
                squares.append(((a - b) / ((a + b) / 2)) ** 2)
    return (math.sqrt(sum(squares) / len(squares) / 2), len(squares)) if squares else None


def _floor(nights: Sequence[Night], last: Night) -> tuple[float, str] | None:
    """The noise floor for a provisional verdict, per context (``nights`` are tonight's context's), and
    where it comes from: the A/A pairs when the spec asks for them, else all the repeats."""
    if last.aa:
        pairs = aa_floor(nights)
        return (pairs[0], f"{pairs[1]} A/A pair(s) on this context (noise: aa)") if pairs else None
    floor = repeat_floor(nights)
    return (floor, "repeats") if floor is not None else None


def _provisional(nights: Sequence[Night], earlier: list[int], last: Night, min_step: float) -> Tonight:
    found = _floor([nights[i] for i in earlier] + [last], last)
    n = len(earlier)
    base = mean([nights[i].throughput for i in earlier])
    change = last.throughput / base - 1 if base > 0 else 0.0
    if found is None:
        return Tonight("none", f"no verdict: {n} earlier night(s) and no repeats to give a noise floor")
    floor, source = found
    noise = FLOOR_SIGMAS * floor
    why = f"noise floor +-{noise:.1%} from {source}" + (
        f", smallest change {min_step:.0%}" if noise < min_step else ""
    )
    if abs(change) > max(noise, min_step):
        return Tonight(
            "provisional", f"provisional: {_way(change)} than {n} earlier night(s) ({why})", moved=change
        )
    return Tonight("provisional", f"provisional: no change beyond the {why} ({n} earlier night(s))")


@dataclass(frozen=True)
class CellLevels:
    """A cell's history judged once: its contexts, every level change, and tonight's verdict."""

    contexts: list[Context]
    steps: list[Step]
    tonight: Tonight


def analyse(nights: Sequence[Night]) -> CellLevels:
    """Contexts, change points and tonight's verdict of one cell, each computed once."""
    found = contexts(nights)
    steps = [s for c in found for s in change_points(nights, c)]
    return CellLevels(found, steps, tonight(nights, found))


def _young_level(nights: Sequence[Night], candidates: list[int], min_step: float) -> list[int]:
    """The newest nights (tonight last) that all left the level before them the same way, beyond a
    99.9 % prediction interval and by MIN_STEP: a level too young for ruptures to place. Empty when
    tonight is on the level."""
    for m in range(min(MIN_NIGHTS + 1, len(candidates) - 2), 0, -1):
        young, base = candidates[-m:], [nights[i].throughput for i in candidates[:-m]]
        level = mean(base)
        moves = []
        for i in young:
            low, high = _prediction(nights[i].throughput, base, ALARM_QUANTILE)
            moves.append(0 if low <= 0 <= high else (1 if low > 0 else -1))
        change = mean([nights[i].throughput for i in young]) / level - 1 if level > 0 else 0.0
        if moves[0] != 0 and len(set(moves)) == 1 and abs(change) >= min_step:
            return young
    return []


def tonight(
    nights: Sequence[Night], found: Sequence[Context] | None = None, min_step: float = MIN_STEP
) -> Tonight:
    """What the newest night says: alarmed once on the night a level changes, "still at the level of"
    on the nights after, provisional with 1-2 earlier nights of its context."""
    if not nights:
        return Tonight("none", "no nights")
    last = nights[-1]
    if not last.valid:
        return Tonight("none", "invalid tonight: not compared")
    context = (found or contexts(nights))[-1]
    earlier = [i for i in range(context.start, len(nights) - 1) if nights[i].valid]
    if not earlier:
        why = "first night" if context.start == 0 else "first night on a new context"
        return Tonight("none", f"no verdict: {why}")
    if len(earlier) < 3:
        return _provisional(nights, earlier, last, min_step)
    # the levels before tonight: a step found with tonight inside its first segment would be half a level
    before = Context(context.key, context.start, len(nights) - 1, context.changes)
    steps = change_points(nights, before, min_step)
    level_start = steps[-1].night if steps else context.start
    young = _young_level(nights, [i for i in earlier if i >= level_start] + [len(nights) - 1], min_step)
    if young:
        base = [nights[i].throughput for i in earlier if level_start <= i < young[0]]
        after = [nights[i].throughput for i in young]
        if len(young) == 1:
            low, high = _prediction(last.throughput, base)
            level = mean(base)
            step = Step(young[0], nights[young[0]].at, last.throughput / level - 1, low / level, high / level)
            return Tonight("alarm", step.words(), step)
        step = Step(young[0], nights[young[0]].at, mean(after) / mean(base) - 1, -math.inf, math.inf)
        return Tonight("still", f"still at the level of {step.at:%Y-%m-%d} ({_way(step.change)})", step)
    if steps:
        s = steps[-1]
        return Tonight("still", f"still at the level of {s.at:%Y-%m-%d} ({_way(s.change)})", s)
    return Tonight("steady", f"no change since {nights[context.start].at:%Y-%m-%d}")
