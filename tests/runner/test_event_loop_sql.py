"""The SQL workloads (pgbench's TPC-B, sysbench's OLTP) on the libpq event loop against a real
PostgreSQL: a transaction advances statement by statement on one connection and does what it does
on a thread; a server error in the middle of a transaction fails that transaction only, rolls it
back, and the connection goes on."""

from __future__ import annotations

import contextlib
import select
import subprocess
import threading
import time
from typing import Any

import psycopg
import pytest
from psycopg import pq

from benchwright.results import ResultDocument
from benchwright.runner.engine import PhaseConfig, run_phase
from benchwright.runner.event_loop import Connection
from benchwright.runner.event_loop_pq import PqChannel, PqEventLoop
from benchwright.runner.measure import Recorder
from tests.runner.conftest import Background, kill_group, loop_build, ran_on, wait_for_sessions
from tests.statuses import assert_honest, statuses_of

pytestmark = pytest.mark.servers

LOOP = "event loop"


def phase(workload: str, props: dict[str, str], name: str, **kw: Any) -> ResultDocument:
    config = PhaseConfig(
        workload=workload,
        phase=name,
        engine="postgres",
        properties=props,
        seed=5,
        **{"threads": 1, "processes": 1, **kw},
    )
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


def test_the_libpq_loop_gives_each_connection_a_process_up_to_two_per_core_and_the_document_says_so(
    pg_url: str,
) -> None:
    import os

    phase("tpcb", {"postgres.url": pg_url}, "load", threads=2)
    config = PhaseConfig(
        workload="tpcb",
        phase="run",
        engine="postgres",
        properties={"postgres.url": pg_url, "tpcb.script": "select-only"},
        threads=6,
        operation_count=600,
    )
    run = run_phase(config)
    assert LOOP in run.measurement.method
    assert run.measurement.processes == min(6, 2 * (os.cpu_count() or 1))
    assert run.operations["select-only"].statuses == {"OK": 600}


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
    assert "tpcb-like" not in run.operations  # nothing succeeded: no throughput entry at all
    assert run.operations["tpcb-like-FAILED"].statuses == {"ERROR": 30}
    assert run.operations_total == 0 and run.throughput == 0 and run.failed_total == 30
    assert run.error_rate == 1.0
    assert_honest(run)
    assert run.extra["error_kinds"] == {"tpcb-like:RaiseException": 30}
    assert rows(pg_url, TPCB_STATE) == before
    leftover = rows(
        pg_url,
        "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND state LIKE 'idle in%'",
    )
    assert leftover == [(0,)]


# ------------------------------------------------------------------ the loop's faults mid-transaction
# As the redis-bench loop's tests (tests/runner/test_event_loop.py) and YCSB's: a dropped connection,
# a killed server, a server that does not answer, here with transactions in flight. Each acts only on
# a PostgreSQL this test started itself (private_postgres, 127.0.0.1).
WHOLE = "SELECT (SELECT sum(abalance) FROM pgbench_accounts) = (SELECT coalesce(sum(delta), 0) FROM pgbench_history)"
BALANCED = (
    "SELECT (SELECT sum(abalance) FROM pgbench_accounts) = (SELECT sum(bbalance) FROM pgbench_branches)"
)


