"""The PostgreSQL driver (runner/drivers/postgres.py) against the local server: key-value
operations, prepared SQL statements, psycopg's exception types kept, and recovery after the session
is terminated."""

from __future__ import annotations

from collections.abc import Iterator

import psycopg
import pytest

from benchwright.runner.drivers.postgres import PostgresDriver
from benchwright.runner.measure import Status

pytestmark = pytest.mark.servers


@pytest.fixture
def pg_driver(pg_url: str) -> Iterator[PostgresDriver]:
    driver = PostgresDriver({"postgres.url": pg_url})
    driver.connect()
    driver.create_table("fp_usertable", 2, drop=True)
    yield driver
    driver.close()


def test_postgres_key_value_operations(pg_driver: PostgresDriver) -> None:
    d = pg_driver
    table = "fp_usertable"
    assert d.insert(table, "user1", {"FIELD0": "a", "FIELD1": "b"}) is Status.OK
    assert d.insert(table, "user2", {"FIELD0": "c", "FIELD1": "d"}) is Status.OK
    assert d.read(table, "user1", None) is Status.OK
    assert d.read(table, "user1", ["FIELD1"]) is Status.OK
    assert d.read(table, "nobody", None) is Status.NOT_FOUND
    assert d.update(table, "user2", {"FIELD1": "z"}) is Status.OK
    assert d.update(table, "nobody", {"FIELD1": "z"}) is Status.NOT_FOUND
    assert d.fetchall(f"SELECT field1 FROM {table} WHERE ycsb_key = %s", ("user2",)) == [("z",)]
    assert d.scan(table, "user1", 10, None) is Status.OK
    assert d.delete(table, "user1") is Status.OK
    assert d.delete(table, "user1") is Status.NOT_FOUND
    assert d.count(table) == 1


def test_postgres_errors_keep_psycopg_types(pg_driver: PostgresDriver) -> None:
    d = pg_driver
    d.insert("fp_usertable", "dup", {"FIELD0": "a", "FIELD1": "b"})
    with pytest.raises(psycopg.errors.UniqueViolation) as caught:
        d.insert("fp_usertable", "dup", {"FIELD0": "a", "FIELD1": "b"})
    assert d.classify(caught.value) is Status.ERROR
    assert d.read("fp_usertable", "dup", None) is Status.OK  # autocommit: nothing left aborted


def test_terminated_postgres_session_raises_then_recovers(pg_driver: PostgresDriver, pg_url: str) -> None:
    d = pg_driver
    d.insert("fp_usertable", "kept", {"FIELD0": "a", "FIELD1": "b"})
    assert d.read("fp_usertable", "kept", None) is Status.OK  # prepared on this session
    pid = d.fetchone("SELECT pg_backend_pid()")
    assert pid is not None
    with psycopg.connect(pg_url, autocommit=True) as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", (pid[0],))
    with pytest.raises(psycopg.OperationalError):
        d.read("fp_usertable", "kept", None)
    d.recover()
    assert d.read("fp_usertable", "kept", None) is Status.OK  # new session, statement prepared again


# ---------------------------------------------------------------- PostgreSQL SQL statements
def _server_statements(d: PostgresDriver) -> dict[str, str]:
    """The driver's own prepared statements on the server (psycopg's are named _pg3_*)."""
    rows = d.fetchall("SELECT name, statement FROM pg_prepared_statements WHERE name LIKE 'bw%%'")
    return {str(name): str(statement) for name, statement in rows}


@pytest.fixture
def accounts(pg_driver: PostgresDriver) -> PostgresDriver:
    pg_driver.execute("DROP TABLE IF EXISTS fp_accounts")
    pg_driver.execute("CREATE TABLE fp_accounts (aid int PRIMARY KEY, abalance int, note text)")
    pg_driver.execute("INSERT INTO fp_accounts SELECT g, 0, NULL FROM generate_series(1, 10) g")
    return pg_driver


