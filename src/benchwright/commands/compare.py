"""`benchwright compare A B`: is B faster, slower or unchanged against A? A statistical verdict.

A and B are run ids (or unique prefixes) in the store, or JSON files (a run record or one result
document). Cells are matched by id. Per cell and operation it prints A, B, the change and its
interval. The throughput verdict is the one FinishRun and `run --fail-on` give (judge/nightly.py): B
across the nights from A to B (A and the runs of B's spec between them), a level change alarmed on
its night and "still at the level of DATE" after, the series cut where the fingerprint changed
(docs/site.md). Other metrics get the window verdict: significance, a minimum effect size, and an
interval from separate runs (docs/reading-results.md).
``--fail-on regression`` (or ``invalid``) exits 3, for CI; 5 when no verdict is possible (too few
repeats on either side), so a gate that cannot judge never passes silently.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.console import Console
from rich.table import Table

from benchwright import outcome
from benchwright.commands import Subparsers
from benchwright.commands.bucket_views import add_bucket_view_arguments, bucket_store
from benchwright.commands.show import add_store_argument, open_existing_store, resolve_run
from benchwright.errors import SpecError
from benchwright.judge import compare_runs, judge_run
from benchwright.judge.compare import UNDECIDED, compare_cell, higher_is_better, values_needed
from benchwright.judge.compare import cell_values as values_of
from benchwright.judge.nightly import verdict_over
from benchwright.judge.stats import mean
from benchwright.providers.local.sqlite_store import default_store_path
from benchwright.report.cell_names import short_ids
from benchwright.report.fit import Fitted, print_whole
from benchwright.report.text import VERDICT_STYLE, verdict_text
from benchwright.report.units import fmt_latency, fmt_rate
from benchwright.runs import CellResult, RunRecord, Verdict

REGRESSION_EXIT = outcome.EXIT_FAIL_ON
FAIL_ON = ("regression", "invalid", "slower", "unstable")
BETWEEN_LIMIT = 400  # runs of B's spec read to find those between A and B (a year of nights and more)


def register(sub: Subparsers) -> None:
    p = sub.add_parser(
        "compare", help="statistical verdict of run B against run A", description=__doc__.splitlines()[0]
    )
    p.add_argument("baseline", metavar="A", help="baseline run id / prefix, spec name (NAME~N) / JSON file")
    p.add_argument("candidate", metavar="B", help="the run to judge, id / prefix, spec name / JSON file")
    p.add_argument(
        "--metric", default="throughput", help="throughput (default), p99_us, p95_us, p99_us:READ ..."
    )
    p.add_argument(
        "--min-effect", type=float, default=0.05, help="smallest change that counts (default 0.05)"
    )
    p.add_argument("--confidence", type=float, default=0.95, help="confidence level (default 0.95)")
    p.add_argument(
        "--fail-on",
        choices=FAIL_ON,
        help="exit 3 on a regression (slower), on an invalid B, or (unstable) on slower or unstable",
    )
    add_store_argument(p)
    add_bucket_view_arguments(p)
    p.set_defaults(handler=handle)


def _group(record: RunRecord) -> dict[str, list[CellResult]]:
    out: dict[str, list[CellResult]] = {}
    for cell in record.cells:
        out.setdefault(cell.cell_id, []).append(cell)
    return out


def _fmt(metric: str, value: float | None) -> str:
    return fmt_rate(value) if higher_is_better(metric) else fmt_latency(value)


def operations_table(
    candidate: RunRecord, baseline: RunRecord, metric: str, min_effect: float, confidence: float
) -> Table:
    """A, B, change and interval per cell and operation (plus ALL for throughput)."""
    name, _, only = metric.partition(":")
    table = Table(title=f"{name}: A {baseline.run_id}, B {candidate.run_id}", title_justify="left")
    for heading, justify in (("cell", "left"), ("operation", "left"), ("A", "right"), ("B", "right"),
                             ("change", "right"), (f"{confidence:.0%} interval", "right"), ("verdict", "left")):  # fmt: skip
        table.add_column(heading, justify=justify, overflow="fold")  # type: ignore[arg-type]
    base = _group(baseline)
    names = short_ids([*base, *_group(candidate)])  # shown short; cells are still matched by full id
    for cell_id, cells in _group(candidate).items():
        doc = cells[0].measured
        if doc is None:
            continue
        ops = [only] if only else [*doc.operations]
        if name == "throughput" and not only and len(ops) > 1:
            ops.append("ALL")
        for i, op in enumerate(ops):
            m = name if op == "ALL" else f"{name}:{op}"
            if op != "ALL" and len(doc.operations) == 1 and not only:
                m = name  # one operation: the phase's figure
            c = compare_cell(cells, base.get(cell_id, []), m, min_effect, confidence)
            a, b = values_of(base.get(cell_id, []), m), values_of(cells, m)
            change = f"{(mean(b) / mean(a) - 1) * 100:+.1f} %" if a and b and mean(a) else "-"
            interval = "-"
            if c.low is not None and c.high is not None:
                interval = f"{(c.low - 1) * 100:+.1f} .. {(c.high - 1) * 100:+.1f} %"
            kind = c.kind.replace("_", " ")
            table.add_row(
                names[cell_id] if i == 0 else "",
                op,
                _fmt(name, mean(a)) if a else "-",
                _fmt(name, mean(b)) if b else "-",
                change,
                interval,
                f"[{VERDICT_STYLE.get(c.kind, '')}]{kind}[/]",
            )
    return table


def invalid_cells(record: RunRecord) -> list[str]:
    """The invalid cells' labels (benchwright.outcome: a flag on the cell or on any of its phases)."""
    return [cell.label for cell in outcome.invalid_cells(record)]


