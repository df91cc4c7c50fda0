"""Issue 14, items 9 and 13: damaged stores and documents, non-UTF-8 inputs, odd limits: a clear error
naming the path (and a repair command), never a traceback."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from benchwright.cli import main
from benchwright.providers.local.sqlite_store import SQLiteResultStore, StoreError
from benchwright.report.sample import make_run, noisy_series


def run_cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(argv)  # an unexpected exception would propagate out of main and fail the test
    out = capsys.readouterr()
    return code, out.out + out.err


@pytest.fixture
def store_path(tmp_path: Path) -> Path:
    path = tmp_path / "results.sqlite"
    with SQLiteResultStore(path) as s:
        for i in range(3):
            s.save_run(make_run("nightly", f"run-{i}", [("c", {}, noisy_series(100, 200))]))
    return path


def test_an_old_schema_document_breaks_no_command(
    store_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with sqlite3.connect(store_path) as conn:
        conn.execute(
            """UPDATE runs SET document = '{"run_id": "run-1", "spec_name": "nightly"}' WHERE run_id = 'run-1'"""
        )
    code, text = run_cli(["show", "run-1", "--store", str(store_path)], capsys)
    assert code == 1 and str(store_path) in text and "DELETE FROM runs WHERE run_id = 'run-1'" in text
    code, text = run_cli(["show", "run-2", "--store", str(store_path)], capsys)
    assert code == 0, text  # the other runs still read
    with SQLiteResultStore(store_path) as s:
        assert [r.run_id for r in s.history("nightly")] == ["run-2", "run-0"] or len(
            s.history("nightly")
        ) == 2


def test_a_damaged_store_is_reported_with_its_path_and_a_repair_command(store_path: Path) -> None:
    data = bytearray(store_path.read_bytes())
    page = 4096
    assert len(data) > 3 * page
    data[2 * page : 3 * page] = b"\xa5" * page  # garbage over a b-tree page
    store_path.write_bytes(bytes(data))
    for suffix in ("-wal", "-shm"):
        Path(f"{store_path}{suffix}").unlink(missing_ok=True)
    with pytest.raises(StoreError) as err:
        SQLiteResultStore(store_path)
    assert str(store_path) in str(err.value) and ".recover" in str(err.value)


@pytest.mark.parametrize(
    "content",
    [b'{"a": 1}', b'{"spec_name": 3}', b"[1, 2]", b"[" * 100_000 + b"]" * 100_000, b"\xff\xfe", b"{"],
    ids=["wrong-schema", "wrong-record", "list", "deep", "not-utf8", "truncated"],
)
def test_show_and_compare_of_a_bad_json_file_are_clear_errors(
    tmp_path: Path, content: bytes, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.json"
    bad.write_bytes(content)
    for argv in (["show", str(bad)], ["compare", str(bad), str(bad)]):
        code, text = run_cli(argv, capsys)
        assert code == 1 and str(bad) in text and "Traceback" not in text
        assert len(text) < 600  # one line, not a page of validation errors


def test_non_utf8_sql_and_property_files_are_clear_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sql = tmp_path / "s.sql"
    sql.write_bytes(b"SELECT 1;\xff\n")
    code, text = run_cli(["sql", "postgres", "-f", str(sql), "--url", "postgresql://u@127.0.0.1:1/x"], capsys)
    assert code == 2 and "not UTF-8" in text
    props = tmp_path / "p.properties"
    props.write_bytes(b"recordcount=1\xff\n")
    code, text = run_cli(["ycsb", "run", "null", "-P", str(props)], capsys)
    assert code == 2 and "not UTF-8" in text


def test_history_limit_zero_is_refused(store_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, text = run_cli(["history", "nightly", "--limit", "0", "--store", str(store_path)], capsys)
    assert code == 2 and "--limit" in text


@pytest.mark.servers  # MariaDB's port: something that speaks another protocol
def test_a_port_speaking_another_protocol_is_a_clear_error(capsys: pytest.CaptureFixture[str]) -> None:
    from tests.conftest import MYSQL_PORT

    code, text = run_cli(["ycsb", "load", "redis", "-P", "workloada", "-p", f"redis.port={MYSQL_PORT}",
                          "-p", "recordcount=10"], capsys)  # fmt: skip
    assert code == 1 and f"127.0.0.1:{MYSQL_PORT}" in text and "Redis protocol" in text


def test_redis_benchmark_on_a_closed_port_does_not_hang() -> None:
    import subprocess
    import sys

    result = subprocess.run(
        [sys.executable, "-m", "benchwright.cli", "tool", "redis-benchmark", "-p", "1", "-n", "10"],
        capture_output=True,
        text=True,
        timeout=60,  # it used to wait forever
    )
    assert result.returncode != 0 and "Traceback" not in result.stderr
    assert "127.0.0.1:1" in result.stderr or "not found" in result.stderr