def wait_for_history(url: str, count: int) -> None:
    """Until ``count`` transactions have committed (their history rows; bounded: 60 s)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if history(url) >= count:
            return
        time.sleep(0.02)  # polling the server's tables: a readiness probe
    raise AssertionError(f"no {count} committed transactions within 60 s")


def history(url: str) -> int:
    return int(rows(url, "SELECT count(*) FROM pgbench_history")[0][0])


# The fault tests run a count of transactions, not a duration: the fault comes once 100 have
# committed, however long that takes on a loaded machine, and the run goes on well past it.
COUNT = 900


def test_sessions_dropped_mid_transaction_fail_those_only_and_the_run_goes_on(
    private_postgres: tuple[subprocess.Popen[bytes], str],
) -> None:
    _, url = private_postgres
    phase("tpcb", {"postgres.url": url}, "load", threads=2)
    dropped_at: list[int] = []

    def terminate() -> None:
        wait_for_history(url, 100)
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                " WHERE datname = current_database() AND pid <> pg_backend_pid()"
            )
        dropped_at.append(history(url))

    killer = Background(terminate)
    killer.start()
    run = phase("tpcb", {"postgres.url": url}, "run", threads=3, operation_count=COUNT, max_seconds=120)
    killer.join()
    assert LOOP in run.measurement.method and not run.aborted
    done = statuses_of(run.operations, "tpcb-like")
    assert 1 <= done.get("ERROR", 0) <= 3  # at most the transaction in flight on each session
    assert set(run.extra["error_kinds"]) <= {"tpcb-like:ConnectionError", "tpcb-like:AdminShutdown"}
    assert sum(run.extra["error_kinds"].values()) == done["ERROR"]
    assert done["OK"] + done["ERROR"] == COUNT
    assert run.operations_total == done["OK"] and run.failed_total == done["ERROR"]  # throughput: successes
    assert_honest(run)
    # A session killed after its COMMIT reached the server but before the answer came back counts
    # as failed although it committed (its outcome is unknown to any client): so the history has
    # one row per committed transaction plus at most one per failed one.
    committed = history(url)
    assert done["OK"] <= committed <= done["OK"] + done["ERROR"]
    assert committed - dropped_at[0] >= 100  # and on it went on new sessions
    # a transaction cut off part-way left nothing behind: every history row's delta is in the balances
    assert rows(url, WHOLE) == [(1,)]
    assert rows(url, BALANCED) == [(True,)]


def test_server_killed_mid_transaction_ends_with_a_flagged_partial_result(
    private_postgres: tuple[subprocess.Popen[bytes], str],
) -> None:
    proc, url = private_postgres
    phase("tpcb", {"postgres.url": url}, "load", threads=2)

    def kill() -> None:
        wait_for_history(url, 100)
        kill_group(proc)

    killer = Background(kill)
    killer.start()
    run = phase("tpcb", {"postgres.url": url}, "run", threads=2, max_seconds=120)
    killer.join()
    assert LOOP in run.measurement.method
    assert run.aborted and any(f.code == "server_lost" for f in run.validity)
    done = statuses_of(run.operations, "tpcb-like")
    # 100 commits were on the server when it was killed; a commit whose reply died with it is a
    # lost connection to the client (one per thread at most), so at least 100 - 2 are OK.
    assert done["OK"] >= 100 - 2 and done["ERROR"] >= 2
    assert set(run.extra["error_kinds"]) <= {"tpcb-like:ConnectionError", "tpcb-like:TargetUnreachable"}
    assert run.operations_total == done["OK"] and run.failed_total == done["ERROR"]
    assert_honest(run)
    # it gave up after a few (3) seconds of failures, not at the deadline (however long the 100
    # transactions before the kill took on a loaded machine)
    assert run.runtime_ms < 60_000


def test_a_statement_that_gets_no_answer_is_a_timeout_and_the_run_goes_on(
    private_postgres: tuple[subprocess.Popen[bytes], str],
) -> None:
    """Row locks held elsewhere on every branch: each transaction waits at its branch update (the
    4th statement); past postgres.timeout it fails as a TimeoutError and its session is replaced.
    Once the locks go, transactions commit again, and nothing of a failed one stays."""
    _, url = private_postgres
    phase("tpcb", {"postgres.url": url}, "load", threads=2)
    props = {"postgres.url": url, "postgres.timeout": "0.3"}
    released_at: list[int] = []
    with psycopg.connect(url) as blocker:
        released = threading.Event()

        def hold() -> None:
            try:
                wait_for_history(url, 100)
                blocker.execute("SELECT * FROM pgbench_branches FOR UPDATE")
                deadline = time.monotonic() + 1.0
                while time.monotonic() < deadline and not released.is_set():
                    released.wait(0.05)  # the fault lasts 1 s: well under the 3 s give-up
            finally:
                blocker.rollback()
            released_at.append(history(url))

        holder = Background(hold)
        holder.start()
        try:
            # 5,000: still running when the locks are taken (900 could all commit first on a quick
            # host: no transaction waited, no timeout to judge; it failed so once in CI)
            run = phase("tpcb", props, "run", threads=2, operation_count=5_000, max_seconds=120)
        finally:
            released.set()
            holder.join()
    assert LOOP in run.measurement.method and not run.aborted
    kinds = run.extra["error_kinds"]
    assert kinds.get("tpcb-like:TimeoutError", 0) >= 2
    assert set(kinds) <= {"tpcb-like:TimeoutError", "tpcb-like:ConnectionError"}
    # the 0.3 s a timed-out transaction waited is in the failures' own latencies
    assert run.operations["tpcb-like-FAILED"].max_us >= 300_000
    done = statuses_of(run.operations, "tpcb-like")
    assert sum(kinds.values()) == done["ERROR"]
    assert_honest(run)
    committed = history(url)
    assert committed - released_at[0] >= 100  # committing again after the locks
    # A statement overdue at its COMMIT (a loaded server can take 0.3 s over one) may have committed
    # after the client gave up on it: one history row per committed transaction, plus at most one per
    # failed one, and every row's delta is in the balances.
    assert done["OK"] <= committed <= done["OK"] + done.get("ERROR", 0)
    assert rows(url, WHOLE) == [(1,)]
    assert rows(url, BALANCED) == [(True,)]


def test_a_session_lost_while_a_transaction_was_left_open_is_dropped_and_no_request_fails(
    pg_url: str,
) -> None:
    """The compiled hot path read a request's result and the server's farewell together (the
    session was terminated just after answering): libpq says the transaction state is unknown and
    the loop is asked to roll back. It cannot (libpq refuses even to leave non-blocking mode on a
    lost session; the worker died of that in CI): the connection is dropped to be reopened, and no
    request or error is counted, since the request was already recorded."""
    session = psycopg.connect(pg_url, autocommit=True)
    pgconn = session.pgconn
    pgconn.exec_(b"BEGIN")  # the state the loop rolls back from
    pid = pgconn.backend_pid
    channel = PqChannel(pgconn)  # as the driver lends it, while the session is alive
    with psycopg.connect(pg_url, autocommit=True) as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
    readable = select.select([pgconn.socket], [], [], 30)[0]  # the farewell (bounded: 30 s)
    assert readable, "the terminated session sent nothing within 30 s"
    with contextlib.suppress(psycopg.OperationalError):
        pgconn.consume_input()
    with contextlib.suppress(psycopg.OperationalError):
        pgconn.consume_input()  # the end of the stream: libpq marks the session lost
    assert pgconn.transaction_status != pq.TransactionStatus.IDLE

    dropped: list[int] = []
    conn = Connection(lambda: channel, lambda: dropped.append(pid), iter([]), None)
    conn.channel = channel
    errors: dict[str, int] = {}
    loop = PqEventLoop([conn], Recorder(time.perf_counter_ns(), "service_time"), 0, None, errors, 3.0)
    loop._left_in_transaction(conn)
    assert conn.channel is None and loop.idle == [conn] and dropped == [pid]
    assert errors == {} and loop.recorder.completed == {}
    session.close()


# ------------------------------------------------------------------ select-only's faults
# TPC-B select-only on the libpq loop sends its selects from a C source (_fastloop.UniformSelects)
# without making a request object; a select the compiled part hands back (an error, a lost session,
# an overdue reply) is made then, as the source would have made it. Each fault on both builds.

PQ_COMPILED = "event loop (libpq hot path in C)"


@pytest.fixture(params=["compiled", "python"])
def pq_loop(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    return loop_build(request, monkeypatch, PQ_COMPILED)


def select_sessions(conn: psycopg.Connection[Any], count: int, but: frozenset[int] = frozenset()) -> set[int]:
    """Until ``count`` other sessions (none of ``but``) have run select-only's statement; their pids."""
    return wait_for_sessions(conn, "SELECT abalance FROM pgbench_accounts%", count, but)


