"""The SQL workloads (pgbench's TPC-B, sysbench's OLTP) on the libpq event loop against a real
PostgreSQL: a transaction advances statement by statement on one connection and does what it does
on a thread; a server error in the middle of a transaction fails that transaction only, rolls it
back, and the connection goes on."""

from __future__ import annotations

from typing import Any

import psycopg
import pytest

from benchwright.results import ResultDocument
from benchwright.runner.engine import PhaseConfig, run_phase

pytestmark = pytest.mark.servers

LOOP = "event loop"


def phase(workload: str, props: dict[str, str], name: str, **kw: Any) -> ResultDocument:
    config = PhaseConfig(workload, name, "postgres", props, seed=5, **{"threads": 1, "processes": 1, **kw})
    return run_phase(config)


def rows(url: str, sql: str) -> list[tuple[Any, ...]]:
    with psycopg.connect(url) as conn:
        return conn.execute(sql).fetchall()


TPCB_STATE = (
    "SELECT (SELECT sum(abalance) FROM pgbench_accounts), (SELECT sum(tbalance) FROM pgbench_tellers),"
    " (SELECT sum(bbalance) FROM pgbench_branches), (SELECT count(*) FROM pgbench_history)"
)
HISTORY = "SELECT tid, bid, aid, delta FROM pgbench_history ORDER BY tid, bid, aid, delta"


@pytest.mark.parametrize("script", ["tpcb-like", "select-only"])
def test_tpcb_on_the_loop_does_what_threads_do(pg_url: str, script: str) -> None:
    props = {"postgres.url": pg_url, "tpcb.script": script}
    outcomes = []
    for model in ("threads", "auto"):
        phase("tpcb", {"postgres.url": pg_url}, "load", threads=2)
        run = phase("tpcb", {**props, "client.model": model}, "run", operation_count=150)
        assert (LOOP in run.measurement.method) == (model == "auto")
        outcomes.append((run.operations[script].statuses, rows(pg_url, TPCB_STATE), rows(pg_url, HISTORY)))
    threads, loop = outcomes
    assert loop == threads
    assert loop[0] == {"OK": 150}
    if script == "tpcb-like":
        assert loop[1][0][3] == 150 and loop[1][0][0] == loop[1][0][1] == loop[1][0][2]


def test_oltp_on_the_loop_does_what_threads_do(pg_url: str) -> None:
    props = {"postgres.url": pg_url, "oltp.tables": "2", "oltp.table_size": "500"}
    state = (
        "SELECT count(*), sum(k), md5(string_agg(id || ':' || k, ',' ORDER BY id, k))"
        " FROM (SELECT * FROM sbtest1 UNION ALL SELECT * FROM sbtest2) t"
    )
    outcomes = []
    for model in ("threads", "auto"):
        phase("oltp", props, "load", threads=2)
        run = phase("oltp", {**props, "client.model": model}, "run", operation_count=60)
        assert (LOOP in run.measurement.method) == (model == "auto")
        outcomes.append(
            (run.operations["oltp_read_write"].statuses, run.extra["queries"], rows(pg_url, state))
        )
    threads, loop = outcomes
    assert loop == threads
    assert loop[0] == {"OK": 60} and loop[1]["write"] == 60 * 4


def test_a_server_error_mid_transaction_fails_it_rolls_it_back_and_the_next_one_starts_clean(
    pg_url: str,
) -> None:
    """A trigger refuses every branch update, the 4th of tpcb-like's 7 statements: each transaction
    is one error, nothing it did stays (no history row, accounts unchanged), and the connections
    go on to the next transaction instead of finding an aborted one."""
    phase("tpcb", {"postgres.url": pg_url}, "load", threads=2)
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(
            "CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS"
            " $$ BEGIN RAISE EXCEPTION 'branch updates refused'; END $$"
        )
        conn.execute(
            "CREATE TRIGGER refuse BEFORE UPDATE ON pgbench_branches FOR EACH ROW EXECUTE FUNCTION refuse()"
        )
    before = rows(pg_url, TPCB_STATE)
    try:
        run = phase("tpcb", {"postgres.url": pg_url}, "run", threads=3, operation_count=30)
    finally:
        with psycopg.connect(pg_url, autocommit=True) as conn:
            conn.execute("DROP TRIGGER refuse ON pgbench_branches")
            conn.execute("DROP FUNCTION refuse()")
    assert LOOP in run.measurement.method
    assert run.operations["tpcb-like"].statuses == {"ERROR": 30}
    assert run.extra["error_kinds"] == {"tpcb-like:RaiseException": 30}
    assert rows(pg_url, TPCB_STATE) == before
    leftover = rows(
        pg_url,
        "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND state LIKE 'idle in%'",
    )
    assert leftover == [(0,)]
