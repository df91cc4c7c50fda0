"""The local result store: one SQLite file holding every run, queryable for history and reports.

Each run is kept twice: the whole RunRecord as JSON (the source of truth, read back losslessly)
and broken out into tables (cells, per-operation phase summaries, interval series, metrics,
validity flags) so history and comparisons are plain SQL, not a scan of documents.
``save_run`` is idempotent by run id: re-saving replaces the run and all its rows in one
transaction. WAL mode lets a report read while a run writes.

Schema versions live in ``schema_version``; ``MIGRATIONS[n]`` takes a store from version n-1 to n.
Version 1 (the first release) kept only the run documents; version 2 adds the broken-out tables
and fills them from those documents, so an old store migrates without losing anything.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from benchwright.errors import BenchwrightError
from benchwright.providers.base import ResultStore
from benchwright.providers.local.store_columns import cell_columns, migrate_to_3, run_columns
from benchwright.runs import RunRecord

STORE_ENV = "BENCHWRIGHT_STORE"
DEFAULT_STORE = Path("benchwright-results") / "results.sqlite"
ALL_OPERATIONS = "ALL"


class StoreError(BenchwrightError):
    """The result store file is unusable (newer schema, not a Benchwright store, corrupt); names it."""


def default_store_path() -> Path:
    """``$BENCHWRIGHT_STORE`` or ./benchwright-results/results.sqlite."""
    return Path(os.environ.get(STORE_ENV) or DEFAULT_STORE)


SCHEMA_V1 = """
CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
    run_id TEXT PRIMARY KEY,
    spec_name TEXT NOT NULL,
    status TEXT NOT NULL,
    started_at TEXT NOT NULL,
    ended_at TEXT,
    document TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS runs_by_spec ON runs (spec_name, started_at);
