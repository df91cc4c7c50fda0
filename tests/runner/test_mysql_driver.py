"""The MySQL/MariaDB driver against the real local MariaDB: SQL and key-value calls, the password
from the environment, clear connection errors, reconnecting after a lost connection, and lock
waits / deadlocks classified as RETRY."""

from __future__ import annotations

import threading
import time

import MySQLdb
import pytest

from benchwright.errors import SpecError, TargetUnreachable
from benchwright.runner.drivers import capabilities, new_driver
from benchwright.runner.drivers.base import Capability
from benchwright.runner.drivers.mysql import MySQLDriver, parse_url
from benchwright.runner.engine import ERROR_ABORT_S, PhaseConfig, run_phase
from benchwright.runner.measure import Status
from tests.conftest import MYSQL_PORT
from tests.runner.conftest import PrivateMariaDB
from tests.statuses import assert_honest, statuses_of

pytestmark = pytest.mark.servers


@pytest.fixture
def driver(mysql_url: str):
    d = MySQLDriver({"mysql.url": mysql_url})
    d.connect()
    yield d
    d.close()


def test_engine_mysql_offers_key_value_and_sql() -> None:
    assert capabilities("mysql") == frozenset({Capability.KEY_VALUE, Capability.SQL})
    assert isinstance(new_driver("mysql", {"mysql.url": "mysql://u:p@h:1/db"}), MySQLDriver)


def test_statements_transactions_and_table_exists(driver: MySQLDriver) -> None:
    driver.execute("CREATE TABLE t_sql (id INT PRIMARY KEY, v VARCHAR(10))")
    assert driver.table_exists("t_sql") and not driver.table_exists("t_absent")
    driver.executemany("INSERT INTO t_sql VALUES (%s, %s)", [(1, "a"), (2, "b"), (3, "100%")])
    assert driver.fetchall("SELECT id, v FROM t_sql ORDER BY id") == [(1, "a"), (2, "b"), (3, "100%")]
    assert driver.fetchone("SELECT v FROM t_sql WHERE id = %s", (2,)) == ("b",)
    assert driver.fetchone("SELECT v FROM t_sql WHERE id = %s", (9,)) is None
    driver.begin()
    assert driver.execute("UPDATE t_sql SET v = %s WHERE id > %s", ("z", 1)) == 2
    driver.rollback()
    driver.begin()
    driver.execute("DELETE FROM t_sql WHERE id = %s", (1,))
    driver.commit()
    assert driver.fetchall("SELECT id, v FROM t_sql ORDER BY id") == [(2, "b"), (3, "100%")]
    assert "MariaDB" in (driver.server_version() or "") or (driver.server_version() or "")[0].isdigit()


def test_statements_skip_the_cursor_yet_quote_and_count_as_it_does(driver: MySQLDriver) -> None:
    from decimal import Decimal

    driver.execute("CREATE TABLE t_fast (id INT PRIMARY KEY, v VARCHAR(40), n DECIMAL(6,2)) CHARSET utf8mb4")
    tricky = "it's a \\ back'slash \"quote\" caf\u00e9 \U0001f600 %s"
    insert = "INSERT INTO t_fast (id, v, n) VALUES (%s, %s, %s)"
    assert driver.execute(insert, (1, tricky, None)) == 1
    assert driver.execute(insert, (2, "b", Decimal("1.25"))) == 1  # a Decimal: the cursor's path
    assert driver.fetchall("SELECT v, n FROM t_fast ORDER BY id") == [(tricky, None), ("b", Decimal("1.25"))]
    assert driver.execute("UPDATE t_fast SET v = %s WHERE id > %s", ("z", 0)) == 2  # rows changed
    assert driver.execute("UPDATE t_fast SET v = %s WHERE id > %s", ("z", 0)) == 0  # as the cursor says
    assert driver.fetch_count("SELECT v FROM t_fast WHERE id >= %s", (1,)) == 2
    assert driver.fetch_count("SELECT v FROM t_fast WHERE v LIKE 'z%%' AND id = %s", (2,)) == 1
    assert driver.execute("SELECT id FROM t_fast WHERE id = %s", (2,)) == 1  # a SELECT counts its rows
    with pytest.raises(MySQLdb.ProgrammingError):
        driver.execute("SELECT %s, %s", (1,))
    with pytest.raises(MySQLdb.IntegrityError) as caught:
        driver.execute(insert, (1, "dup", None))
    assert caught.value.args[0] == 1062 and driver.classify(caught.value) is Status.ERROR
    driver.execute("CREATE PROCEDURE p_fast(IN x INT) SELECT x, x + 1")
    assert driver.execute("CALL p_fast(%s)", (4,)) == 1  # a row set, then CALL's own status
    assert driver.fetch_count("CALL p_fast(%s)", (5,)) == 1
    driver.begin()  # nothing was left unread: a transaction still works
    assert driver.execute("DELETE FROM t_fast WHERE id = %s", (2,)) == 1
    driver.rollback()
    assert driver.fetch_count("SELECT 1 FROM t_fast", ()) == 2


