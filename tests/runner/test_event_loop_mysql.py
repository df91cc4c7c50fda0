"""The SQL workloads on the MySQL / MariaDB event loop (mysqlclient's send_query / read_query_result)
against the real local MariaDB: a transaction advances statement by statement on one connection and
does what it does on a thread; a server error in the middle of a transaction fails that transaction
only and rolls it back; dropped sessions and a statement that gets no answer fail only the requests
in flight, and nothing of a failed transaction stays. Every test runs twice: with the compiled hot
path (the default, built with the package) and with the Python loop alone
(BENCHWRIGHT_COMPILED_LOOP=0), which also handles every error the compiled part hands back."""

from __future__ import annotations

import contextlib
import threading
import time
from typing import Any
from urllib.parse import urlsplit

import MySQLdb
import pytest

from benchwright.results import ResultDocument
from benchwright.runner.engine import PhaseConfig, run_phase
from tests.runner.conftest import Background, PrivateMariaDB, loop_build, mysql_session, ran_on
from tests.statuses import assert_honest, statuses_of

pytestmark = pytest.mark.servers

COMPILED = "event loop (MySQL client hot path in C)"


@pytest.fixture(autouse=True, params=["compiled", "python"])
def my_loop(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    return loop_build(request, monkeypatch, COMPILED)


def phase(workload: str, props: dict[str, str], name: str, **kw: Any) -> ResultDocument:
    config = PhaseConfig(workload, name, "mysql", props, seed=5, **{"threads": 1, "processes": 1, **kw})
    return run_phase(config)


def rows(url: str, sql: str) -> list[tuple[Any, ...]]:
    conn = mysql_session(url)
    try:
        cur = conn.cursor()
        cur.execute(sql)
        return [tuple(r) for r in cur.fetchall()]
    finally:
        conn.close()


TPCB_STATE = (
    "SELECT (SELECT sum(abalance) FROM pgbench_accounts), (SELECT sum(tbalance) FROM pgbench_tellers),"
    " (SELECT sum(bbalance) FROM pgbench_branches), (SELECT count(*) FROM pgbench_history)"
)
HISTORY = "SELECT tid, bid, aid, delta FROM pgbench_history ORDER BY tid, bid, aid, delta"
WHOLE = "SELECT (SELECT sum(abalance) FROM pgbench_accounts) = (SELECT coalesce(sum(delta), 0) FROM pgbench_history)"
BALANCED = (
    "SELECT (SELECT sum(abalance) FROM pgbench_accounts) = (SELECT sum(bbalance) FROM pgbench_branches)"
)


def test_oltp_on_the_loop_does_what_threads_do(mysql_url: str, my_loop: str) -> None:
    props = {"mysql.url": mysql_url, "oltp.tables": "2", "oltp.table_size": "500"}
    state = (
        "SELECT count(*), sum(k), md5(group_concat(id, ':', k ORDER BY id, k))"
        " FROM (SELECT * FROM sbtest1 UNION ALL SELECT * FROM sbtest2) t"
    )
    outcomes = []
    for model in ("threads", "auto"):
        phase("oltp", props, "load", threads=2)
        run = phase("oltp", {**props, "client.model": model}, "run", operation_count=60)
        assert ran_on(run, my_loop) == (model == "auto"), run.measurement.method
        outcomes.append(
            (run.operations["oltp_read_write"].statuses, run.extra["queries"], rows(mysql_url, state))
        )
    threads, loop = outcomes
    assert loop == threads
    assert loop[0] == {"OK": 60} and loop[1]["write"] == 60 * 4


@pytest.mark.parametrize("script", ["tpcb-like", "select-only"])
def test_tpcb_on_the_loop_does_what_threads_do(mysql_url: str, script: str, my_loop: str) -> None:
    props = {"mysql.url": mysql_url, "tpcb.script": script}
    outcomes = []
    for model in ("threads", "auto"):
        phase("tpcb", {"mysql.url": mysql_url}, "load", threads=2)
        run = phase("tpcb", {**props, "client.model": model}, "run", operation_count=150)
        assert ran_on(run, my_loop) == (model == "auto"), run.measurement.method
        outcomes.append(
            (run.operations[script].statuses, rows(mysql_url, TPCB_STATE), rows(mysql_url, HISTORY))
        )
    threads, loop = outcomes
    assert loop == threads
    assert loop[0] == {"OK": 150}
    if script == "tpcb-like":
        assert loop[1][0][3] == 150 and loop[1][0][0] == loop[1][0][1] == loop[1][0][2]


def open_transactions(url: str) -> list[tuple[Any, ...]]:
    """Open transactions of sessions on this test's database only: the server is shared with other
    tests and tools whose transactions are none of this test's business."""
    database = urlsplit(url).path.lstrip("/")
    return rows(
        url,
        "SELECT count(*) FROM information_schema.innodb_trx t JOIN information_schema.processlist p"
        f" ON p.id = t.trx_mysql_thread_id WHERE p.db = '{database}'",
    )


def test_a_server_error_mid_transaction_fails_it_rolls_it_back_and_the_next_one_starts_clean(
    mysql_url: str, my_loop: str
) -> None:
    """A trigger refuses every branch update, the 4th of tpcb-like's 7 statements: each transaction
    is one error, nothing it did stays, and the connections go on to the next transaction."""
    phase("tpcb", {"mysql.url": mysql_url}, "load", threads=2)
    conn = mysql_session(mysql_url)
    conn.cursor().execute(
        "CREATE TRIGGER refuse BEFORE UPDATE ON pgbench_branches FOR EACH ROW"
        " SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'branch updates refused'"
    )
    before = rows(mysql_url, TPCB_STATE)
    try:
        run = phase("tpcb", {"mysql.url": mysql_url}, "run", threads=3, operation_count=30)
    finally:
        conn.cursor().execute("DROP TRIGGER refuse")
        conn.close()
    assert ran_on(run, my_loop), run.measurement.method
    assert "tpcb-like" not in run.operations  # nothing succeeded: no throughput entry at all
    assert run.operations["tpcb-like-FAILED"].statuses == {"ERROR": 30}
    assert run.operations_total == 0 and run.throughput == 0 and run.failed_total == 30
    assert run.error_rate == 1.0
    assert_honest(run)
    assert list(run.extra["error_kinds"].values()) == [30]
    assert rows(mysql_url, TPCB_STATE) == before
    assert open_transactions(mysql_url) == [(0,)]


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


def test_sessions_killed_mid_transaction_fail_those_only_and_the_run_goes_on(
    mysql_url: str, my_loop: str
) -> None:
    phase("tpcb", {"mysql.url": mysql_url}, "load", threads=2)
    database = urlsplit(mysql_url).path.lstrip("/")
    killed_at: list[int] = []

    def kill() -> None:
        wait_for_history(mysql_url, 100)
        conn = mysql_session(mysql_url)
        try:
            cur = conn.cursor()
            cur.execute(
                "SELECT id FROM information_schema.processlist WHERE db = %s AND id <> CONNECTION_ID()",
                (database,),
            )
            for (session,) in cur.fetchall():
                # a session that ended between the listing and its KILL: nothing to kill
                with contextlib.suppress(MySQLdb.OperationalError):
                    cur.execute(f"KILL CONNECTION {int(session)}")
        finally:
            conn.close()
        killed_at.append(history(mysql_url))

    killer = Background(kill)
    killer.start()
    run = phase("tpcb", {"mysql.url": mysql_url}, "run", threads=3, operation_count=COUNT, max_seconds=120)
    killer.join()
    assert ran_on(run, my_loop) and not run.aborted, run.measurement.method
    done = statuses_of(run.operations, "tpcb-like")
    assert 1 <= done.get("ERROR", 0) <= 3  # at most the transaction in flight on each session
    assert run.extra["error_kinds"] == {"tpcb-like:ConnectionError": done["ERROR"]}
    assert done["OK"] + done["ERROR"] == COUNT
    assert run.operations_total == done["OK"] and run.failed_total == done["ERROR"]  # throughput: successes
    assert_honest(run)
    # A session killed after its COMMIT reached the server but before the answer came back counts
    # as failed although it committed (its outcome is unknown to any client): so the history has
    # one row per committed transaction plus at most one per failed one.
    committed = history(mysql_url)
    assert done["OK"] <= committed <= done["OK"] + done["ERROR"]
    assert committed - killed_at[0] >= 100  # and on it went on new sessions
    # a transaction cut off part-way left nothing behind: every history row's delta is in the balances
    assert rows(mysql_url, WHOLE) == [(1,)]
    assert rows(mysql_url, BALANCED) == [(1,)]


@pytest.mark.slow
def test_server_killed_mid_transaction_ends_with_a_flagged_partial_result(
    private_mariadb: PrivateMariaDB, my_loop: str
) -> None:
    """A mariadbd of the test's own (127.0.0.1, a free port) killed once 100 transactions have
    committed: the transactions in flight fail as lost connections, the reconnects fail, and the
    loop gives up after a few seconds of nothing but failures, the result partial and flagged."""
    url = private_mariadb.url
    props = {"mysql.url": url, "mysql.connect_timeout": "2"}
    phase("tpcb", props, "load", threads=2)

    def kill() -> None:
        wait_for_history(url, 100)
        private_mariadb.kill()

    killer = Background(kill)
    killer.start()
    run = phase("tpcb", props, "run", threads=2, max_seconds=120)
    killer.join()
    assert ran_on(run, my_loop), run.measurement.method
    assert run.aborted and any(f.code == "server_lost" for f in run.validity)
    done = statuses_of(run.operations, "tpcb-like")
    # 100 commits were on the server when it was killed; a commit whose reply died with it is a
    # lost connection to the client (one per thread at most), so at least 100 - 2 are OK.
    assert done["OK"] >= 100 - 2 and done["ERROR"] >= 2
    assert set(run.extra["error_kinds"]) <= {"tpcb-like:ConnectionError", "tpcb-like:TargetUnreachable"}
    assert run.operations_total == done["OK"] and run.failed_total == done["ERROR"]
    assert_honest(run)
    assert run.runtime_ms < 60_000  # it gave up after seconds of failures, not at the deadline


def test_a_statement_that_gets_no_answer_is_a_timeout_and_the_run_goes_on(
    mysql_url: str, my_loop: str
) -> None:
    """Row locks held elsewhere on every branch: each transaction waits at its branch update (the
    4th statement); past mysql.timeout it fails as a TimeoutError and its session is replaced.
    Once the locks go, transactions commit again, and nothing of a failed one stays."""
    phase("tpcb", {"mysql.url": mysql_url}, "load", threads=2)
    props = {"mysql.url": mysql_url, "mysql.timeout": "0.3"}
    blocker = mysql_session(mysql_url)
    released = threading.Event()
    released_at: list[int] = []

    def hold() -> None:
        cur = blocker.cursor()
        try:
            wait_for_history(mysql_url, 100)
            cur.execute("BEGIN")
            cur.execute("SELECT * FROM pgbench_branches FOR UPDATE")
            cur.fetchall()
            deadline = time.monotonic() + 1.0
            while time.monotonic() < deadline and not released.is_set():
                released.wait(0.05)  # the fault lasts 1 s: well under the 3 s give-up
        finally:
            blocker.rollback()
        released_at.append(history(mysql_url))

    holder = Background(hold)
    holder.start()
    try:
        run = phase("tpcb", props, "run", threads=2, operation_count=COUNT, max_seconds=120)
    finally:
        released.set()
        holder.join()
        blocker.close()
    assert ran_on(run, my_loop) and not run.aborted, run.measurement.method
    kinds = run.extra["error_kinds"]
    assert kinds.get("tpcb-like:TimeoutError", 0) >= 2
    assert set(kinds) <= {"tpcb-like:TimeoutError", "tpcb-like:ConnectionError"}
    # the 0.3 s a timed-out transaction waited is in the failures' own latencies
    assert run.operations["tpcb-like-FAILED"].max_us >= 300_000
    done = statuses_of(run.operations, "tpcb-like")
    assert sum(kinds.values()) == done["ERROR"]
    assert_honest(run)
    committed = history(mysql_url)
    assert committed - released_at[0] >= 100  # committing again after the locks
    # A statement overdue at its COMMIT (a loaded server can take 0.3 s over one) may have committed
    # after the client gave up on it: one history row per committed transaction, plus at most one per
    # failed one, and every row's delta is in the balances.
    assert done["OK"] <= committed <= done["OK"] + done.get("ERROR", 0)
    assert rows(mysql_url, WHOLE) == [(1,)]
    assert rows(mysql_url, BALANCED) == [(1,)]


def test_single_statements_refused_by_the_server_are_named_as_mysqlclient_names_them(
    mysql_url: str, my_loop: str
) -> None:
    """Statements on their own (autocommit), some refused: each refusal fails that request only,
    under the exception class mysqlclient raises for it on a thread (the compiled part hands the
    error reply back unread for exactly that), and the connection's next statements succeed."""
    from benchwright.runner.drivers.mysql import MySQLDriver
    from benchwright.runner.event_loop import Connection
    from benchwright.runner.event_loop_my import MyEventLoop
    from benchwright.runner.measure import Recorder

    driver = MySQLDriver({"mysql.url": mysql_url})
    driver.connect()
    ok, missing, unfinished = b"SELECT 1", b"SELECT * FROM no_such_table", b"SELECT 1 FROM DUAL WHERE"
    script = [ok, missing, ok, unfinished, ok, ok, missing, ok]
    requests = iter([("q", sql, 1, None) for sql in script])
    conn = Connection(driver.event_loop_channel, driver.recover, requests, len(script))
    recorder = Recorder(time.perf_counter_ns(), "service_time")
    errors: dict[str, int] = {}
    deadline = time.perf_counter_ns() + 30 * 1_000_000_000
    loop = MyEventLoop([conn], recorder, deadline, threading.Event(), errors, 10.0)
    assert loop.model == my_loop
    assert loop.run() is None
    recorder.flush()
    assert recorder.ops["q"].statuses == {"OK": 5}  # the refused ones are q-FAILED, never throughput
    assert recorder.ops["q-FAILED"].statuses == {"ERROR": 3}
    assert recorder.ops["q-FAILED"].histogram.get_total_count() == 3
    assert recorder.total_operations() == 5
    assert errors == {"q:ProgrammingError": 3}  # what cursor.execute raises for both, on a thread
    on_a_thread = mysql_session(mysql_url)
    try:
        for sql in (missing, unfinished):
            with pytest.raises(MySQLdb.ProgrammingError):
                on_a_thread.cursor().execute(sql.decode())
    finally:
        on_a_thread.close()
        driver.close()