"""

SCHEMA_V2 = """
ALTER TABLE runs ADD COLUMN verdict TEXT;
ALTER TABLE runs ADD COLUMN report TEXT;
ALTER TABLE runs ADD COLUMN error TEXT;
CREATE TABLE cells (
    run_id TEXT NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
    cell_id TEXT NOT NULL,
    repeat INTEGER NOT NULL,
    parameters TEXT NOT NULL,
    valid INTEGER NOT NULL,
    PRIMARY KEY (run_id, cell_id, repeat)
);
CREATE TABLE phase_summaries (
    run_id TEXT NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
    cell_id TEXT NOT NULL,
    repeat INTEGER NOT NULL,
    phase TEXT NOT NULL,
    operation TEXT NOT NULL,
    operations INTEGER NOT NULL,
    throughput REAL NOT NULL,
    average_us REAL,
    p50_us REAL,
    p95_us REAL,
    p99_us REAL,
    p999_us REAL,
    max_us REAL,
    errors INTEGER NOT NULL DEFAULT 0,
    runtime_ms REAL,
    PRIMARY KEY (run_id, cell_id, repeat, phase, operation)
);
CREATE TABLE intervals (
    run_id TEXT NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
    cell_id TEXT NOT NULL,
    repeat INTEGER NOT NULL,
    phase TEXT NOT NULL,
    t REAL NOT NULL,
    throughput REAL NOT NULL,
    errors INTEGER NOT NULL,
    p50_us REAL,
    p99_us REAL,
    max_us REAL
);
CREATE INDEX intervals_by_run ON intervals (run_id, cell_id, repeat, phase);
CREATE TABLE metrics (
    run_id TEXT NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
    cell_id TEXT NOT NULL,
    repeat INTEGER NOT NULL,
    phase TEXT NOT NULL,
    name TEXT NOT NULL,
    unit TEXT NOT NULL,
    source TEXT NOT NULL,
    t REAL NOT NULL,
    value REAL NOT NULL
);
CREATE INDEX metrics_by_run ON metrics (run_id, cell_id, repeat, name);
CREATE TABLE validity (
    run_id TEXT NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
    cell_id TEXT NOT NULL,
    repeat INTEGER NOT NULL,
    phase TEXT NOT NULL,
    code TEXT NOT NULL,
    severity TEXT NOT NULL,
    message TEXT NOT NULL
);
CREATE INDEX validity_by_run ON validity (run_id);
"""


def _migrate_to_2(conn: sqlite3.Connection) -> None:
    """Add the broken-out tables and fill them from the version-1 documents."""
    for statement in SCHEMA_V2.split(";"):
        if statement.strip():
            conn.execute(statement)
    for (document,) in conn.execute("SELECT document FROM runs").fetchall():
        record = RunRecord.model_validate_json(document)
        conn.execute(
            "UPDATE runs SET verdict = ?, report = ?, error = ? WHERE run_id = ?",
            (record.verdict.kind if record.verdict else None, record.report, record.error, record.run_id),
        )
        _insert_children(conn, record, version=2)  # version 3 adds its columns and fills them


MIGRATIONS: dict[int, Callable[[sqlite3.Connection], None]] = {
    1: lambda conn: None,  # created by _migrate itself (executescript would commit mid-transaction)
    2: _migrate_to_2,
    3: migrate_to_3,  # the site's columns (store_columns.py)
}
CURRENT_VERSION = max(MIGRATIONS)


def _insert_children(conn: sqlite3.Connection, record: RunRecord, version: int = 3) -> None:
    rid = record.run_id
    for cell in record.cells:
        key = (rid, cell.cell_id, cell.repeat)
        valid = not any(f.severity == "invalid" for f in cell.validity) and all(
            d.valid for d in cell.phases.values()
        )
        row = (*key, json.dumps(cell.parameters, sort_keys=True, default=str), int(valid))
        if version >= 3:
            conn.execute(
                "INSERT OR REPLACE INTO cells (run_id, cell_id, repeat, parameters, valid, cost, ops_per_dollar,"
                " fingerprint, context) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (*row, *cell_columns(cell)),
            )
        else:
            conn.execute("INSERT OR REPLACE INTO cells VALUES (?, ?, ?, ?, ?)", row)
        conn.executemany(
            "INSERT INTO validity VALUES (?, ?, ?, ?, ?, ?, ?)",
            [(*key, "", f.code, f.severity, f.message) for f in cell.validity],
        )
        for m in cell.metrics:
            conn.executemany(
                "INSERT INTO metrics VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [(*key, "", m.name, m.unit, m.source, p.t, p.value) for p in m.points],
            )
        for phase, doc in cell.phases.items():
            rows: list[tuple[object, ...]] = []
            for op, s in doc.operations.items():
                errors = doc.failed(op)  # READ and READ-FAILED both carry READ's failures
                rows.append(
                    (*key, phase, op, s.operations, s.throughput, s.average_us, s.p50_us, s.p95_us, s.p99_us,
                     s.p999_us, s.max_us, errors, doc.runtime_ms)
                )  # fmt: skip
            rows.append(
                (*key, phase, ALL_OPERATIONS, doc.operations_total, doc.throughput,
                 None, None, None, None, None, None, doc.failed(), doc.runtime_ms)
            )  # fmt: skip
            conn.executemany(
                "INSERT OR REPLACE INTO phase_summaries VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", rows
            )
            conn.executemany(
                "INSERT INTO intervals VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (*key, phase, s.t, s.throughput, s.errors, s.p50_us, s.p99_us, s.max_us)
                    for s in doc.intervals
                ],
            )
            for m in doc.metrics:
                conn.executemany(
                    "INSERT INTO metrics VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    [(*key, phase, m.name, m.unit, m.source, p.t, p.value) for p in m.points],
                )
            conn.executemany(
                "INSERT INTO validity VALUES (?, ?, ?, ?, ?, ?, ?)",
                [(*key, phase, f.code, f.severity, f.message) for f in doc.validity],
            )


@dataclass(frozen=True)
class HistoryRow:
    """One run in a history listing: enough for the table, without parsing the run's document."""

    run_id: str
    started_at: datetime
    status: str
    verdict: str | None
    cells: dict[str, tuple[float, float | None, bool]]  # cell id -> (ops/s, worst p99 us, valid) of repeat 0