def test_select_only_sessions_terminated_mid_run_reconnect_and_go_on(pg_url: str, pq_loop: str) -> None:
    """A count of selects (the fault and the recovery are waited for, however slow the machine): the
    three sessions are terminated mid-run, and three new ones select on."""
    phase("tpcb", {"postgres.url": pg_url}, "load", threads=2)

    def terminate() -> None:
        with psycopg.connect(pg_url, autocommit=True) as conn:
            first = select_sessions(conn, 3)
            for pid in first:
                conn.execute("SELECT pg_terminate_backend(%s)", (pid,))
            select_sessions(conn, 3, but=frozenset(first))  # and on it went, on new sessions

    killer = Background(terminate)
    killer.start()
    props = {"postgres.url": pg_url, "tpcb.script": "select-only"}
    run = phase("tpcb", props, "run", threads=3, processes=3, operation_count=30_000, max_seconds=120)
    killer.join()
    assert ran_on(run, pq_loop) and not run.aborted
    selects = statuses_of(run.operations, "select-only")
    assert 1 <= selects.get("ERROR", 0) <= 6  # the select in flight on each terminated session
    assert set(run.extra["error_kinds"]) <= {"select-only:ConnectionError", "select-only:AdminShutdown"}
    assert sum(run.extra["error_kinds"].values()) == selects["ERROR"]
    assert sum(selects.values()) == 30_000
    assert run.operations_total == 30_000 - selects["ERROR"] and run.failed_total == selects["ERROR"]
    assert_honest(run)


