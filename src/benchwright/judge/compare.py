"""Statistical verdicts: is run B faster, slower or unchanged against run A or against history?

Every comparison works on the ratio new / baseline of a metric, on a log scale (ratios are what a
reader means by "10 % faster", and logs make them symmetric). The interval for the ratio comes from:
- repeats on both sides: Welch's t interval on log values;
- one new value against 3+ history values (or the reverse): a t prediction interval;
- otherwise there is no verdict ("one run: no verdict"): the spread of one run's interval series is
  noise within a run, not between runs, and called a busy machine's re-run "8 % slower".
The verdict then needs both statistical significance and a change of at least ``min_effect``:
    significant and |change| >= min_effect          -> faster / slower
    significant but smaller than min_effect         -> no_change (a real but negligible difference)
    not significant, |change| < min_effect and the
    interval within +-2 * min_effect                -> no_change
    otherwise                                       -> unstable (too noisy to say; add repeats)
Results measured on different fingerprints (results.Fingerprint.key: runner class and machine, engine
version, target class, storage, AZ relation, spec digest) are never compared either: the baseline
keeps only earlier runs on the new run's fingerprint (results written before fingerprints existed
are kept), and a cell with none left says "fingerprint changed: <what changed>" instead of a verdict.
Invalid results (collapse, saturated client, errors) are never compared: an invalid new result is
unstable, and invalid earlier results are left out of the baseline (one bad night does not make the
next ten verdicts unstable).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from benchwright.judge.stats import Interval, mean, mean_ci, prediction_difference, welch_difference
from benchwright.results import ResultDocument
from benchwright.runs import CellResult, CellVerdict, RunRecord, Verdict, VerdictKind

DEFAULT_MIN_EFFECT = 0.05
DEFAULT_CONFIDENCE = 0.95
PRECEDENCE: dict[str, int] = {"slower": 0, "unstable": 1, "faster": 2, "no_change": 3, "no_verdict": 4,
                              "no_history": 5}  # fmt: skip
UNDECIDED = ("no_history", "no_verdict")


def higher_is_better(metric: str) -> bool:
    return metric.startswith("throughput")


def metric_value(doc: ResultDocument, metric: str) -> float | None:
    """``throughput`` (ops/s), ``p99_us`` / ``p95_us`` / ``average_us`` (worst operation), or
    ``p99_us:READ`` / ``throughput:READ`` for one operation."""
    if metric == "throughput":
        return doc.throughput
    name, _, operation = metric.partition(":")
    if name == "throughput":
        summary = doc.operations.get(operation)
        return summary.throughput if summary else None
    if name not in ("p50_us", "p90_us", "p95_us", "p99_us", "p999_us", "average_us"):
        raise ValueError(f"unknown metric {metric!r}")
    if operation:
        summary = doc.operations.get(operation)
        return float(getattr(summary, name)) if summary else None
    values = [float(getattr(s, name)) for s in doc.succeeded().values() if s.operations]
    return max(values) if values else None


def _log(values: Sequence[float]) -> list[float]:
    return [math.log(max(v, 1e-9)) for v in values]


@dataclass(frozen=True)
class CellComparison:
    cell_id: str
    kind: VerdictKind
    ratio: float | None
    low: float | None
    high: float | None
    method: str
    note: str = ""
    baseline: float | None = None  # mean of the baseline values
    value: float | None = None  # mean of the new values
    fingerprint_changes: tuple[str, ...] = ()  # vs the newest baseline run left out for its fingerprint


def classify(ratio: Interval, metric: str, min_effect: float) -> VerdictKind:
    """Turn a log-ratio interval into a verdict kind (see the module docstring for the rule)."""
    est, lo, hi = math.exp(ratio.estimate), math.exp(ratio.low), math.exp(ratio.high)
    significant = lo > 1.0 or hi < 1.0
    big = est >= 1.0 + min_effect or est <= 1.0 - min_effect
    if significant and big:
        better = (est > 1.0) == higher_is_better(metric)
        return "faster" if better else "slower"
    if significant:
        return "no_change"
    if not big and lo >= 1.0 - 2 * min_effect and hi <= 1.0 + 2 * min_effect:
        return "no_change"
    return "unstable"


def _invalid_reasons(cells: Sequence[CellResult]) -> list[str]:
    reasons = []
    for cell in cells:
        doc = cell.measured
        flags = [*cell.validity, *(doc.validity if doc else [])]
        reasons += [f"{cell.cell_id}: {f.code}" for f in flags if f.severity == "invalid"]
    return sorted(set(reasons))


def _mean_or_none(values: Sequence[float]) -> float | None:
    return mean(values) if values else None


def cell_values(cells: Sequence[CellResult], metric: str) -> list[float]:
    """The metric of each repeat's measured phase (repeats without it are skipped)."""
    docs = [c.measured for c in cells if c.measured]
    return [v for v in (metric_value(d, metric) for d in docs) if v is not None]


