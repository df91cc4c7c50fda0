"""`benchwright report RUN [--out PATH]`: write a stored run's self-contained HTML report.

The report includes the run's history trend (other runs of the same spec in the store).
``--demo`` writes a report of a synthetic run, to see what a report looks like without a database.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from benchwright.commands import Subparsers
from benchwright.commands.bucket_views import add_bucket_view_arguments, bucket_store
from benchwright.commands.paths import output_file
from benchwright.commands.show import add_store_argument, open_existing_store, resolve_run
from benchwright.errors import SpecError
from benchwright.judge import judge_run
from benchwright.report.html import write_report
from benchwright.runs import RunRecord


def register(sub: Subparsers) -> None:
    p = sub.add_parser("report", help="write a run's HTML report", description=__doc__.splitlines()[0])
    p.add_argument(
        "run",
        metavar="RUN",
        nargs="?",
        help="run id / prefix, spec name (NAME~N: Nth before its newest) / JSON file",
    )
    p.add_argument("--out", type=output_file, help="output file (default ./report-RUN.html)")
    p.add_argument("--history", type=int, default=20, help="earlier runs in the trend chart (default 20)")
    p.add_argument("--demo", action="store_true", help="report a synthetic concurrency sweep instead")
    add_store_argument(p)
    add_bucket_view_arguments(p)
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    history: list[RunRecord] = []
    if args.demo:
        from benchwright.report.sample import sweep_run

        record = judge_run(sweep_run(seconds=60))
    elif not args.run:
        raise SpecError("RUN", "name a run id or JSON file (or pass --demo)")
    else:
        store_path = bucket_store(args, [args.run])
        record = resolve_run(args.run, store_path)
        if not Path(args.run).is_file() and args.history > 0:
            store_path = bucket_store(args, [record.spec_name], args.history + 1)
            with open_existing_store(store_path) as store:
                history = store.history(record.spec_name, limit=args.history + 1)
    out = args.out or Path(f"report-{record.run_id}.html")
    path = write_report(record, out, history)
    print(path)
    return 0