def exit_code(fail_on: str | None, verdict_kind: str | None, invalid: list[str]) -> int:
    """CI's answer: 3 when the condition named by ``--fail-on`` holds, else 0."""
    if fail_on == "invalid" and invalid:
        return REGRESSION_EXIT
    if fail_on in ("regression", "slower") and verdict_kind == "slower":
        return REGRESSION_EXIT
    if fail_on == "unstable" and verdict_kind in ("slower", "unstable"):
        return REGRESSION_EXIT
    return 0


def handle(args: argparse.Namespace) -> int:
    if not 0 < args.min_effect < 1:
        raise SpecError("--min-effect", f"must be between 0 and 1, got {args.min_effect}")
    if not 0.5 <= args.confidence < 1:
        raise SpecError("--confidence", f"must be in [0.5, 1), got {args.confidence}")
    store = bucket_store(args, [args.baseline, args.candidate])
    baseline = judge_run(resolve_run(args.baseline, store))
    candidate = judge_run(resolve_run(args.candidate, store))
    try:
        verdict = _verdict(args, candidate, baseline, store)
        table = operations_table(candidate, baseline, args.metric, args.min_effect, args.confidence)
    except ValueError as exc:
        raise SpecError("--metric", str(exc)) from None
    console = Console()
    print_whole(console, Fitted(table))
    console.print(verdict_text(verdict))
    invalid = invalid_cells(candidate)
    if invalid:
        console.print(f"[red]B has invalid results:[/] {', '.join(invalid)}")
    code = exit_code(args.fail_on, verdict.kind, invalid)
    if not code and args.fail_on in ("regression", "slower", "unstable") and verdict.kind in UNDECIDED:
        console.print(
            f"[red]exit {outcome.EXIT_NO_VERDICT}:[/] --fail-on {args.fail_on} cannot judge B: no verdict "
            f"is possible; {_need(candidate, baseline)}",
            highlight=False,
            soft_wrap=True,
        )
        return outcome.EXIT_NO_VERDICT
    return code


def between(candidate: RunRecord, baseline: RunRecord, store_path: Path | None) -> list[RunRecord]:
    """The runs of B's spec in the store after A and before B, oldest first, judged as A and B are:
    the nights from A to B are the series B is judged across (none when A is not an earlier run of
    B's spec, or there is no store: two files)."""
    if baseline.spec_name != candidate.spec_name or baseline.started_at > candidate.started_at:
        return []
    if not (store_path or default_store_path()).exists():
        return []
    with open_existing_store(store_path) as store:
        history = store.history(candidate.spec_name, limit=BETWEEN_LIMIT)
    found = [
        judge_run(r)
        for r in history
        if r.run_id not in (baseline.run_id, candidate.run_id)
        and baseline.started_at <= r.started_at <= candidate.started_at
        and r.status in ("succeeded", "invalid")
    ]
    return sorted(found, key=lambda r: r.started_at)


def _verdict(
    args: argparse.Namespace, candidate: RunRecord, baseline: RunRecord, store: Path | None
) -> Verdict:
    """Throughput: B across the nights from A to B (judge.nightly, as FinishRun and --fail-on judge a
    run); another metric: B against A (judge.compare: only throughput is a nightly series)."""
    if args.metric != "throughput":
        return compare_runs(candidate, baseline, args.metric, args.min_effect, args.confidence)
    return verdict_over(candidate, [baseline, *between(candidate, baseline, store)], args.min_effect)


def _need(candidate: RunRecord, baseline: RunRecord) -> str:
    """What an interval needs from two runs: per cell, enough repeats on one side or the other."""
    base = _group(baseline)
    for cell_id, cells in _group(candidate).items():
        have = len([c for c in base.get(cell_id, []) if c.measured])
        if not have:
            return f"A has no result of cell {cell_id!r}"
        if have < values_needed(len(cells)) and len(cells) < values_needed(have):
            return (
                f"cell {cell_id!r} has {have} result(s) in A and {len(cells)} in B; an interval needs 2 "
                "repeats on each side, or 3 on one side against 1 (add repeats)"
            )
    return "see the verdict above"