def test_select_only_reply_overdue_mid_run_is_a_timeout_and_the_run_goes_on(
    pg_url: str, pq_loop: str
) -> None:
    """An exclusive lock on the accounts, taken once the selects are under way: each session's select
    waits on it, the loop gives up on it after ``postgres.timeout`` (a TimeoutError, the session
    reopened), and after the lock is released the run goes on to its count."""
    phase("tpcb", {"postgres.url": pg_url}, "load", threads=2)

    def stall() -> None:
        with psycopg.connect(pg_url, autocommit=True) as watcher, psycopg.connect(pg_url) as blocker:
            select_sessions(watcher, 2)
            blocker.execute("LOCK TABLE pgbench_accounts IN ACCESS EXCLUSIVE MODE")
            try:
                deadline = time.monotonic() + 60
                seen: set[int] = set()
                while len(seen) < 4 and time.monotonic() < deadline:  # two given up on, counted over time
                    seen |= {
                        pid
                        for (pid,) in watcher.execute(
                            "SELECT pid FROM pg_stat_activity WHERE datname = current_database()"
                            " AND wait_event_type = 'Lock' AND query LIKE 'SELECT abalance%'"
                        ).fetchall()
                    }
                    time.sleep(0.02)  # polling the server's view: a readiness probe
                assert len(seen) >= 4, seen
            finally:
                blocker.rollback()

    staller = Background(stall)
    staller.start()
    props = {"postgres.url": pg_url, "tpcb.script": "select-only", "postgres.timeout": "0.3"}
    run = phase("tpcb", props, "run", threads=2, processes=2, operation_count=20_000, max_seconds=120)
    staller.join()
    assert ran_on(run, pq_loop) and not run.aborted, (run.extra, run.validity)
    selects = statuses_of(run.operations, "select-only")
    assert run.extra["error_kinds"]["select-only:TimeoutError"] >= 2
    assert run.extra["error_kinds"] == {"select-only:TimeoutError": selects["ERROR"]}
    assert selects["OK"] > 0 and sum(selects.values()) == 20_000
    assert run.operations["select-only-FAILED"].max_us >= 300_000  # the timeouts' own latencies
    assert run.operations["select-only"].operations == run.operations_total == 20_000 - selects["ERROR"]
    assert_honest(run)


def test_select_only_refused_mid_run_fails_those_selects_and_the_run_goes_on(
    pg_url: str, pq_loop: str
) -> None:
    """The accounts renamed away once the selects are under way: each select of the prepared
    statement is an error (UndefinedTable) until the name is back, and the run goes on to its count."""
    phase("tpcb", {"postgres.url": pg_url}, "load", threads=2)

    def refuse() -> None:
        with psycopg.connect(pg_url, autocommit=True) as conn:
            select_sessions(conn, 2)
            rolled_back = "SELECT xact_rollback FROM pg_stat_database WHERE datname = current_database()"
            before = conn.execute(rolled_back).fetchone()[0]  # type: ignore[index]
            conn.execute("ALTER TABLE pgbench_accounts RENAME TO gone_accounts")
            try:
                deadline = time.monotonic() + 60
                while time.monotonic() < deadline:  # until the server has refused a few selects
                    conn.execute("SELECT pg_stat_clear_snapshot()")
                    if conn.execute(rolled_back).fetchone()[0] >= before + 20:  # type: ignore[index]
                        break
                    time.sleep(0.02)  # polling the server's view: a readiness probe
            finally:
                conn.execute("ALTER TABLE gone_accounts RENAME TO pgbench_accounts")

    refuser = Background(refuse)
    refuser.start()
    props = {"postgres.url": pg_url, "tpcb.script": "select-only"}
    run = phase("tpcb", props, "run", threads=2, processes=2, operation_count=30_000, max_seconds=120)
    refuser.join()
    assert ran_on(run, pq_loop) and not run.aborted, (run.extra, run.validity)
    selects = statuses_of(run.operations, "select-only")
    assert selects.get("ERROR", 0) >= 1 and selects["OK"] > 0
    assert run.extra["error_kinds"] == {"select-only:UndefinedTable": selects["ERROR"]}
    assert sum(selects.values()) == 30_000
    assert run.operations_total == selects["OK"] and run.failed_total == selects["ERROR"]
    assert_honest(run)
