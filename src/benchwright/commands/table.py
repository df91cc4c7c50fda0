"""`benchwright table RUN...`: a stored result as the table its seed experiment publishes.

RUN is a run id (or unique prefix), a run / result JSON file (a rehearsal's records.json or its
output directory: every run in it), a spec's name (its newest run; ``NAME~N``: the Nth run before
that), or a suite's name (the newest run of each of its benchmarks). Rows and columns are matrix parameters by short name (``threads``,
``fieldlength``, ``datatype``) or ``operation``, ``phase``, ``spec``, ``cell``, ``repeat``; without
``--metric`` each workload gets the figures its seed reports (YCSB's block, TPC-C tps and p90, the
redis-benchmark latency buckets, pgbench tps/latency/stddev, sysbench tps and queries by kind).
"""

from __future__ import annotations

import argparse

from benchwright.commands import Subparsers
from benchwright.commands.bucket_views import add_bucket_view_arguments, bucket_store
from benchwright.commands.show import add_store_argument, open_existing_store, resolve_run, runs_from_ref
from benchwright.errors import BenchwrightError
from benchwright.report.table import build_table, render
from benchwright.report.table_metrics import METRICS, groups
from benchwright.runs import RunRecord


def register(sub: Subparsers) -> None:
    p = sub.add_parser(
        "table", help="a stored result as its seed experiment's table", description=__doc__.splitlines()[0]
    )
    p.add_argument(
        "runs",
        nargs="+",
        metavar="RUN",
        help="run id / prefix / JSON file, spec name (NAME~N), or a suite name",
    )
    p.add_argument("--rows", metavar="PARAM[,PARAM]", help="row dimensions (default: the matrix parameters)")
    p.add_argument("--cols", metavar="PARAM", help="a parameter whose values become columns")
    p.add_argument(
        "--metric",
        nargs="+",
        metavar="M",
        help=f"figures to show: {', '.join(METRICS)}; groups: {', '.join(groups())}",
    )
    p.add_argument("--phase", help="load | warmup | run | all (default: the measured phase)")
    p.add_argument("--format", choices=("md", "csv", "json", "html"), default="md")
    add_store_argument(p)
    add_bucket_view_arguments(p)
    p.set_defaults(handler=handle)


def resolve_runs(refs: list[str], store_path: object) -> list[RunRecord]:
    """Each ref as a run (an id, a file, a spec name); a ref that is none of them but a suite name
    gives that suite's newest runs; a rehearsal's records.json gives all its runs."""
    runs: list[RunRecord] = []
    for ref in refs:
        in_file = runs_from_ref(ref)  # a rehearsal's records.json gives all its runs
        if in_file is not None:
            runs += in_file
            continue
        try:
            runs.append(resolve_run(ref, store_path))  # type: ignore[arg-type]
            continue
        except BenchwrightError as not_a_run:
            with open_existing_store(store_path) as store:  # type: ignore[arg-type]
                suite = store.suite_runs(ref) or store.history(ref, limit=1)  # a suite, else a spec
            if not suite:
                raise not_a_run from None
            runs += suite
    return runs


def handle(args: argparse.Namespace) -> int:
    runs = resolve_runs(args.runs, bucket_store(args, args.runs))
    rows = [r.strip() for r in args.rows.split(",") if r.strip()] if args.rows else None
    table = build_table(runs, rows=rows, cols=args.cols, metrics=args.metric, phase=args.phase)
    print(render(table, args.format), end="")
    return 0