def test_key_value_calls_follow_ycsb_semantics(driver: MySQLDriver) -> None:
    driver.create_table("usertable", 2, drop=True)
    assert driver.insert("usertable", "user1", {"FIELD0": "a", "FIELD1": "b"}) is Status.OK
    assert driver.read("usertable", "user1", ["FIELD0"]) is Status.OK
    assert driver.read("usertable", "nobody", None) is Status.NOT_FOUND
    # MySQL counts changed rows: an update to the same value still finds the row.
    assert driver.update("usertable", "user1", {"FIELD0": "a"}) is Status.OK
    assert driver.update("usertable", "nobody", {"FIELD0": "x"}) is Status.NOT_FOUND
    assert driver.scan("usertable", "user0", 10, None) is Status.OK
    assert driver.count("usertable") == 1
    assert driver.delete("usertable", "user1") is Status.OK
    assert driver.delete("usertable", "user1") is Status.NOT_FOUND


def test_password_comes_from_the_environment_when_set(
    mysql_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    without = mysql_url.replace("bench:bench@", "bench@")
    monkeypatch.setenv("BENCHWRIGHT_DB_PASSWORD", "bench")
    d = MySQLDriver({"mysql.url": without})
    d.connect()
    assert d.fetchone("SELECT 1") == (1,)
    d.close()
    monkeypatch.setenv("BENCHWRIGHT_DB_PASSWORD", "wrong-secret")
    with pytest.raises(TargetUnreachable) as err:
        MySQLDriver({"mysql.url": without}).connect()
    assert err.value.host == f"127.0.0.1:{MYSQL_PORT}" and "Access denied" in err.value.cause
    assert "wrong-secret" not in str(err.value)


def test_unreachable_port_names_the_host() -> None:
    d = MySQLDriver({"mysql.url": "mysql://bench:bench@127.0.0.1:1/bench", "mysql.connect_timeout": "2"})
    with pytest.raises(TargetUnreachable) as err:
        d.connect()
    assert str(err.value).startswith("127.0.0.1:1: ")


@pytest.mark.parametrize(
    ("url", "message"),
    [("postgresql://u@h/db", "scheme"), ("mysql://u@h:xx/db", "port"), ("mysql://u@h:1/", "no database")],
    ids=["wrong-scheme", "bad-port", "no-database"],
)
def test_bad_urls_name_the_property(url: str, message: str) -> None:
    with pytest.raises(SpecError) as err:
        parse_url(url)
    assert err.value.field == "mysql.url" and message in str(err.value)
    with pytest.raises(SpecError) as missing:
        MySQLDriver({})
    assert missing.value.field == "mysql.url"


def test_recover_reconnects_after_the_server_killed_the_connection(
    driver: MySQLDriver, mysql_url: str
) -> None:
    conn_id = driver.fetchone("SELECT CONNECTION_ID()")[0]
    killer = MySQLDriver({"mysql.url": mysql_url})
    killer.connect()
    killer.execute(f"KILL CONNECTION {int(conn_id)}")
    killer.close()
    with pytest.raises(MySQLdb.OperationalError) as lost:
        driver.fetchone("SELECT 1")
    assert driver.is_connection_lost(lost.value) and driver.classify(lost.value) is Status.ERROR
    driver.recover()
    assert driver.fetchone("SELECT 1") == (1,)
    assert driver.fetchone("SELECT CONNECTION_ID()") != (conn_id,)


def test_lock_wait_timeout_and_deadlock_are_retry(mysql_url: str) -> None:
    a, b = MySQLDriver({"mysql.url": mysql_url}), MySQLDriver({"mysql.url": mysql_url})
    a.connect()
    b.connect()
    try:
        a.execute("CREATE TABLE t_lock (id INT PRIMARY KEY, v INT)")
        a.execute("INSERT INTO t_lock VALUES (1, 0), (2, 0)")
        b.execute("SET SESSION innodb_lock_wait_timeout = 1")
        a.begin()
        a.execute("UPDATE t_lock SET v = 1 WHERE id = 1")
        b.begin()
        with pytest.raises(MySQLdb.OperationalError) as wait:
            b.execute("UPDATE t_lock SET v = 2 WHERE id = 1")
        assert wait.value.args[0] == 1205 and b.classify(wait.value) is Status.RETRY
        b.rollback()
        a.rollback()

        # A real deadlock: each transaction holds one row and asks for the other's.
        b.execute("SET SESSION innodb_lock_wait_timeout = 20")
        a.begin()
        b.begin()
        a.execute("UPDATE t_lock SET v = 1 WHERE id = 1")
        b.execute("UPDATE t_lock SET v = 2 WHERE id = 2")
        errors: list[BaseException] = []

        def a_wants_row_2() -> None:
            try:
                a.execute("UPDATE t_lock SET v = 1 WHERE id = 2")
            except MySQLdb.OperationalError as exc:
                errors.append(exc)

        t = threading.Thread(target=a_wants_row_2)
        t.start()
        # b waits on a's row 1 while a waits on b's row 2: InnoDB kills one of them at once.
        try:
            b.execute("UPDATE t_lock SET v = 2 WHERE id = 1")
        except MySQLdb.OperationalError as exc:
            errors.append(exc)
        t.join(30)
        assert [e.args[0] for e in errors] == [1213]
        assert a.classify(errors[0]) is Status.RETRY
        a.rollback()
        b.rollback()
    finally:
        a.close()
        b.close()


# ---------------------------------------------------------------- a private server, restarted mid-run
@pytest.mark.slow
def test_server_restarted_mid_run_errors_are_counted_and_the_run_finishes(
    private_mariadb: PrivateMariaDB,
) -> None:
    props = {
        "mysql.url": private_mariadb.url,
        "oltp.test": "point_select",
        "oltp.table_size": "1000",
        "mysql.connect_timeout": "2",
    }
    run_phase(PhaseConfig(workload="oltp", phase="load", engine="mysql", properties=props, processes=1))
    restarted = threading.Event()
    downtime: list[float] = []

    def restart() -> None:
        down = time.monotonic()
        private_mariadb.kill()
        private_mariadb.start()
        downtime.append(time.monotonic() - down)
        restarted.set()

    def restart_when_running(elapsed: float, ops: int, rate: float) -> None:
        if ops > 200 and not restarted.is_set() and not getattr(restart_when_running, "started", False):
            restart_when_running.started = True  # type: ignore[attr-defined]
            threading.Thread(target=restart, daemon=True).start()

    doc = run_phase(
        PhaseConfig(
            workload="oltp",
            phase="run",
            engine="mysql",
            properties=props,
            threads=2,
            processes=1,
            max_seconds=8,
        ),
        progress=restart_when_running,
    )
    assert restarted.wait(60), "the restart never happened"
    statuses = statuses_of(doc.operations, "oltp_point_select")
    assert statuses.get("ERROR", 0) > 0 and statuses.get("OK", 0) > 200
    # the failed selects are oltp_point_select-FAILED: counted apart, never throughput
    assert doc.failed_total == statuses["ERROR"] and doc.operations_total == statuses["OK"]
    assert doc.operations["oltp_point_select"].operations == statuses["OK"]
    assert_honest(doc)
    assert sum(s.errors for s in doc.intervals) == statuses["ERROR"]  # every failure in its interval
    assert any(f.code == "error_rate" for f in doc.validity)
    if downtime[0] < ERROR_ABORT_S - 0.5:
        # A short outage: the driver reconnected after the restart and the run went on to its end.
        assert not doc.aborted
    elif downtime[0] > 2 * ERROR_ABORT_S:  # far longer than the engine waits on a dead server
        assert doc.aborted
    # A slow restart on a busy host (near ERROR_ABORT_S either outcome is right: the engine's clock
    # starts at the first failed operation, ours at the kill, and the reconnect comes after the port
    # opens): whichever happened, the document must say so consistently.
    if doc.aborted:  # the engine gave up on a dead server: partial and flagged
        assert any(f.code == "server_lost" for f in doc.validity)
    else:  # reconnected: the run went on to its end, the last interval clean
        assert not any(f.code == "server_lost" for f in doc.validity)
        assert doc.intervals[-1].errors == 0 and sum(doc.intervals[-1].operations.values()) > 0
