"""`benchwright show RUN`: one stored run's summary (tables, validity, verdict, cost, report path).

Also home of the small helpers the store commands share: the ``--store`` option and resolving a
run given as an id, an id prefix or a JSON file (a RunRecord or a single result document).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from benchwright.commands import Subparsers
from benchwright.errors import BenchwrightError, SpecError
from benchwright.outcome import judge_status
from benchwright.providers.local.sqlite_store import (
    STORE_ENV,
    SQLiteResultStore,
    StoreError,
    default_store_path,
)
from benchwright.report.text import print_summary
from benchwright.results import ResultDocument
from benchwright.runs import CellResult, RunRecord


def add_store_argument(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--store",
        type=Path,
        default=None,
        metavar="PATH",
        help=f"result store (default ${STORE_ENV} or {default_store_path()})",
    )


def open_existing_store(path: Path | None) -> SQLiteResultStore:
    """Open the store, refusing to create an empty one by accident (a typo'd path). A rehearsal's
    ``records.json`` (or its output directory) is a store too: its records, imported into memory."""
    resolved = path or default_store_path()
    if not resolved.exists():
        raise StoreError(f"{resolved}: no result store here (run a benchmark first, or pass --store PATH)")
    if resolved.is_dir() or resolved.suffix == ".json":
        from benchwright.record_files import records_file, store_of_records

        return store_of_records(records_from_file(records_file(resolved)))
    return SQLiteResultStore(resolved)


def _first_problem(exc: Exception) -> str:
    """One line for a schema mismatch: the first field and what is wrong with it."""
    from pydantic import ValidationError

    if isinstance(exc, ValidationError) and exc.errors():
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ())) or "(top level)"
        more = f" and {exc.error_count() - 1} more" if exc.error_count() > 1 else ""
        return f"{where}: {first.get('msg')}{more}"
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


def records_from_file(path: Path) -> list[RunRecord]:
    """Every run in a JSON file: a RunRecord, a list of them (a rehearsal's ``records.json``, where a
    suite's cell records sit next to the suite's own) or one result document wrapped as a one-cell run."""
    from benchwright.yamlload import read_text

    try:
        raw = json.loads(read_text(path, "run or result document", 256 << 20))
    except (SpecError, ValueError, RecursionError) as exc:
        reason = "nested too deeply" if isinstance(exc, RecursionError) else _first_problem(exc)
        raise BenchwrightError(f"{path}: cannot read a run or result document ({reason})") from None
    if isinstance(raw, list):
        records = []
        for i, item in enumerate(raw):
            try:
                records.append(RunRecord.model_validate(item))
            except ValueError as exc:
                raise BenchwrightError(
                    f"{path}: item {i} is not a run record of this version ({_first_problem(exc)})"
                ) from None
        if not records:
            raise BenchwrightError(f"{path}: an empty list of run records")
        return records
    if isinstance(raw, dict) and "spec_name" in raw:
        try:
            return [RunRecord.model_validate(raw)]
        except ValueError as exc:
            raise BenchwrightError(
                f"{path}: not a run record of this version ({_first_problem(exc)})"
            ) from None
    if not isinstance(raw, dict):
        raise BenchwrightError(f"{path}: neither a run record nor a result document (not a JSON object)")
    try:
        doc = ResultDocument.parse(raw)
    except ValueError as exc:
        raise BenchwrightError(
            f"{path}: neither a run record nor a result document ({_first_problem(exc)})"
        ) from None
    cell = CellResult(cell_id=doc.cell or doc.workload, phases={doc.phase: doc})
    record = RunRecord(run_id=doc.run_id or path.stem, spec_name=doc.workload, started_at=doc.started_at,
                       ended_at=doc.ended_at, status="succeeded", cells=[cell])  # fmt: skip
    record.status = judge_status(record.status, record)  # type: ignore[assignment]  # an invalid document
    return [record]


def run_from_file(path: Path, run_id: str | None = None) -> RunRecord:
    """One run of a JSON file (``run_id`` picks it from a list; a list of one run needs none)."""
    from benchwright.record_files import pick_run

    return pick_run(path, records_from_file(path), run_id)


def runs_from_ref(ref: str) -> list[RunRecord] | None:
    """The runs a file reference names (``FILE``, ``FILE#RUN_ID``, a rehearsal's output directory),
    suites' cell records left out; None when ``ref`` is no file."""
    from benchwright.record_files import pick_run, records_file, split_ref, top_level

    path, run_id = split_ref(ref)
    if path is None:
        return None
    path = records_file(path)
    records = records_from_file(path)
    return [pick_run(path, records, run_id)] if run_id else top_level(records)


def resolve_run(ref: str, store_path: Path | None) -> RunRecord:
    """A run by file path (``FILE#RUN_ID`` for one of a list), full id, spec name (its newest run;
    ``NAME~N``: the Nth before that) or unique id prefix, in that order; names the store when it is
    not there."""
    from benchwright.record_files import records_file, split_ref

    path, run_id = split_ref(ref)
    if path is not None:
        return run_from_file(records_file(path), run_id)
    with open_existing_store(store_path) as store:
        record = store.get_run(ref) or by_name(store, ref) or store.find_run(ref)
        if record is None:
            raise StoreError(
                f"{store.path}: no run {ref!r}, nor a spec of that name (see `benchwright history NAME`)"
            )
        return record


def by_name(store: SQLiteResultStore, ref: str) -> RunRecord | None:
    """``NAME``: the spec's newest run; ``NAME~N``: the Nth run before it (git's ``~``). None when no
    run has that name; a name with too few runs is an error saying how many there are."""
    name, tilde, back = ref.rpartition("~") if "~" in ref else (ref, "", "0")
    if tilde and not back.isdigit():
        return None
    runs = store.history(name, int(back) + 1)
    if not runs:
        return None
    if len(runs) <= int(back):
        raise StoreError(f"{ref}: spec {name!r} has {len(runs)} run(s) in {store.path}")
    return runs[int(back)]


def register(sub: Subparsers) -> None:
    from benchwright.commands.bucket_views import add_bucket_view_arguments

    p = sub.add_parser("show", help="one stored run's summary", description=__doc__.splitlines()[0])
    p.add_argument(
        "run",
        metavar="RUN",
        help="run id (or unique prefix), spec name (newest run; NAME~N: Nth before), or a JSON file",
    )
    p.add_argument("--json", action="store_true", help="print the whole run record as JSON")
    add_store_argument(p)
    add_bucket_view_arguments(p)
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    from benchwright.commands.bucket_views import bucket_store

    record = resolve_run(args.run, bucket_store(args, [args.run]))
    if args.json:
        print(record.model_dump_json(indent=1))
    else:
        print_summary(record, legend=True)  # the short cell ids' full ids too
        from rich.console import Console

        from benchwright.report.experiments import text_tables
        from benchwright.report.fit import Fitted, print_whole

        console = Console()
        for table in text_tables(record):
            print_whole(console, Fitted(table))
    return 0
