"""One run's verdict across nights: what `compare`, `--fail-on`, FinishRun and the site all say.

Each cell's runs (oldest first, the run last) become nightly points as the site plots them, and
site/levels.py judges the newest: the series is cut where the fingerprint key changes, a level
change is alarmed on the night it happens (with its 95 % interval), later nights on that level say
"still at the level of DATE", and with 1-2 earlier nights of a context the verdict is provisional
against a noise floor (repeats, or the A/A pairs of a ``noise: aa`` spec). Invalid nights are never
a level: levels.py leaves them out of every baseline.

The kinds map onto the window verdict's, so exit codes, Slack and every view read them as before:
    alarm (level changed tonight)         -> faster / slower (the step and its interval)
    provisional beyond the noise floor    -> faster / slower (the message says "provisional")
    still at an earlier night's level,
    steady, provisional within the floor  -> no_change (the change was alarmed once, on its night)
    tonight invalid                       -> unstable (never compared; --fail-on invalid names it)
    1-2 earlier nights and no noise floor -> no_verdict
    no earlier night on this context      -> no_history (with what changed, when a context did)
and the run's verdict is its most serious cell's (judge.compare.PRECEDENCE: slower, unstable,
faster, no change, no verdict, no history). Only throughput is a nightly series; other metrics keep
the window verdict (judge.compare).
"""

from __future__ import annotations

from collections.abc import Sequence

from benchwright.judge.compare import (
    DEFAULT_MIN_EFFECT,
    PRECEDENCE,
    _invalid_reasons,
    cell_values,
    earlier_runs,
)
from benchwright.judge.stats import mean
from benchwright.runs import CellResult, CellVerdict, RunRecord, Verdict, VerdictKind
from benchwright.site.levels import Tonight, contexts, tonight
from benchwright.site.nights import Night

METRIC = "throughput"


def _night(record: RunRecord, cells: Sequence[CellResult]) -> Night | None:
    """One cell of one run as a nightly point (None when no repeat has a measured throughput)."""
    values = cell_values(cells, METRIC)
    if not values:
        return None
    docs = [c.measured for c in cells if c.measured is not None]
    fingerprint = next((d.fingerprint for d in docs if d.fingerprint is not None), None)
    return Night(
        run_id=record.run_id,
        at=record.started_at,
        valid=not _invalid_reasons(cells),
        throughput=mean(values),
        repeats=tuple(values),
        p99_ms=None,
        error_rate=0.0,
        cost=None,
        ops_per_dollar=None,
        fingerprint=fingerprint,
        report=None,
        context=fingerprint.key() if fingerprint is not None else "unknown",
        aa=record.spec.get("noise") == "aa" and len(values) >= 2,
    )


def cell_nights(run: RunRecord, earlier: Sequence[RunRecord]) -> dict[str, list[Night]]:
    """Per cell of ``run``: its nights, oldest first, ``run``'s last (``earlier`` oldest first); a cell
    ``run`` measured nothing for maps to an empty list."""
    series: dict[str, list[Night]] = {}
    for record in [*earlier, run]:
        groups: dict[str, list[CellResult]] = {}
        for cell in record.cells:
            groups.setdefault(cell.cell_id, []).append(cell)
        for cell_id, cells in groups.items():
            night = _night(record, cells)
            if night is not None:
                series.setdefault(cell_id, []).append(night)
    out: dict[str, list[Night]] = {}
    for cell in run.cells:
        nights = series.get(cell.cell_id, [])
        out[cell.cell_id] = nights if nights and nights[-1].run_id == run.run_id else []
    return out


def _way(change: float) -> VerdictKind:
    return "faster" if change > 0 else "slower"


def cell_verdict(cell_id: str, nights: Sequence[Night], min_effect: float) -> tuple[CellVerdict, str]:
    """One cell's verdict across its nights and the line that says it."""
    if not nights:
        return CellVerdict(cell_id=cell_id, kind="no_history"), f"{cell_id}: no {METRIC} values"
    found = contexts(nights)
    said: Tonight = tonight(nights, found, min_effect)
    last, context = nights[-1], found[-1]
    changes = list(context.changes) if context.start > 0 else []
    kind: VerdictKind = "no_change"
    ratio = low = high = None
    if said.kind == "alarm" and said.step is not None:
        kind, ratio = _way(said.step.change), 1 + said.step.change
        low, high = 1 + said.step.low, 1 + said.step.high
    elif said.kind == "provisional" and said.moved is not None:
        kind, ratio = _way(said.moved), 1 + said.moved
    elif said.kind == "none":
        earlier = [n for n in nights[context.start : -1] if n.valid]
        kind = "unstable" if not last.valid else ("no_verdict" if earlier else "no_history")
    message = said.message
    if changes and kind == "no_history":
        message += f" (fingerprint changed: {'; '.join(changes)}: not compared across it)"
    verdict = CellVerdict(
        cell_id=cell_id,
        kind=kind,
        baseline=last.throughput / ratio if ratio else None,
        value=last.throughput,
        ratio=ratio,
        ci_low=low,
        ci_high=high,
        fingerprint_changes=changes,
    )
    return verdict, f"{cell_id}: {message}"


def nightly_verdict(
    run: RunRecord, history: Sequence[RunRecord], min_effect: float = DEFAULT_MIN_EFFECT
) -> Verdict:
    """``run``'s verdict across its spec's earlier nights in ``history``: the finished runs
    ``judge.compare.earlier_runs`` keeps (FinishRun, `benchwright run --fail-on`)."""
    return verdict_over(run, list(reversed(earlier_runs(run, history))), min_effect)


def verdict_over(
    run: RunRecord, earlier: Sequence[RunRecord], min_effect: float = DEFAULT_MIN_EFFECT
) -> Verdict:
    """``run``'s verdict across the nights of ``earlier`` (oldest first), as given: `compare A B`
    passes A and the runs between (see the module docstring)."""
    judged = [cell_verdict(cid, nights, min_effect) for cid, nights in cell_nights(run, earlier).items()]
    cells = [c for c, _ in judged]
    lines = [line for _, line in judged]
    changes = list(dict.fromkeys(line for c in cells for line in c.fingerprint_changes))
    if not cells:
        return Verdict(kind="no_history", metric=METRIC, min_effect=min_effect,
                       message=f"{run.run_id} has no cell to judge")  # fmt: skip

    def severity(c: CellVerdict) -> tuple[int, float]:
        return PRECEDENCE[c.kind], -abs((c.ratio or 1.0) - 1.0)

    decisive = min(cells, key=severity)
    counts: dict[str, int] = {}
    for c in cells:
        counts[c.kind] = counts.get(c.kind, 0) + 1
    tally = ", ".join(
        f"{n} {k.replace('_', ' ')}" for k, n in sorted(counts.items(), key=lambda kv: PRECEDENCE[kv[0]])
    )
    head = f"{decisive.kind.replace('_', ' ')} across nights (min effect {min_effect:.0%}; cells: {tally})"
    if decisive.kind in ("no_history", "no_verdict"):  # the first line says why (`run --fail-on`, Slack)
        head = f"{decisive.kind.replace('_', ' ')} across nights: {lines[cells.index(decisive)]}"
    return Verdict(
        kind=decisive.kind,
        effect=decisive.ratio,
        ci_low=decisive.ci_low,
        ci_high=decisive.ci_high,
        message="\n".join([head, *lines]),
        metric=METRIC,
        min_effect=min_effect,
        cells=cells,
        fingerprint_changes=changes,
    )
