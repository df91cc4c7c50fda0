"""Issue 14, items 9-11: output paths checked before work, results stored before the report, and a
run of nothing but failed operations is a failure (non-zero exit, status failed)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from benchwright.cli import main
from benchwright.providers.local.sqlite_store import SQLiteResultStore
from tests.conftest import PASSWORD, PG_PORT, REDIS_PORT, USER

PG = f"postgresql://{USER}:{PASSWORD}@127.0.0.1:{PG_PORT}/bench"
# Every command that writes a result or report; the connection would work, so only the path can stop it.
COMMANDS = [
    ["ycsb", "run", "null", "-P", "workloada", "-p", "operationcount=10"],
    ["tpcc", "run", "postgres", "--url", PG, "-T", "1"],
    ["tpcb", "run", "postgres", "--url", PG, "-T", "1"],
    ["oltp", "run", "point_select", "--url", PG, "--time", "1"],
    ["sql", "postgres", "-f", "/dev/null", "--url", PG, "-T", "1"],
    ["redis-bench", "-p", str(REDIS_PORT), "-a", PASSWORD, "-n", "10"],
    ["tool", "redis-benchmark", "--json"],
]
LITERAL = {"tpcb", "redis-bench"}  # parsed as the native tools parse (commands/literal.py)


@pytest.mark.parametrize("argv", COMMANDS, ids=lambda a: a[0])
@pytest.mark.parametrize("bad", ["/nonexistent-dir/r.json", "/"])
def test_a_bad_json_path_is_refused_before_the_benchmark(
    argv: list[str], bad: str, capsys: pytest.CaptureFixture[str]
) -> None:
    args = [*argv, bad] if argv[-1] == "--json" else [*argv, "--json", bad]
    start = time.monotonic()
    if argv[0] in LITERAL:  # a native tool's command line: its convention, exit 1 naming the flag
        assert main(args) == 1
    else:
        with pytest.raises(SystemExit) as exit_:
            main(args)
        assert exit_.value.code == 2
    assert time.monotonic() - start < 5
    err = capsys.readouterr().err
    assert "--json" in err and ("does not exist" in err or "is a directory" in err)


def test_report_and_run_check_out_before_work(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    for argv in (
        ["report", "x", "--out", "/nonexistent-dir/r.html"],
        ["run", "nope.yaml", "--out", str(blocker / "d")],
    ):
        with pytest.raises(SystemExit) as exit_:
            main(argv)
        assert exit_.value.code == 2
        assert "--out" in capsys.readouterr().err


@pytest.mark.servers
def test_sql_against_a_missing_table_exits_non_zero(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = tmp_path / "s.sql"
    script.write_text("SELECT * FROM no_such_table_bw;\n")
    out = tmp_path / "r.json"
    code = main(["sql", "postgres", "-f", str(script), "--url", PG, "-T", "1", "--json", str(out)])
    assert code != 0
    assert "every operation failed" in capsys.readouterr().err
    assert out.exists()  # the document is still written


@pytest.mark.servers
def test_a_run_of_failed_statements_is_failed_not_succeeded(tmp_path: Path) -> None:
    spec = tmp_path / "s.yaml"
    spec.write_text(
        f"""
name: all-fail
target: {{provider: endpoint, engine: postgres, hosts: ["127.0.0.1:{PG_PORT}"], database: bench,
          user: {USER}, password_env: BW_TEST_PW}}
workload:
  name: sql
  properties: {{sql.script: "SELECT * FROM no_such_table_bw"}}
  phases: {{run: {{threads: 1, duration_s: 1}}}}
"""
    )
    store = tmp_path / "store.sqlite"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "benchwright.cli",
            "run",
            str(spec),
            "--out",
            str(tmp_path / "out"),
            "--store",
            str(store),
        ],
        capture_output=True,
        text=True,
        env={
            **__import__("os").environ,
            "BW_TEST_PW": PASSWORD,
            "BENCHWRIGHT_STATE_DIR": str(tmp_path / "st"),
        },
        timeout=300,
    )
    assert result.returncode == 1, result.stdout[-2000:] + result.stderr[-2000:]
    with SQLiteResultStore(store) as s:
        (record,) = s.history("all-fail")
    assert record.status == "failed" and "every operation failed" in (record.error or "")


@pytest.mark.servers
def test_the_result_is_stored_even_when_the_report_cannot_be_written(tmp_path: Path) -> None:
    spec = tmp_path / "s.yaml"
    spec.write_text(
        f"""
