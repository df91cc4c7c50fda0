"""Copy cloud runs' records from the results bucket into the local SQLite store, so `table`, `show`,
`compare`, `history` and `report` read them as they read local runs (the store is the cache).

A suite's cell record (``suite_run_id`` set) is never stored on its own: its suite's record holds
every cell, and storing both would list the run twice in a spec's history.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from benchwright.errors import BenchwrightError
from benchwright.providers.aws.bucket_records import BucketRecords
from benchwright.providers.local.sqlite_store import SQLiteResultStore
from benchwright.runs import RunRecord

FINISHED = ("succeeded", "failed", "aborted")


@dataclass
class Pulled:
    """What a pull did: run ids stored, run ids already finished in the store (not downloaded again)."""

    stored: list[str] = field(default_factory=list)
    cached: list[str] = field(default_factory=list)


def _cached(store: SQLiteResultStore, run_id: str) -> bool:
    record = store.get_run(run_id)
    return record is not None and record.status in FINISHED


def pull_runs(
    source: BucketRecords,
    store: SQLiteResultStore,
    run_ids: Sequence[str] = (),
    names: Sequence[str] = (),
    limit: int = 20,
    refresh: bool = True,
    say: Callable[[str], None] = lambda line: None,
) -> Pulled:
    """Store the named runs and the newest ``limit`` runs of each spec or suite name. Without
    ``refresh`` a run already stored with a final status is not downloaded again."""
    wanted: list[str] = list(run_ids)
    for name in names:
        found = source.run_ids(name, limit)
        if not found:
            raise BenchwrightError(
                f"s3://{source.bucket}: no runs of {name!r} (nothing under history/{name}/ or suites/{name}/)"
            )
        wanted += found
    out = Pulled()
    for run_id in dict.fromkeys(wanted):
        if not refresh and _cached(store, run_id):
            out.cached.append(run_id)
            continue
        record = source.record(run_id)
        if record is None:
            raise BenchwrightError(f"s3://{source.bucket}/runs/{run_id}/record.json: no such record")
        record = _suite_of(source, record, say)
        store.save_run(record)
        out.stored.append(record.run_id)
        say(f"{record.run_id}: {record.spec_name}, {record.status}, {len(record.cells)} cell(s)")
    return out


def _suite_of(source: BucketRecords, record: RunRecord, say: Callable[[str], None]) -> RunRecord:
    """A suite's cell record stands for its suite's record, which holds every cell."""
    if record.suite_run_id is None:
        return record
    suite = source.record(record.suite_run_id)
    if suite is None:
        raise BenchwrightError(
            f"s3://{source.bucket}/runs/{record.run_id}/record.json is a cell of suite run "
            f"{record.suite_run_id}, whose record is not in the bucket yet (the suite is still running?)"
        )
    say(f"{record.run_id} is a cell of suite run {suite.run_id}: storing the suite's record")
    return suite
