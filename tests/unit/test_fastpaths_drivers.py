"""The drivers' fast paths against real servers: same bytes on the wire as redis-py, same results and
the same exception types as before (server errors, a dropped connection, a timeout), and recovery."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
import redis

from benchwright.runner.drivers.postgres import PostgresDriver
from benchwright.runner.drivers.redis import RedisDriver, encode_command
from benchwright.runner.measure import Status


# ---------------------------------------------------------------- Redis
@pytest.mark.parametrize(
    "args",
    [
        ("GET", "user1"),
        (b"SET", b"key:000000000042", b"x" * 3),
        ("HSET", "k", "FIELD0", "caf\u00e9", "FIELD1", ""),
        ("ZADD", "z", 0, "m", -7, "n", 12345678901234),
        ("SET", "big", "v" * 70_000),
    ],
)
def test_encoded_commands_are_what_redis_py_would_send(args: tuple[bytes | str | int, ...]) -> None:
    conn = redis.Connection()
    assert encode_command(args) == b"".join(conn.pack_command(*args))


def test_arguments_of_other_types_are_left_to_redis_py(redis_props: dict[str, str]) -> None:
    assert encode_command(("SET", "k", 1.5)) is None
    assert encode_command(("SET", "k", True)) is None
    driver = RedisDriver(redis_props)
    driver.connect()
    try:
        driver.command("SET", "fp:float", 1.5)
        assert driver.command("GET", "fp:float") == b"1.5"
        with pytest.raises(redis.DataError):
            driver.command("SET", "fp:bool", True)  # redis-py refuses booleans; so do we
    finally:
        driver.close()


def test_redis_key_value_operations_and_server_errors(redis_props: dict[str, str]) -> None:
    driver = RedisDriver({**redis_props, "redis.datatype": "string"})
    driver.connect()
    try:
        assert driver.insert("usertable", "user1", {"field0": "v" * 100}) is Status.OK
        assert driver.read("usertable", "user1", None) is Status.OK
        assert driver.read("usertable", "nobody", None) is Status.NOT_FOUND
        driver.command("HSET", "fp:hash", "a", "1")
        with pytest.raises(redis.ResponseError, match="WRONGTYPE"):
            driver.command("GET", "fp:hash")
        with pytest.raises(redis.ResponseError, match="WRONGTYPE"):
            driver.pipeline([("SET", "fp:p1", "1"), ("GET", "fp:hash"), ("SET", "fp:p2", "2")])
        # every reply of the failed pipeline was consumed: the connection is in step
        assert driver.command("MGET", "fp:p1", "fp:p2") == [b"1", b"2"]
        assert driver.command("PING") == b"PONG"
    finally:
        driver.close()


def test_commands_sent_already_encoded_read_every_reply_even_after_an_error(
    redis_props: dict[str, str],
) -> None:
    driver = RedisDriver(redis_props)
    driver.connect()
    try:
        one = [encode_command(c) for c in (("SET", "enc:s", "v"), ("INCR", "enc:s"), ("GET", "enc:s"))]
        assert driver.send_encoded(one[0], 1) == b"OK"
        assert driver.send_encoded(one[2], 1) == b"v"
        with pytest.raises(redis.ResponseError, match="not an integer"):
            driver.send_encoded(b"".join(c for c in one if c), 3)
        assert driver.command("PING") == b"PONG"  # the GET's reply was read, not left for the next call
        assert driver.send_encoded(b"".join([one[2] or b""] * 4), 4) == [b"v"] * 4
    finally:
        driver.close()


def test_dropped_redis_connection_raises_connection_error_then_recovers(redis_props: dict[str, str]) -> None:
    driver = RedisDriver(redis_props)
    driver.connect()
    admin = redis.Redis(
        host=redis_props["redis.host"],
        port=int(redis_props["redis.port"]),
        password=redis_props["redis.password"],
    )
    try:
        driver.command("SET", "fp:survives", "yes")
        admin.client_kill_filter(_id=int(driver.command("CLIENT", "ID")))
        with pytest.raises(redis.ConnectionError):
            driver.command("GET", "fp:survives")
        driver.recover()
        assert driver.command("GET", "fp:survives") == b"yes"  # reconnected to the same logical db
    finally:
        driver.close()
        admin.close()


@pytest.fixture
def own_redis(tmp_path: Path) -> Iterator[dict[str, str]]:
    """A redis-server of this test's own (it gets paused), on a free loopback port."""
    binary = shutil.which("redis-server")
    assert binary, "redis-server missing: scripts/local-servers install"
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(
        [binary, "--bind", "127.0.0.1", "--port", str(port), "--dir", str(tmp_path), "--save", ""],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise
                time.sleep(0.05)  # readiness probe of a server we just started
        yield {"redis.host": "127.0.0.1", "redis.port": str(port)}
    finally:
        proc.kill()
        proc.wait()


def test_stalled_redis_raises_timeout_error_then_recovers(own_redis: dict[str, str]) -> None:
    driver = RedisDriver({**own_redis, "redis.timeout": "0.3"})
    driver.connect()
    admin = redis.Redis(host="127.0.0.1", port=int(own_redis["redis.port"]))
    try:
        admin.execute_command("CLIENT", "PAUSE", "5000", "ALL")
        with pytest.raises(redis.TimeoutError):
            driver.command("GET", "k")  # the kernel's receive timeout ends the wait
        admin.execute_command("CLIENT", "UNPAUSE")
        driver.recover()
        assert driver.command("PING") == b"PONG"
    finally:
        admin.execute_command("CLIENT", "UNPAUSE")
        driver.close()
        admin.close()


# ---------------------------------------------------------------- PostgreSQL
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
