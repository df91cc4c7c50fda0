"""TPC-B against the real servers: `tpcb init` makes the same tables as a real `pgbench -i` (compared
through the catalog), the three built-in scripts do what pgbench's do, pgbench-format output, and
the errors for a wrong scale or missing tables."""

from __future__ import annotations

import os
import re
import secrets
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from benchwright.cli import main
from benchwright.errors import SchemaMissing, SpecError
from benchwright.results import ResultDocument
from benchwright.runner.engine import PhaseConfig, run_phase
from benchwright.runner.workloads.tpcb.pgbench_format import summary_lines
from tests.statuses import assert_honest, statuses_of

pytestmark = pytest.mark.servers

PGBENCH = next(
    (
        p
        for p in ("/usr/lib/postgresql/15/bin/pgbench", shutil.which("pgbench") or "")
        if p and os.path.exists(p)
    ),
    None,
)
SHAPE_QUERIES = {
    "columns": """SELECT table_name, column_name, ordinal_position, data_type, character_maximum_length,
                         is_nullable, column_default FROM information_schema.columns
                  WHERE table_schema = 'public' AND table_name LIKE 'pgbench%' ORDER BY 1, 3""",
    "constraints": """SELECT tc.table_name, tc.constraint_name, tc.constraint_type, kcu.column_name
                      FROM information_schema.table_constraints tc
                      LEFT JOIN information_schema.key_column_usage kcu ON kcu.constraint_name = tc.constraint_name
                      WHERE tc.table_schema = 'public' AND tc.table_name LIKE 'pgbench%'
                        AND tc.constraint_type <> 'CHECK' ORDER BY 1, 2""",
    "indexes": "SELECT tablename, indexname, indexdef FROM pg_indexes WHERE tablename LIKE 'pgbench%' ORDER BY 1, 2",
    "options": "SELECT relname, reloptions FROM pg_class WHERE relname LIKE 'pgbench%' AND relkind = 'r' ORDER BY 1",
    "content": """SELECT (SELECT count(*) FROM pgbench_accounts), (SELECT count(filler) FROM pgbench_accounts),
                         (SELECT count(DISTINCT bid) FROM pgbench_accounts), (SELECT sum(abalance) FROM pgbench_accounts),
                         (SELECT count(*) FROM pgbench_tellers), (SELECT count(filler) FROM pgbench_tellers),
                         (SELECT count(*) FROM pgbench_branches), (SELECT count(filler) FROM pgbench_branches),
                         (SELECT count(*) FROM pgbench_history), (SELECT max(octet_length(filler)) FROM pgbench_accounts)""",
}


def shape(url: str) -> dict[str, Any]:
    with psycopg.connect(url) as conn:
        return {name: conn.execute(sql).fetchall() for name, sql in SHAPE_QUERIES.items()}


@pytest.fixture(scope="module")
def pgbench_url(pg_url: str) -> Iterator[str]:
    """A second fresh database, initialised by the real pgbench."""
    if PGBENCH is None:
        pytest.fail("pgbench is not installed: scripts/local-servers install (postgresql-contrib)")
    name = f"bw_test_pgb_{secrets.token_hex(4)}"
    admin = pg_url.rsplit("/", 1)[0] + "/bench"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    url = pg_url.rsplit("/", 1)[0] + "/" + name
    yield url
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def init(engine: str, url_key: str, url: str, **props: str) -> ResultDocument:
    properties = {url_key: url, **{f"tpcb.{k}": v for k, v in props.items()}}
    return run_phase(
        PhaseConfig(
            workload="tpcb", phase="load", engine=engine, properties=properties, threads=2, processes=1
        )
    )


def test_run_before_init_names_the_missing_table(pg_url: str) -> None:
    with pytest.raises(SchemaMissing) as err:
        run_phase(
            PhaseConfig(
                workload="tpcb",
                phase="run",
                engine="postgres",
                properties={"postgres.url": pg_url},
                operation_count=1,
            )
        )
    assert "pgbench_accounts does not exist" in str(err.value) and "run the load phase first" in str(
        err.value
    )


def test_init_makes_the_same_tables_as_pgbench_i(pg_url: str, pgbench_url: str) -> None:
    env = {**os.environ, "PGPASSWORD": "bench"}
    subprocess.run(
        [
            PGBENCH or "pgbench",
            "-i",
            "-q",
            "-s",
            "2",
            "-F",
            "90",
            pgbench_url.replace("bench:bench@", "bench@"),
        ],
        check=True,
        capture_output=True,
        env=env,
        timeout=120,
    )
    doc = init("postgres", "postgres.url", pg_url, scale="2", fillfactor="90")
    assert doc.valid and doc.extra["rows"]["pgbench_accounts"] == 200_000
    ours, theirs = shape(pg_url), shape(pgbench_url)
    assert len(theirs["columns"]) == 17 and len(theirs["indexes"]) == 3  # pgbench's four tables, three keys
    for aspect in SHAPE_QUERIES:
        assert ours[aspect] == theirs[aspect], aspect
    assert ("pgbench_accounts", ["fillfactor=90"]) in ours["options"]


