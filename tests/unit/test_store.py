"""The SQLite result store: lossless round trip, idempotent saves, history, migration from version 1."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from benchwright.judge import judge_run
from benchwright.providers.base import ResultStore
from benchwright.providers.local.sqlite_store import (
    CURRENT_VERSION,
    SCHEMA_V1,
    SQLiteResultStore,
    StoreError,
)
from benchwright.report.sample import EPOCH, make_run, noisy_series, step_series, sweep_run
from benchwright.runs import Verdict


@pytest.fixture
def store(tmp_path: Path) -> SQLiteResultStore:
    with SQLiteResultStore(tmp_path / "results.sqlite") as s:
        yield s  # type: ignore[misc]


def test_it_is_a_result_store_in_wal_mode(store: SQLiteResultStore) -> None:
    assert isinstance(store, ResultStore)
    assert store._conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert store.schema_version() == CURRENT_VERSION


def test_a_run_reads_back_exactly(store: SQLiteResultStore) -> None:
    run = judge_run(sweep_run())
    run.verdict = Verdict(kind="no_history", metric="throughput", min_effect=0.05, message="first run")
    store.save_run(run)
    assert store.get_run(run.run_id) == run
    assert store.get_run("missing") is None


def test_saving_twice_replaces_instead_of_duplicating(store: SQLiteResultStore) -> None:
    run = sweep_run()
    store.save_run(run)
    first = store.table_counts()
    run.status = "failed"
    run.error = "runner crashed"
    store.save_run(run)
    assert store.table_counts() == first
    assert store.get_run(run.run_id).status == "failed"  # type: ignore[union-attr]


def test_rows_are_broken_out_for_sql(store: SQLiteResultStore) -> None:
    run = make_run("s", "r1", [("c1", {"clients": 4}, step_series(1000, 400, at=30, seconds=60))])
    judge_run(run)
    store.save_run(run)
    counts = store.table_counts()
    assert counts["cells"] == 1
    assert counts["intervals"] == 60 + 5  # run + load phase
    assert counts["metrics"] == 3 * 60
    series = store.interval_series("r1", "c1")
    assert len(series) == 60 and series[0][0] == 1.0
    codes = {r[0] for r in store._conn.execute("SELECT code FROM validity WHERE run_id = 'r1'")}
    assert "throughput_collapse" in codes


def test_history_is_newest_first_and_per_spec(store: SQLiteResultStore) -> None:
    for day in (3, 1, 2):
        store.save_run(make_run("nightly", f"n{day}", [("c", {}, noisy_series(100 * day, 10))],
                                started_at=EPOCH.replace(day=day)))  # fmt: skip
    store.save_run(make_run("other", "o1", [("c", {}, noisy_series(5, 10))]))
    assert [r.run_id for r in store.history("nightly")] == ["n3", "n2", "n1"]
    assert [r.run_id for r in store.history("nightly", limit=1)] == ["n3"]
    rows = store.history_rows("nightly")
    assert [r.run_id for r in rows] == ["n3", "n2", "n1"]
    ops, p99, valid = rows[0].cells["c"]
    assert ops == pytest.approx(300, rel=0.1) and p99 and p99 > 0 and valid
    assert store.spec_names() == ["nightly", "other"]


def test_find_run_by_prefix(store: SQLiteResultStore) -> None:
    store.save_run(make_run("s", "20260101-abc", [("c", {}, noisy_series(5, 3))]))
    store.save_run(make_run("s", "20260101-abd", [("c", {}, noisy_series(5, 3))]))
    assert store.find_run("20260101-abc").run_id == "20260101-abc"  # type: ignore[union-attr]
    with pytest.raises(StoreError, match="several runs"):
        store.find_run("20260101-ab")
    assert store.find_run("nope") is None


def test_a_version_1_store_migrates_without_loss(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    runs = [
        sweep_run(run_id="old-1"),
        make_run("s", "old-2", [("c", {}, noisy_series(50, 20))], status="failed"),
    ]
    conn = sqlite3.connect(path)
    conn.executescript(SCHEMA_V1)
    conn.execute("INSERT INTO schema_version VALUES (1)")
    for r in runs:
        conn.execute(
            "INSERT INTO runs VALUES (?, ?, ?, ?, ?, ?)",
            (r.run_id, r.spec_name, r.status, r.started_at.isoformat(), None, r.model_dump_json()),
        )
    conn.commit()
    conn.close()

    with SQLiteResultStore(path) as store:
        assert store.schema_version() == CURRENT_VERSION
        for r in runs:
            assert store.get_run(r.run_id) == r
        assert store.table_counts()["cells"] == 5
        assert set(store.history_rows("sweep")[0].cells) == {
            "clients=1",
            "clients=4",
            "clients=16",
            "clients=64",
        }
    with SQLiteResultStore(path) as again:  # reopening a migrated store is a no-op
        assert again.table_counts()["runs"] == 2


def test_a_newer_store_is_refused_with_its_path(tmp_path: Path) -> None:
    path = tmp_path / "future.sqlite"
    SQLiteResultStore(path).close()
    conn = sqlite3.connect(path)
    conn.execute("UPDATE schema_version SET version = 99")
    conn.commit()
    conn.close()
    with pytest.raises(StoreError, match=r"future\.sqlite.*newer"):
        SQLiteResultStore(path)


def test_a_file_that_is_not_a_database_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "junk.sqlite"
    path.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(StoreError, match=r"junk\.sqlite"):
        SQLiteResultStore(path)