def _key(cell: CellResult) -> str | None:
    doc = cell.measured
    return doc.fingerprint.key() if doc is not None and doc.fingerprint is not None else None


def split_by_fingerprint(
    new: Sequence[CellResult], base: Sequence[CellResult]
) -> tuple[list[CellResult], list[CellResult], list[str]]:
    """The baseline cells on the new cells' fingerprint (or with none: written before fingerprints),
    the ones on another, and what changed against the first of those (the newest, as history comes
    newest first)."""
    keys = {_key(c) for c in new} - {None}
    if not keys:
        return list(base), [], []
    reference = next(c.measured.fingerprint for c in new if c.measured and c.measured.fingerprint)
    same = [c for c in base if _key(c) is None or _key(c) in keys]
    other = [c for c in base if _key(c) is not None and _key(c) not in keys]
    changes: list[str] = []
    if other:
        before = other[0].measured.fingerprint  # type: ignore[union-attr]
        changes = reference.changes(before) if before is not None else []
    return same, other, changes


def compare_cell(
    new: Sequence[CellResult],
    base: Sequence[CellResult],
    metric: str = "throughput",
    min_effect: float = DEFAULT_MIN_EFFECT,
    confidence: float = DEFAULT_CONFIDENCE,
) -> CellComparison:
    """Compare the repeats of one matrix cell in the new run against baseline repeats of that cell.

    The interval always comes from values of separate runs (repeats or earlier runs), so it reflects
    the variation between runs; a single value on each side gets no verdict."""
    cell_id = new[0].cell_id if new else (base[0].cell_id if base else "?")
    if not base:
        return CellComparison(cell_id, "no_history", None, None, None, "none", "no baseline for this cell")
    base, other, changes = split_by_fingerprint(new, base)
    if not base:
        said = "; ".join(changes) or "a field outside the shown ones"
        note = f"fingerprint changed: {said} (no earlier run on this fingerprint: not compared)"
        return CellComparison(
            cell_id, "no_history", None, None, None, "none", note, fingerprint_changes=tuple(changes)
        )
    result = _compare_same(cell_id, new, base, metric, min_effect, confidence)
    if other:
        left = (
            f"compared only with runs on the same fingerprint ({len(other)} on another left out: "
            f"{'; '.join(changes)})"
        )
        note = f"{result.note}; {left}" if result.note else left
        result = replace(result, note=note, fingerprint_changes=tuple(changes))
    return result


def _compare_same(
    cell_id: str,
    new: Sequence[CellResult],
    base: Sequence[CellResult],
    metric: str,
    min_effect: float,
    confidence: float,
) -> CellComparison:
    """``compare_cell`` once the baseline is on the new run's fingerprint."""
    valid_base = [c for c in base if not _invalid_reasons([c])]
    invalid = _invalid_reasons(new)
    if invalid:  # never compared; the numbers are still shown
        shown: dict[str, Any] = {
            "baseline": _mean_or_none(cell_values(valid_base, metric)),
            "value": _mean_or_none(cell_values(new, metric)),
        }
        return CellComparison(
            cell_id, "unstable", None, None, None, "none", "invalid results: " + ", ".join(invalid), **shown
        )
    left_out = len(base) - len(valid_base)
    if not valid_base:
        return CellComparison(
            cell_id,
            "no_history",
            None,
            None,
            None,
            "none",
            f"no valid baseline ({left_out} invalid left out)",
        )
    a, b = cell_values(new, metric), cell_values(valid_base, metric)
    if not a or not b:
        return CellComparison(cell_id, "no_history", None, None, None, "none", f"no {metric} values")
    ratio = mean(a) / mean(b) if mean(b) else None
    note = f"{left_out} invalid baseline result(s) left out" if left_out else ""
    means: dict[str, Any] = {"baseline": mean(b), "value": mean(a)}
    try:
        if len(a) >= 2 and len(b) >= 2:
            interval = welch_difference(_log(a), _log(b), confidence)
            method = f"Welch t on {len(a)} vs {len(b)} runs"
        elif len(a) == 1 and len(b) >= 3:
            interval = prediction_difference(_log(a)[0], _log(b), confidence)
            method = f"t prediction interval, 1 run vs {len(b)} baseline runs"
        elif len(b) == 1 and len(a) >= 3:
            flipped = prediction_difference(_log(b)[0], _log(a), confidence)
            interval = Interval(-flipped.estimate, -flipped.high, -flipped.low, flipped.n, confidence)
            method = f"t prediction interval, {len(a)} repeats vs 1 baseline run"
        else:
            why = f"{len(a)} vs {len(b)} run(s): no between-run variance (add repeats, or 3+ earlier runs)"
            return CellComparison(cell_id, "no_verdict", ratio, None, None, "none", why, **means)
    except ValueError as exc:
        return CellComparison(cell_id, "unstable", ratio, None, None, "none", str(exc), **means)
    kind = classify(interval, metric, min_effect)
    return CellComparison(
        cell_id,
        kind,
        math.exp(interval.estimate),
        math.exp(interval.low),
        math.exp(interval.high),
        method,
        note,
        **means,
    )


