"""`benchwright pull RUN_ID... | --spec NAME`: copy cloud runs' records into the local result store.

The records come from the results bucket (``--bucket s3://...``, ``$BENCHWRIGHT_BUCKET`` or the
deployed stage's ``ResultsBucket`` output) read with your AWS credentials, or from a rehearsal's
``records.json`` (``--records``). Afterwards `table`, `show`, `compare`, `history` and `report` read
them from the store like local runs: ``benchwright pull --spec exp1-yugabyte-vs-rds`` then
``benchwright table exp1-yugabyte-vs-rds``. ``--spec`` takes a spec's or a suite's name.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from benchwright.commands import Subparsers
from benchwright.commands.bucket_views import BUCKET_ENV, bucket_of
from benchwright.commands.show import add_store_argument
from benchwright.errors import SpecError


def add_bucket_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--bucket",
        metavar="s3://BUCKET",
        help=f"the results bucket (default ${BUCKET_ENV}, else the stage's ResultsBucket output)",
    )
    p.add_argument(
        "--stage", help="the deployed stage whose results bucket to read (stack benchwright-STAGE)"
    )


def register(sub: Subparsers) -> None:
    p = sub.add_parser(
        "pull", help="copy cloud runs' records into the local store", description=__doc__.splitlines()[0]
    )
    p.add_argument("runs", nargs="*", metavar="RUN_ID", help="run ids (a suite cell's id pulls its suite)")
    p.add_argument("--spec", action="append", default=[], metavar="NAME", help="a spec's or suite's runs")
    p.add_argument("--limit", type=int, default=20, help="newest N runs per --spec name (default 20)")
    p.add_argument(
        "--records", type=Path, metavar="FILE", help="a rehearsal's records.json (or its directory)"
    )
    add_bucket_arguments(p)
    add_store_argument(p)
    p.set_defaults(handler=handle)


def _say(line: str) -> None:
    print(f"benchwright: {line}", file=sys.stderr)


def handle(args: argparse.Namespace) -> int:
    from benchwright.providers.local.sqlite_store import SQLiteResultStore

    if args.limit < 1:
        raise SpecError("--limit", "must be at least 1 (the newest N runs)")
    if args.records is not None:
        if args.runs or args.spec or args.bucket or args.stage:
            raise SpecError("--records", "reads the runs of one file; leave out run ids, --spec and --bucket")
        from benchwright.commands.show import records_from_file
        from benchwright.record_files import records_file, top_level

        runs = top_level(records_from_file(records_file(args.records)))
        with SQLiteResultStore(args.store) as store:
            for record in runs:
                store.save_run(record)
            print(f"{len(runs)} run(s) stored in {store.path}: {', '.join(r.run_id for r in runs)}")
        return 0
    if not args.runs and not args.spec:
        raise SpecError("RUN_ID", "name run ids, or --spec NAME for a spec's or suite's runs")
    from benchwright.cloud_pull import pull_runs
    from benchwright.providers.aws.bucket_records import BucketRecords

    source = BucketRecords(bucket_of(args))
    with SQLiteResultStore(args.store) as store:
        pulled = pull_runs(source, store, args.runs, args.spec, args.limit, say=_say)
        print(f"{len(pulled.stored)} run(s) stored in {store.path}: {', '.join(pulled.stored)}")
    return 0
