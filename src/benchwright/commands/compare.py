"""`benchwright compare A B`: is B faster, slower or unchanged against A? A statistical verdict.

A and B are run ids (or unique prefixes) in the store, or JSON files (a run record or one result
document). Cells are matched by id; the verdict needs significance and a minimum effect size (see
docs/reading-results.md). ``--fail-on slower`` exits 3 on a regression, for CI.
"""

from __future__ import annotations

import argparse

from rich.console import Console

from benchwright.commands.show import add_store_argument, resolve_run
from benchwright.judge import compare_runs, judge_run
from benchwright.report.text import verdict_text

REGRESSION_EXIT = 3


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "compare", help="statistical verdict of run B against run A", description=__doc__.splitlines()[0]
    )
    p.add_argument("baseline", metavar="A", help="baseline run id / prefix / JSON file")
    p.add_argument("candidate", metavar="B", help="the run to judge, id / prefix / JSON file")
    p.add_argument(
        "--metric", default="throughput", help="throughput (default), p99_us, p95_us, p99_us:READ ..."
    )
    p.add_argument(
        "--min-effect", type=float, default=0.05, help="smallest change that counts (default 0.05)"
    )
    p.add_argument("--confidence", type=float, default=0.95, help="confidence level (default 0.95)")
    p.add_argument("--fail-on", choices=("slower", "unstable"), help="exit 3 on this verdict (or worse)")
    add_store_argument(p)
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    if not 0 < args.min_effect < 1:
        from benchwright.errors import SpecError

        raise SpecError("--min-effect", f"must be between 0 and 1, got {args.min_effect}")
    if not 0.5 <= args.confidence < 1:
        from benchwright.errors import SpecError

        raise SpecError("--confidence", f"must be in [0.5, 1), got {args.confidence}")
    baseline = judge_run(resolve_run(args.baseline, args.store))
    candidate = judge_run(resolve_run(args.candidate, args.store))
    try:
        verdict = compare_runs(candidate, baseline, args.metric, args.min_effect, args.confidence)
    except ValueError as exc:
        from benchwright.errors import SpecError

        raise SpecError("--metric", str(exc)) from None
    console = Console()
    console.print(f"[bold]{candidate.run_id}[/] against [bold]{baseline.run_id}[/]")
    console.print(verdict_text(verdict))
    if args.fail_on == "slower" and verdict.kind == "slower":
        return REGRESSION_EXIT
    if args.fail_on == "unstable" and verdict.kind in ("slower", "unstable"):
        return REGRESSION_EXIT
    return 0