def test_sql_with_int_str_and_null_parameters_runs_as_a_prepared_statement(accounts: PostgresDriver) -> None:
    d = accounts
    update = "UPDATE fp_accounts SET abalance = abalance + %s, note = %s WHERE aid <= %s"
    assert d.execute(update, (5, "caf\u00e9", 3)) == 3  # affected rows, as psycopg's rowcount
    assert d.execute(update, (-2, None, 1)) == 1
    assert d.fetch_count("SELECT abalance FROM fp_accounts WHERE aid <= %s", (4,)) == 4
    assert d.fetch_count("SELECT abalance FROM fp_accounts WHERE aid = %s", (99,)) == 0
    assert d.fetchall("SELECT aid, abalance, note FROM fp_accounts WHERE aid <= 3 ORDER BY aid") == [
        (1, 3, None),
        (2, 5, "caf\u00e9"),
        (3, 5, "caf\u00e9"),
    ]
    statements = set(_server_statements(d).values())
    assert "UPDATE fp_accounts SET abalance = abalance + $1, note = $2 WHERE aid <= $3" in statements
    assert "SELECT abalance FROM fp_accounts WHERE aid <= $1" in statements


def test_sql_parameters_that_need_adaptation_go_through_psycopg(accounts: PostgresDriver) -> None:
    from decimal import Decimal

    d = accounts
    d.execute("ALTER TABLE fp_accounts ADD COLUMN amount numeric, ADD COLUMN blob bytea")
    assert (
        d.execute(
            "UPDATE fp_accounts SET amount = %s, blob = %s WHERE aid = %s", (Decimal("1.25"), b"\x00\xff", 1)
        )
        == 1
    )
    assert d.fetchall("SELECT amount, blob FROM fp_accounts WHERE aid = 1") == [
        (Decimal("1.25"), b"\x00\xff")
    ]
    assert d.fetch_count("SELECT 1 WHERE 'a%%b' = %s", ("a%b",)) == 1  # psycopg's %% escape
    assert not any("amount" in s or "a%" in s for s in _server_statements(d).values())


def test_a_statement_the_server_cannot_type_leaves_the_transaction_usable(accounts: PostgresDriver) -> None:
    d = accounts
    d.begin()
    assert d.execute("UPDATE fp_accounts SET abalance = %s WHERE aid = %s", (42, 7)) == 1
    assert d.fetch_count("SELECT %s + %s", (1, 2)) == 1  # unknown + unknown: psycopg's typed path
    assert d.fetchall("SELECT %s + %s", (1, 2)) == [(3,)]
    d.commit()
    assert d.fetchall("SELECT abalance FROM fp_accounts WHERE aid = 7") == [(42,)]


def test_sql_errors_keep_psycopg_types_and_a_transaction_rolls_back(accounts: PostgresDriver) -> None:
    d = accounts
    insert = "INSERT INTO fp_accounts (aid, abalance) VALUES (%s, %s)"
    d.begin()
    assert d.execute(insert, (11, 1)) == 1
    with pytest.raises(psycopg.errors.UniqueViolation):
        d.execute(insert, (1, 1))
    d.rollback()
    assert d.fetch_count("SELECT 1 FROM fp_accounts WHERE aid = %s", (11,)) == 0
    assert d.execute(insert, (11, 1)) == 1  # the statement is still prepared on this session


def test_sql_on_a_terminated_session_raises_then_recovers(accounts: PostgresDriver, pg_url: str) -> None:
    d = accounts
    select = "SELECT abalance FROM fp_accounts WHERE aid = %s"
    assert d.fetch_count(select, (1,)) == 1
    pid = d.fetchone("SELECT pg_backend_pid()")
    assert pid is not None
    with psycopg.connect(pg_url, autocommit=True) as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", (pid[0],))
    with pytest.raises(psycopg.OperationalError):
        d.fetch_count(select, (1,))
    d.recover()
    assert d.fetch_count(select, (1,)) == 1
    assert select.replace("%s", "$1") in _server_statements(d).values()
