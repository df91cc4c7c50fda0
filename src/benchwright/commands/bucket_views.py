"""``--bucket s3://...`` / ``--stage NAME`` on the views (`table`, `show`, `compare`, `history`,
`report`): the runs they name are read from the results bucket through a local cache store
(bucket_cache.bucket_cache_store), which then stands for ``--store``. With ``--bucket``, ``--store``
names the cache (default ``$BENCHWRIGHT_CACHE/s3-BUCKET.sqlite`` or under ~/.cache/benchwright).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from benchwright.errors import SpecError

BUCKET_ENV = "BENCHWRIGHT_BUCKET"  # pull's default bucket; the views read a bucket only when asked


def add_bucket_view_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--bucket",
        metavar="s3://BUCKET",
        help="read the runs from this results bucket (cached locally; --store names the cache)",
    )
    p.add_argument("--stage", help="read the runs from this deployed stage's results bucket")


def bucket_of(args: argparse.Namespace) -> str:
    """The bucket from ``--bucket``, the environment, or ``--stage``'s stack output."""
    from benchwright.providers.aws.bucket_records import bucket_name

    uri = args.bucket or os.environ.get(BUCKET_ENV)
    if uri:
        return bucket_name(uri)
    if args.stage:
        from benchwright.commands.cloud import stack_output

        return stack_output(args.stage, "ResultsBucket", "--bucket s3://BUCKET")
    raise SpecError(
        "--bucket", f"which results bucket? pass --bucket s3://BUCKET, --stage NAME or ${BUCKET_ENV}"
    )


def _say(line: str) -> None:
    print(f"benchwright: {line}", file=sys.stderr)


def bucket_store(args: argparse.Namespace, refs: Sequence[str], limit: int = 20) -> Path | None:
    """The store the view reads: ``--store`` as given without ``--bucket``/``--stage``; with one,
    the cache holding the runs ``refs`` name, downloaded now if not there yet."""
    if not (args.bucket or args.stage):
        return args.store  # type: ignore[no-any-return]
    from benchwright.bucket_cache import bucket_cache_store

    return bucket_cache_store(bucket_of(args), refs, cache=args.store, limit=limit, say=_say)
