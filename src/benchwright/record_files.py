"""Run records outside the SQLite store: a rehearsal's ``records.json`` (every record the workflow
wrote to the results bucket) or a directory holding it, read by the same views as the store.

A suite run on AWS leaves one record per cell (``suite_run_id`` set) next to the suite's own record,
which already holds every cell: the views read the suite's record and leave the cell records out,
as the bucket's history index does.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from benchwright.errors import BenchwrightError
from benchwright.providers.local.sqlite_store import SQLiteResultStore
from benchwright.runs import RunRecord

RECORDS_FILE = "records.json"  # what `benchwright rehearse` writes in its output directory


def records_file(path: Path) -> Path:
    """``path`` itself, or the ``records.json`` of a rehearsal's output directory."""
    return path / RECORDS_FILE if path.is_dir() else path


def split_ref(ref: str) -> tuple[Path | None, str | None]:
    """``FILE``, ``FILE#RUN_ID`` or a directory with a records.json -> (path, run id); (None, None)
    when ``ref`` names no file (a run id, a prefix or a spec or suite name)."""
    head, sep, run_id = ref.partition("#")
    path = Path(head)
    if head.endswith(".json") or path.is_file() or (path.is_dir() and (path / RECORDS_FILE).is_file()):
        return path, (run_id or None) if sep else None
    return None, None


def top_level(records: Iterable[RunRecord]) -> list[RunRecord]:
    """The records a view shows: a suite's cell records are already in the suite's record."""
    return [r for r in records if r.suite_run_id is None]


def pick_run(path: Path, records: list[RunRecord], run_id: str | None) -> RunRecord:
    """One run of a file's records: by id (or unique prefix), or the only top-level one."""
    if run_id is None:
        runs = top_level(records) or records
        if len(runs) == 1:
            return runs[0]
        ids = ", ".join(r.run_id for r in runs[:10])
        raise BenchwrightError(
            f"{path}: holds {len(runs)} runs ({ids}); name one as {path}#RUN_ID, "
            f"or read them all with --store {path}"
        )
    prefixed = [r for r in records if r.run_id.startswith(run_id)]
    matches = [r for r in records if r.run_id == run_id] or top_level(prefixed) or prefixed
    if len(matches) == 1:
        return matches[0]
    if not matches:
        known = ", ".join(r.run_id for r in top_level(records)[:10])
        raise BenchwrightError(f"{path}: no run {run_id!r} (runs here: {known})")
    raise BenchwrightError(
        f"{path}: run id prefix {run_id!r} matches several runs: {', '.join(r.run_id for r in matches[:3])}"
    )


def store_of_records(records: Iterable[RunRecord]) -> SQLiteResultStore:
    """An in-memory store holding ``records`` (cell records of suites left out): every store view
    (history, suite names, prefixes) works on a file without writing anywhere."""
    store = SQLiteResultStore(":memory:")
    for record in top_level(records):
        store.save_run(record)
    return store
