"""Store schema 3: the site's columns (suite, costs, the measured phase's fingerprint and its key) are
written at save time, and an older store gets the same values from its documents on open."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from benchwright.providers.local.sqlite_store import CURRENT_VERSION, SQLiteResultStore
from benchwright.site.nights import benchmarks
from benchwright.site.sample import Plan, fingerprint, history

COLUMNS = {"runs": ("suite", "cost_total", "suite_run_id", "noise"),
           "cells": ("cost", "ops_per_dollar", "fingerprint", "context")}  # fmt: skip
READ = {
    "runs": "SELECT run_id, suite, cost_total, suite_run_id, noise FROM runs ORDER BY run_id",
    "cells": "SELECT run_id, cell_id, repeat, cost, ops_per_dollar, fingerprint, context FROM cells "
    "ORDER BY run_id, cell_id, repeat",
}


def _saved(path: Path) -> None:
    records = history([Plan("a", context_at=2, aa=True), Plan("b", cells=("x",))], nights=4)
    records[0].suite_run_id = "suite-1"  # an AWS suite's cell record
    records[1].cost = None
    with SQLiteResultStore(path) as store:
        for record in records:
            store.save_run(record)


def test_save_writes_the_columns(tmp_path: Path) -> None:
    _saved(tmp_path / "s.sqlite")
    with SQLiteResultStore(tmp_path / "s.sqlite") as store:
        runs = store.read(READ["runs"])
        cells = store.read(READ["cells"])
    assert {r[1] for r in runs} == {"nightly"}
    assert sorted(r[4] or "-" for r in runs) == ["-"] * 4 + ["aa"] * 4  # the spec's noise: aa
    assert sum(r[3] == "suite-1" for r in runs) == 1
    assert sum(r[2] is None for r in runs) == 1 and {r[2] for r in runs} - {None} == {0.84, 1.68}
    keys = {c[6] for c in cells}
    assert keys == {fingerprint("16.3").key(), fingerprint("16.4").key()}
    assert all(c[3] == 0.42 and c[4] and c[5] for c in cells)


def _to_version_2(path: Path, sql: str = "") -> None:
    """Take a store back to version 2: the columns gone (and ``sql`` run on its documents)."""
    conn = sqlite3.connect(path)
    for table, names in COLUMNS.items():
        for name in names:
            conn.execute(f"ALTER TABLE {table} DROP COLUMN {name}")
    if sql:
        conn.execute(sql)
    conn.execute("UPDATE schema_version SET version = 2")
    conn.commit()
    conn.close()


def test_a_version_2_store_is_filled_from_its_documents(tmp_path: Path) -> None:
    path = tmp_path / "v2.sqlite"
    _saved(path)
    with SQLiteResultStore(path) as store:
        written = {table: store.read(sql) for table, sql in READ.items()}
        nights = benchmarks(store)
    _to_version_2(path)
    with SQLiteResultStore(path) as store:
        assert store.schema_version() == CURRENT_VERSION == 3
        assert {table: store.read(sql) for table, sql in READ.items()} == written
        assert benchmarks(store) == nights  # the site reads the same history


def test_an_unreadable_fingerprint_leaves_the_context_unknown(tmp_path: Path) -> None:
    path = tmp_path / "odd.sqlite"
    _saved(path)
    _to_version_2(path, "UPDATE runs SET document = json_set(document, '$.cells[0].phases.run.fingerprint', "
                  "json('{\"cpu_count\": \"many\"}'))")  # fmt: skip
    with SQLiteResultStore(path) as store:
        first = store.read("SELECT fingerprint, context FROM cells WHERE rowid IN "
                           "(SELECT MIN(rowid) FROM cells GROUP BY run_id)")  # fmt: skip
        assert first and all(row == (None, None) for row in first)
        assert {b.name for b in benchmarks(store)} == {"a", "b"}