name: report-blocked
target: {{provider: endpoint, engine: postgres, hosts: ["127.0.0.1:{PG_PORT}"], database: bench,
          user: {USER}, password_env: BW_TEST_PW}}
workload:
  name: sql
  properties: {{sql.script: "SELECT 1"}}
  phases: {{run: {{threads: 1, duration_s: 1}}}}
"""
    )
    out = tmp_path / "out"
    (out / "report.html").mkdir(parents=True)  # the report's path cannot be written
    store = tmp_path / "store.sqlite"
    result = subprocess.run(
        [sys.executable, "-m", "benchwright.cli", "run", str(spec), "--out", str(out), "--store", str(store)],
        capture_output=True,
        text=True,
        env={
            **__import__("os").environ,
            "BW_TEST_PW": PASSWORD,
            "BENCHWRIGHT_STATE_DIR": str(tmp_path / "st"),
        },
        timeout=300,
    )
    assert "Traceback" not in result.stderr
    assert "report not written" in result.stdout + result.stderr
    with SQLiteResultStore(store) as s:
        (record,) = s.history("report-blocked")
    assert (
        record.status == "succeeded" and record.cells and record.cells[0].phases["run"].operations_total > 0
    )


@pytest.mark.servers
def test_an_endpoint_the_runner_cannot_reach_is_stored_failed_not_aborted(tmp_path: Path) -> None:
    spec = tmp_path / "s.yaml"
    spec.write_text(
        f"""
name: unreachable
target: {{provider: endpoint, engine: redis, hosts: ["127.0.0.1:{REDIS_PORT}"], password_env: BW_TEST_PW}}
workload: {{name: redis-bench, properties: {{redisbench.requests: 100}}}}
"""
    )
    store = tmp_path / "store.sqlite"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "benchwright.cli",
            "run",
            str(spec),
            "--out",
            str(tmp_path / "out"),
            "--store",
            str(store),
        ],
        capture_output=True,
        text=True,
        env={
            **__import__("os").environ,
            "BW_TEST_PW": "wrong-password",
            "BENCHWRIGHT_STATE_DIR": str(tmp_path / "st"),
        },
        timeout=300,
    )
    assert result.returncode == 1, result.stdout[-2000:]
    with SQLiteResultStore(store) as s:
        (record,) = s.history("unreachable")
    assert record.status == "failed" and "authentication failed" in (record.error or "")


@pytest.mark.servers
def test_a_full_disk_under_the_store_never_turns_a_measured_run_into_failed_with_no_cells(
    tmp_path: Path,
) -> None:
    """SQLite's max_page_count makes the real store answer exactly as on a full disk (SQLITE_FULL)."""
    import io

    from rich.console import Console

    from benchwright.local import run_spec
    from benchwright.providers.local import local_providers
    from benchwright.spec import parse_spec

    spec = parse_spec(
        {
            "name": "disk-full",
            "target": {"provider": "endpoint", "engine": "redis", "hosts": [f"127.0.0.1:{REDIS_PORT}"],
                       "password_env": "BW_TEST_PW", "db": 5},
            "workload": {"name": "redis-bench", "properties": {"redisbench.requests": 200}},
        }
    )  # fmt: skip
    store = SQLiteResultStore(tmp_path / "store.sqlite")
    pages = store._conn.execute("PRAGMA page_count").fetchone()[0]
    store._conn.execute(f"PRAGMA max_page_count = {pages + 1}")  # room for the "running" row only
    out = tmp_path / "out"
    os_env = __import__("os").environ
    os_env["BW_TEST_PW"] = PASSWORD
    try:
        outcome = run_spec(
            spec, out, lambda d, _s: local_providers(d, store=store), Console(file=io.StringIO())
        )
    finally:
        del os_env["BW_TEST_PW"]
    assert outcome.record.status == "succeeded", outcome.record.error
    assert outcome.record.cells and outcome.record.cells[0].phases["run"].operations_total > 0
    assert any("database or disk is full" in w and "run.json" in w for w in outcome.warnings), (
        outcome.warnings
    )
    kept = json.loads((out / "run.json").read_text())
    assert kept["status"] == "succeeded" and kept["cells"]