def test_wrong_scale_is_refused_and_no_scale_reads_it_from_the_tables(pg_url: str) -> None:
    with pytest.raises(SpecError) as err:
        run_phase(
            PhaseConfig(
                workload="tpcb",
                phase="run",
                engine="postgres",
                properties={"postgres.url": pg_url, "tpcb.scale": "5"},
                operation_count=1,
            )
        )
    assert err.value.field == "tpcb.scale" and "initialised with scale 2" in str(err.value)


@pytest.mark.parametrize(
    ("script", "history_per_tx"),
    [("tpcb-like", 1), ("simple-update", 1), ("select-only", 0)],
    ids=["tpcb-like", "simple-update", "select-only"],
)
def test_builtin_scripts_do_what_pgbench_s_do(pg_url: str, script: str, history_per_tx: int) -> None:
    with psycopg.connect(pg_url) as conn:
        before = conn.execute(
            "SELECT count(*), (SELECT sum(tbalance) FROM pgbench_tellers) FROM pgbench_history"
        ).fetchone()
    doc = run_phase(
        PhaseConfig(
            workload="tpcb",
            phase="run",
            engine="postgres",
            threads=2,
            processes=1,
            properties={"postgres.url": pg_url, "tpcb.script": script},
            operation_count=60,
        )
    )
    assert doc.operations[script].statuses == {"OK": 60}
    assert set(doc.operations) == {script} and doc.operations_total == 60 and doc.failed_total == 0
    assert_honest(doc)
    with psycopg.connect(pg_url) as conn:
        after = conn.execute(
            "SELECT count(*), (SELECT sum(tbalance) FROM pgbench_tellers) FROM pgbench_history"
        ).fetchone()
        accounts, history = conn.execute(
            "SELECT (SELECT sum(abalance) FROM pgbench_accounts), (SELECT sum(delta) FROM pgbench_history)"
        ).fetchone()
    assert after[0] - before[0] == 60 * history_per_tx
    assert accounts == history  # every account change is recorded in the history, as in pgbench
    if script != "tpcb-like":
        assert after[1] == before[1]  # only tpcb-like touches tellers
    assert doc.extra["transactions"] == 60 and doc.extra["scale"] == 2


def test_output_is_laid_out_like_pgbench_s(
    pg_url: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    out = tmp_path / "tpcb.json"
    code = main(
        [
            "tpcb",
            "run",
            "--url",
            pg_url,
            "-c",
            "2",
            "-T",
            "2",
            "-P",
            "1",
            "-R",
            "200",
            "-S",
            "--json",
            str(out),
        ]
    )
    streams = capsys.readouterr()
    text = streams.out
    assert code == 0
    assert re.search(  # progress on stderr, as pgbench prints it
        r"^progress: 1\.0 s, \d+\.\d tps, lat \d+\.\d{3} ms stddev \d+\.\d{3}, 0 failed, lag \d+\.\d{3} ms$",
        streams.err,
        re.M,
    ), streams.err
    assert "transaction type: <builtin: select only>" in text and "scaling factor: 2" in text
    assert re.search(r"^rate limit schedule lag: avg \d+\.\d{3} ms$", text, re.M)
    assert re.search(r"^tps = \d+\.\d{6} \(without initial connection time\)$", text, re.M)
    doc = ResultDocument.read(out)
    assert doc.measurement.latency == "response_time" and doc.measurement.target_ops_per_sec == 200
    assert summary_lines(doc, 2, 1)[0] == "transaction type: <builtin: select only>"


def test_init_and_run_on_mysql(mysql_url: str) -> None:
    doc = init("mysql", "mysql.url", mysql_url, scale="1")
    assert doc.valid and doc.extra["rows"] == {
        "pgbench_branches": 1,
        "pgbench_tellers": 10,
        "pgbench_accounts": 100_000,
    }
    run = run_phase(
        PhaseConfig(
            workload="tpcb",
            phase="run",
            engine="mysql",
            threads=2,
            processes=1,
            properties={"mysql.url": mysql_url},
            operation_count=40,
        )
    )
    statuses = statuses_of(run.operations, "tpcb-like")
    # operation_count counts attempts: a deadlocked one (RETRY, re-run) is one, and no throughput
    assert statuses.get("OK", 0) + statuses.get("RETRY", 0) == 40 and "ERROR" not in statuses
    assert set(run.operations) <= {"tpcb-like", "tpcb-like-FAILED"}  # deadlocked attempts, re-run
    assert run.failed_total == 0 and run.retried() == statuses.get("RETRY", 0)  # a retry is no failure
    assert run.operations_total == statuses["OK"]
    assert_honest(run)
