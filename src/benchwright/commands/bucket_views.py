"""``--bucket s3://...`` / ``--stage NAME`` on the views (`table`, `show`, `compare`, `history`,
`report`): the runs they name are read from the results bucket through a local cache store
(bucket_cache.bucket_cache_store), which then stands for ``--store``. With ``--bucket``, ``--store``
names the cache (default ``$BENCHWRIGHT_CACHE/s3-BUCKET.sqlite`` or under ~/.cache/benchwright).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from benchwright.commands.pull import bucket_of


def add_bucket_view_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--bucket",
        metavar="s3://BUCKET",
        help="read the runs from this results bucket (cached locally; --store names the cache)",
    )
    p.add_argument("--stage", help="read the runs from this deployed stage's results bucket")


def _say(line: str) -> None:
    print(f"benchwright: {line}", file=sys.stderr)


def bucket_store(args: argparse.Namespace, refs: Sequence[str], limit: int = 20) -> Path | None:
    """The store the view reads: ``--store`` as given without ``--bucket``/``--stage``; with one,
    the cache holding the runs ``refs`` name, downloaded now if not there yet."""
    if not (args.bucket or args.stage):
        return args.store  # type: ignore[no-any-return]
    from benchwright.bucket_cache import bucket_cache_store

    return bucket_cache_store(bucket_of(args), refs, cache=args.store, limit=limit, say=_say)