def _group(records: Sequence[RunRecord]) -> dict[str, list[CellResult]]:
    groups: dict[str, list[CellResult]] = {}
    for record in records:
        for cell in record.cells:
            groups.setdefault(cell.cell_id, []).append(cell)
    return groups


def describe(c: CellComparison, metric: str, confidence: float) -> str:
    if c.ratio is None or c.low is None or c.high is None:
        return f"{c.cell_id}: {c.kind.replace('_', ' ')} ({c.note})"
    return (
        f"{c.cell_id}: {c.kind.replace('_', ' ')}, {metric} x{c.ratio:.3f} "
        f"({confidence:.0%} CI x{c.low:.3f} to x{c.high:.3f}; {c.method}{'; ' + c.note if c.note else ''})"
    )


def compare_runs(
    new: RunRecord,
    baseline: RunRecord | Sequence[RunRecord],
    metric: str = "throughput",
    min_effect: float = DEFAULT_MIN_EFFECT,
    confidence: float = DEFAULT_CONFIDENCE,
) -> Verdict:
    """One verdict for ``new`` against one baseline run or several (history); cells matched by id.

    The run's verdict is its most serious cell's: slower beats unstable beats faster beats no change.
    """
    base_runs = [baseline] if isinstance(baseline, RunRecord) else list(baseline)
    base_runs = [r for r in base_runs if r.run_id != new.run_id]
    if not base_runs:
        return Verdict(
            kind="no_history",
            metric=metric,
            min_effect=min_effect,
            message=f"no earlier run of {new.spec_name!r} to compare with",
        )
    new_groups, base_groups = _group([new]), _group(base_runs)
    results = [
        compare_cell(cells, base_groups.get(cell_id, []), metric, min_effect, confidence)
        for cell_id, cells in new_groups.items()
    ]
    compared = [r for r in results if r.kind not in UNDECIDED]
    cells = [
        CellVerdict(cell_id=r.cell_id, kind=r.kind, baseline=r.baseline, value=r.value, ratio=r.ratio,
                    ci_low=r.low, ci_high=r.high, fingerprint_changes=list(r.fingerprint_changes))
        for r in results
    ]  # fmt: skip
    changes = list(dict.fromkeys(line for r in results for line in r.fingerprint_changes))  # in field order
    if not compared and any(r.kind == "no_verdict" for r in results):
        return Verdict(
            kind="no_verdict",
            metric=metric,
            min_effect=min_effect,
            cells=cells,
            fingerprint_changes=changes,
            message="one run: no verdict (the interval needs repeats or 3+ earlier runs)\n"
            + "\n".join(describe(r, metric, confidence) for r in results),
        )
    if not compared:
        message = f"no cell of {new.run_id} has a baseline in {len(base_runs)} earlier run(s)"
        if changes:
            message = (
                f"fingerprint changed: {'; '.join(changes)}: no earlier run on this fingerprint, "
                "no faster/slower verdict\n" + "\n".join(describe(r, metric, confidence) for r in results)
            )
        return Verdict(
            kind="no_history",
            metric=metric,
            min_effect=min_effect,
            message=message,
            cells=cells if changes else [],
            fingerprint_changes=changes,
        )

    def severity(c: CellComparison) -> tuple[int, float]:
        distance = abs(math.log(c.ratio)) if c.ratio else 0.0
        return PRECEDENCE[c.kind], -distance

    decisive = min(compared, key=severity)
    against = base_runs[0].run_id if len(base_runs) == 1 else f"{len(base_runs)} earlier runs"
    counts: dict[str, int] = {}
    for r in compared:
        counts[r.kind] = counts.get(r.kind, 0) + 1
    tally = ", ".join(
        f"{n} {k.replace('_', ' ')}" for k, n in sorted(counts.items(), key=lambda kv: PRECEDENCE[kv[0]])
    )
    lines = [f"{decisive.kind.replace('_', ' ')} vs {against} (min effect {min_effect:.0%}; cells: {tally})"]
    lines += [describe(r, metric, confidence) for r in results]
    return Verdict(
        kind=decisive.kind,
        metric=metric,
        effect=decisive.ratio,
        ci_low=decisive.low,
        ci_high=decisive.high,
        min_effect=min_effect,
        message="\n".join(lines),
        cells=cells,
        fingerprint_changes=changes,
    )


