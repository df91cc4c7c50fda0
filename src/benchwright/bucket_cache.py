"""The results bucket as a store the views read: `table`, `show`, `compare`, `history`, `report`
(and `site`) with ``--bucket s3://...`` download the runs they name into a local cache store once,
then read that store as they read local runs.

One reader of the bucket: `benchwright pull`'s (cloud_pull.pull_runs over BucketRecords). A run
already cached with a final status is never downloaded again; a spec's or suite's index is listed
each time (a LIST, no record download), so a new nightly run is found.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path

from benchwright.cloud_pull import pull_runs
from benchwright.errors import BenchwrightError
from benchwright.providers.aws.bucket_records import BucketRecords
from benchwright.providers.local.sqlite_store import SQLiteResultStore
from benchwright.record_files import split_ref

CACHE_ENV = "BENCHWRIGHT_CACHE"


def default_cache(bucket: str) -> Path:
    """``$BENCHWRIGHT_CACHE/s3-BUCKET.sqlite``, else under ``$XDG_CACHE_HOME`` (or ~/.cache)."""
    root = os.environ.get(CACHE_ENV)
    if root:
        return Path(root) / f"s3-{bucket}.sqlite"
    xdg = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(xdg) / "benchwright" / f"s3-{bucket}.sqlite"


def _wanted(
    source: BucketRecords, store: SQLiteResultStore, ref: str, limit: int
) -> tuple[list[str], list[str]]:
    """(run ids, spec or suite names) a view's ref names in the bucket: ``NAME`` / ``NAME~N`` whose
    index has runs, else a run id or id prefix. A finished run already cached costs no request."""
    cached = store.get_run(ref)
    if cached is not None and cached.status in ("succeeded", "failed", "aborted"):
        return [], []
    name, tilde, back = ref.rpartition("~") if "~" in ref else (ref, "", "0")
    if name and (not tilde or back.isdigit()) and source.run_ids(name, 1):
        return [], [name]
    ids = source.ids_with_prefix(ref)
    if ref in ids:
        return [ref], []
    if not ids:
        raise BenchwrightError(
            f"s3://{source.bucket}: no run {ref!r}, nor a spec or suite of that name "
            f"(nothing under runs/{ref}, history/{ref}/ or suites/{ref}/)"
        )
    shortest = min(ids, key=len)
    if all(i.startswith(shortest) for i in ids):
        return [shortest], []  # a suite's run and its cells' (``<id>-c0``...): the suite's record
    return ids, []  # a prefix of several runs: the store names them, as it does locally


def bucket_cache_store(
    bucket: str,
    refs: Sequence[str] = (),
    cache: Path | None = None,
    limit: int = 20,
    client: object = None,
    say: Callable[[str], None] = lambda line: None,
) -> Path:
    """Download the runs ``refs`` name from results bucket ``bucket`` (a name, no ``s3://``) into a
    local cache store and return its path. ``refs`` are what the views take (run id, prefix, spec or
    suite name, ``NAME~N``; files are left to the caller); none means every spec's newest ``limit``
    runs (a site). Cached finished runs are not downloaded again."""
    source = BucketRecords(bucket, client)
    path = cache or default_cache(bucket)
    path.parent.mkdir(parents=True, exist_ok=True)
    with SQLiteResultStore(path) as store:
        run_ids: list[str] = []
        names: list[str] = [] if refs else source.spec_names()
        for ref in refs:
            if split_ref(ref)[0] is not None:
                continue  # a file: read by the view itself
            ids, found = _wanted(source, store, ref, limit)
            run_ids += ids
            names += found
        tildes = [int(r.rpartition("~")[2]) + 1 for r in refs if r.rpartition("~")[2].isdigit()]
        pull_runs(source, store, run_ids, names, max([limit, *tildes]), refresh=False, say=say)
    return path
