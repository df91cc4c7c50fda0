"""`benchwright pgbench -f` against a real PostgreSQL database: the values a script's `\\set` draws
reach the server (pasted in simple mode, bound in prepared mode), one row per transaction, and a
built-in script on a database without pgbench's tables is refused naming the table and `-i`."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import urlsplit

import psycopg
import pytest

from benchwright.cli import main

SCRIPT = """\\set v random(5, 9) * :factor
\\set w (:v + 1) / 2
INSERT INTO bw_script_rows (mode, v, w) VALUES (':mode', :v, :w);
"""


def command(pg_url: str) -> list[str]:
    url = urlsplit(pg_url)
    return ["-h", url.hostname or "", "-p", str(url.port), "-U", url.username or "", url.path.lstrip("/")]


@pytest.fixture
def password(pg_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PGPASSWORD", urlsplit(pg_url).password or "")


def test_a_built_in_script_without_pgbench_s_tables_names_the_table(
    pg_url: str, password: None, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["pgbench", "-S", "-r", "-t", "2", *command(pg_url)]) == 1
    err = capsys.readouterr().err
    assert "table pgbench_accounts does not exist" in err and "benchwright pgbench -i" in err


@pytest.mark.parametrize("mode", ["simple", "prepared"])
def test_the_drawn_values_reach_the_server_once_per_transaction(
    mode: str, pg_url: str, password: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("CREATE TABLE IF NOT EXISTS bw_script_rows (mode text, v bigint, w bigint)")
    script = tmp_path / "rows.sql"
    script.write_text(SCRIPT.replace(":mode", mode))
    argv = ["pgbench", "-f", str(script), "-D", "factor=3", "-M", mode, "-c", "2", "-t", "15", "-n", "-r"]
    assert main([*argv, *command(pg_url)]) == 0
    out = capsys.readouterr().out
    assert "number of transactions actually processed: 30/30" in out
    with psycopg.connect(pg_url) as conn:
        rows = conn.execute("SELECT v, w FROM bw_script_rows WHERE mode = %s", (mode,)).fetchall()
    assert len(rows) == 30
    assert {v for v, _ in rows} <= {15, 18, 21, 24, 27} and len({v for v, _ in rows}) > 1
    assert all(w == (v + 1) // 2 for v, w in rows)  # integer division, on positive values


def test_a_run_with_failed_transactions_exits_2_as_pgbench_does(
    pg_url: str, password: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = tmp_path / "fails.sql"
    script.write_text("\\set d random(0, 1)\nSELECT 1 / :d;\n")  # division by zero about half the time
    argv = ["pgbench", "-f", str(script), "-c", "1", "-t", "40", "-n", "--random-seed", "7"]
    assert main([*argv, *command(pg_url)]) == 2
    captured = capsys.readouterr()
    said = re.search(r"^benchwright: (\d+) transaction\(s\) failed", captured.err, re.MULTILINE)
    assert said is not None, captured.err
    failed = int(said.group(1))
    processed = int(captured.out.split("actually processed: ")[1].split("/")[0])
    assert 0 < failed < 40 and processed == 40 - failed  # a failed transaction is never throughput
