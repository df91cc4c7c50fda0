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