class SQLiteResultStore(ResultStore):
    """ResultStore over one SQLite file (created, or migrated to the current schema, on open)."""

    def __init__(self, path: str | Path | None = None) -> None:
        self.path = Path(path) if path is not None else default_store_path()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:  # a regular file where a directory belongs, no permission ...
            why = (
                "a part of the path is a file, not a directory"
                if isinstance(exc, (FileExistsError, NotADirectoryError))
                else exc.strerror
            )
            raise StoreError(f"{self.path}: cannot make its directory ({why})") from None
        try:
            self._conn = sqlite3.connect(self.path, timeout=30, isolation_level=None, check_same_thread=False)
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("PRAGMA foreign_keys=ON")
            self._conn.execute("PRAGMA synchronous=NORMAL")
            self._migrate()
            # a damaged page found now, not after the benchmark whose result it would lose
            check = self._conn.execute("PRAGMA quick_check(1)").fetchone()
        except sqlite3.DatabaseError as exc:
            raise StoreError(
                f"{self.path}: not a usable result store ({exc}); {self.repair_hint()}"
            ) from None
        if check is None or check[0] != "ok":
            raise StoreError(f"{self.path}: the store is damaged ({check}); {self.repair_hint()}")

    def repair_hint(self) -> str:
        return (
            f"move it away and start a new one, or recover what it holds: "
            f"sqlite3 {self.path} .recover | sqlite3 {self.path.with_suffix('.recovered.sqlite')}"
        )

    def _record(self, document: str) -> RunRecord:
        """A stored document, or a StoreError naming the store, the run and how to remove it."""
        try:
            return RunRecord.model_validate_json(document)
        except ValueError as exc:
            try:
                run_id = json.loads(document).get("run_id", "?")
            except (ValueError, AttributeError):
                run_id = "?"
            raise StoreError(
                f"{self.path}: run {run_id} is stored in a form this Benchwright cannot read "
                f"({str(exc).splitlines()[0]}); remove it with: sqlite3 {self.path} "
                f"\"DELETE FROM runs WHERE run_id = '{run_id}'\" (or upgrade Benchwright)"
            ) from None

    # ------------------------------------------------------------ lifecycle
    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> SQLiteResultStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        self._conn.execute("BEGIN IMMEDIATE")
        try:
            yield self._conn
        except BaseException:
            if self._conn.in_transaction:  # SQLITE_FULL and some I/O errors have rolled back already:
                self._conn.execute("ROLLBACK")  # a second ROLLBACK would hide the real error
            raise
        self._conn.execute("COMMIT")

    def schema_version(self) -> int:
        exists = self._conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'"
        ).fetchone()
        if not exists:
            return 0
        row = self._conn.execute("SELECT MAX(version) FROM schema_version").fetchone()
        return int(row[0] or 0)

    def _migrate(self) -> None:
        with self._transaction() as conn:
            version = self.schema_version()
            if version == 0 and conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'runs'").fetchone():
                raise StoreError(
                    f"{self.path}: has a runs table but no schema_version; not a Benchwright store"
                )
            if version > CURRENT_VERSION:
                raise StoreError(
                    f"{self.path}: schema version {version} is newer than this Benchwright "
                    f"({CURRENT_VERSION}); upgrade Benchwright to read it"
                )
            for target in range(version + 1, CURRENT_VERSION + 1):
                if target == 1:
                    for statement in SCHEMA_V1.split(";"):
                        if statement.strip():
                            conn.execute(statement)
                else:
                    MIGRATIONS[target](conn)
                conn.execute("DELETE FROM schema_version")
                conn.execute("INSERT INTO schema_version VALUES (?)", (target,))

    # ------------------------------------------------------------ ResultStore
    def save_run(self, record: RunRecord) -> None:
        """Insert or replace the run and all its rows atomically (idempotent by run id)."""
        with self._transaction() as conn:
            conn.execute("DELETE FROM runs WHERE run_id = ?", (record.run_id,))
            for table in ("cells", "phase_summaries", "intervals", "metrics", "validity"):
                conn.execute(f"DELETE FROM {table} WHERE run_id = ?", (record.run_id,))
            conn.execute(
                "INSERT INTO runs (run_id, spec_name, status, started_at, ended_at, document, verdict,"
                " report, error, suite, cost_total, suite_run_id, noise) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    record.run_id,
                    record.spec_name,
                    record.status,
                    record.started_at.isoformat(),
                    record.ended_at.isoformat() if record.ended_at else None,
                    record.model_dump_json(),
                    record.verdict.kind if record.verdict else None,
                    record.report,
                    record.error,
                    *run_columns(record),
                ),
            )
            _insert_children(conn, record)

    def get_run(self, run_id: str) -> RunRecord | None:
        row = self._conn.execute("SELECT document FROM runs WHERE run_id = ?", (run_id,)).fetchone()
        return self._record(row[0]) if row else None

    def find_run(self, prefix: str) -> RunRecord | None:
        """A run by full id or unique id prefix (what a user types); ambiguity is an error."""
        exact = self.get_run(prefix)
        if exact:
            return exact
        rows = self._conn.execute(
            "SELECT run_id FROM runs WHERE run_id LIKE ? ESCAPE '\\' LIMIT 3",
            (prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%",),
        ).fetchall()
        if len(rows) > 1:
            raise StoreError(
                f"run id prefix {prefix!r} matches several runs: {', '.join(r[0] for r in rows)} ..."
            )
        return self.get_run(rows[0][0]) if rows else None

    def history(self, spec_name: str, limit: int = 20) -> list[RunRecord]:
        """The newest ``limit`` runs of a spec, newest first, as whole records."""
        rows = self._conn.execute(
            "SELECT document FROM runs WHERE spec_name = ? ORDER BY started_at DESC, run_id DESC LIMIT ?",
            (spec_name, limit),
        ).fetchall()
        records = []
        for (document,) in rows:
            try:
                records.append(self._record(document))
            except StoreError:  # one unreadable document does not hide the rest of the history
                continue
        return records

    def suite_runs(self, suite: str) -> list[RunRecord]:
        """The newest run of each benchmark of a suite (runs tagged ``suite: NAME``), in run order."""
        rows = self._conn.execute(
            "SELECT document FROM runs WHERE json_extract(document, '$.tags.suite') = ? "
            "ORDER BY started_at DESC, run_id DESC",
            (suite,),
        ).fetchall()
        newest: dict[str, RunRecord] = {}
        for (document,) in rows:
            try:
                record = self._record(document)
            except StoreError:
                continue
            newest.setdefault(record.spec_name, record)
        return sorted(newest.values(), key=lambda r: (r.started_at, r.run_id))  # ties: by id, not by arrival

    # ------------------------------------------------------------ fast queries for listings
    def list_runs(self, spec_name: str | None = None, limit: int = 50) -> list[tuple[str, str, str, str]]:
        """(run_id, spec_name, status, started_at) newest first, optionally for one spec."""
        where, args = ("WHERE spec_name = ?", [spec_name]) if spec_name else ("", [])
        rows = self._conn.execute(
            f"SELECT run_id, spec_name, status, started_at FROM runs {where} "
            "ORDER BY started_at DESC, run_id DESC LIMIT ?",
            [*args, limit],
        ).fetchall()
        return [tuple(r) for r in rows]

    def spec_names(self) -> list[str]:
        return [r[0] for r in self._conn.execute("SELECT DISTINCT spec_name FROM runs ORDER BY spec_name")]

    def history_rows(self, spec_name: str, limit: int = 20, phase: str = "run") -> list[HistoryRow]:
        """The history table from the broken-out tables: no documents parsed, fast over many runs."""
        runs = self._conn.execute(
            "SELECT run_id, started_at, status, verdict FROM runs WHERE spec_name = ? "
            "ORDER BY started_at DESC, run_id DESC LIMIT ?",
            (spec_name, limit),
        ).fetchall()
        if not runs:
            return []
        ids = [r[0] for r in runs]
        marks = ",".join("?" * len(ids))
        cells: dict[str, dict[str, tuple[float, float | None, bool]]] = {rid: {} for rid in ids}
        query = f"""
            SELECT s.run_id, s.cell_id, s.throughput,
                   (SELECT MAX(o.p99_us) FROM phase_summaries o
                    WHERE o.run_id = s.run_id AND o.cell_id = s.cell_id AND o.repeat = s.repeat
                      AND o.phase = s.phase AND o.operation != ?),
                   c.valid
            FROM phase_summaries s JOIN cells c
              ON c.run_id = s.run_id AND c.cell_id = s.cell_id AND c.repeat = s.repeat
            WHERE s.run_id IN ({marks}) AND s.repeat = 0 AND s.operation = ? AND s.phase = ?
        """
        for run_id, cell_id, throughput, p99, valid in self._conn.execute(
            query, [ALL_OPERATIONS, *ids, ALL_OPERATIONS, phase]
        ):
            cells[run_id][cell_id] = (throughput, p99, bool(valid))
        return [
            HistoryRow(rid, datetime.fromisoformat(started), status, verdict, cells[rid])
            for rid, started, status, verdict in runs
        ]

    def interval_series(
        self, run_id: str, cell_id: str, repeat: int = 0, phase: str = "run"
    ) -> list[tuple[float, float]]:
        """(t, ops/s) of one phase: full resolution, for analysis outside the report."""
        return list(
            self._conn.execute(
                "SELECT t, throughput FROM intervals WHERE run_id = ? AND cell_id = ? AND repeat = ? "
                "AND phase = ? ORDER BY t",
                (run_id, cell_id, repeat, phase),
            )
        )

    def read(self, sql: str, params: Sequence[object] = ()) -> list[tuple[Any, ...]]:
        """A read-only query over the broken-out tables, for views that need other columns than the
        listings here (the nightly site: benchwright.site.nights)."""
        if not sql.lstrip().upper().startswith(("SELECT", "WITH")):
            raise ValueError("SQLiteResultStore.read runs SELECT queries only")
        return list(self._conn.execute(sql, params))

    def table_counts(self) -> dict[str, int]:
        """Row counts per table (diagnostics and the migration test)."""
        names = ["runs", "cells", "phase_summaries", "intervals", "metrics", "validity"]
        return {n: int(self._conn.execute(f"SELECT COUNT(*) FROM {n}").fetchone()[0]) for n in names}


def open_store(path: str | Path | None = None) -> SQLiteResultStore:
    return SQLiteResultStore(path)