def compare_with_history(
    run: RunRecord,
    history: Sequence[RunRecord],
    metric: str = "throughput",
    min_effect: float = DEFAULT_MIN_EFFECT,
    confidence: float = DEFAULT_CONFIDENCE,
    window: int = 10,
) -> Verdict:
    """Against the newest ``window`` finished earlier runs of the same spec (``earlier_runs``)."""
    return compare_runs(run, earlier_runs(run, history)[:window], metric, min_effect, confidence)


def earlier_runs(run: RunRecord, history: Sequence[RunRecord]) -> list[RunRecord]:
    """The runs a verdict may use, newest first: earlier runs of the same spec that finished, succeeded
    or invalid (an invalid run's valid cells still count: ``compare_cell`` leaves its invalid ones out)."""
    earlier = [
        r
        for r in history
        if r.run_id != run.run_id
        and r.spec_name == run.spec_name
        and r.status in ("succeeded", "invalid")
        and r.started_at <= run.started_at
    ]
    earlier.sort(key=lambda r: r.started_at, reverse=True)
    return earlier


def repeat_summary(
    record: RunRecord, metric: str = "throughput", confidence: float = DEFAULT_CONFIDENCE
) -> dict[str, Interval]:
    """Mean and t confidence interval of ``metric`` across the repeats of each cell."""
    out: dict[str, Interval] = {}
    for cell_id, cells in _group([record]).items():
        values = [v for v in (metric_value(c.measured, metric) for c in cells if c.measured) if v is not None]
        if values:
            out[cell_id] = mean_ci(values, confidence)
    return out


def values_needed(new_values: int) -> int:
    """Baseline values (earlier runs' results of one cell) ``compare_cell`` needs for an interval when
    the new run has ``new_values`` repeats: 3 for one (a prediction interval), 2 for two (Welch), 1
    for three or more."""
    return 3 if new_values <= 1 else (2 if new_values == 2 else 1)


@dataclass
class HistoryNeed:
    """Why a run got no verdict: the cell with the largest shortfall, the earlier runs a verdict needs
    and the earlier runs with a valid result for that cell."""

    cell_id: str
    needed: int
    have: int

    def describe(self, spec_name: str) -> str:
        return (
            f"needs {self.needed} earlier valid run(s) of {spec_name!r} with cell {self.cell_id!r} and has "
            f"{self.have}"
        )


def history_need(run: RunRecord, history: Sequence[RunRecord], window: int = 10) -> HistoryNeed | None:
    """What the verdict against ``history`` lacks (None when every cell has enough): earlier runs are
    assumed to hold as many repeats of a cell as this run does."""
    earlier = earlier_runs(run, history)[:window]
    worst: HistoryNeed | None = None
    for cell_id, cells in _group([run]).items():
        repeats = len(cells)
        needed = math.ceil(values_needed(repeats) / repeats)
        have = sum(
            1
            for r in earlier
            if any(c.cell_id == cell_id and not _invalid_reasons([c]) and c.measured for c in r.cells)
        )
        if have < needed and (worst is None or needed - have > worst.needed - worst.have):
            worst = HistoryNeed(cell_id, needed, have)
    return worst
