"""The Redis driver (runner/drivers/redis.py) against real servers: the same bytes on the wire as
redis-py, the same results and exception types (server errors, a dropped connection, a timeout), and
recovery. Tests that take ``redis_props`` are marked ``servers`` by tests/conftest.py."""

from __future__ import annotations

import subprocess

import pytest
import redis

from benchwright.runner.drivers.redis import RedisDriver
from benchwright.runner.drivers.resp import encode_command
from benchwright.runner.measure import Status


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


def test_stalled_redis_raises_timeout_error_then_recovers(
    private_redis: tuple[subprocess.Popen[bytes], dict[str, str]],
) -> None:
    _, props = private_redis  # a server of this test's own: it gets paused
    driver = RedisDriver({**props, "redis.timeout": "0.3"})
    driver.connect()
    admin = redis.Redis(host="127.0.0.1", port=int(props["redis.port"]))
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
