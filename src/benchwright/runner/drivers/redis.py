"""Redis-protocol driver (Redis, Valkey, ElastiCache, MemoryDB, Tair, ARDB ...) on redis-py + hiredis.

Each thread owns one ``redis.Connection`` and talks to it directly (send + read), skipping the
connection pool: the per-command cost is then hiredis parsing plus one socket round trip.

``redis.datatype`` picks how a YCSB record is stored, the five groups users compare on Tair:

    hash    HSET key FIELD0 v0 ... (YCSB's own redis binding layout)
    string  SET key v              (needs fieldcount=1)
    list    RPUSH key v0 v1 ...    (update: LSET of the chosen field's index)
    set     SADD key v0 v1 ...     (update: SPOP one member + SADD the new value, cardinality kept)
    zset    ZADD key 0 v0 1 v1 ... (score = field index; update replaces the member with that score)

Scans walk a lexicographic index (a sorted set ``<table>:index`` of all keys, scores 0), kept for
hash and string records; list, set and zset records cannot be range-scanned and are refused up front.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import redis

from benchwright.errors import SpecError, TargetUnreachable
from benchwright.runner.drivers.base import Capability, KeyValueDriver, RedisCommandsDriver
from benchwright.runner.measure import Status

DATATYPES = ("hash", "string", "list", "set", "zset")
SCANNABLE = ("hash", "string")


def truthy(value: str | None) -> bool:
    return str(value).lower() in ("1", "true", "yes", "on")


class RedisDriver(KeyValueDriver, RedisCommandsDriver):
    engine: ClassVar[str] = "redis"
    capabilities: ClassVar[frozenset[Capability]] = frozenset({Capability.KEY_VALUE, Capability.REDIS})

    def __init__(self, properties: Mapping[str, str], thread_index: int = 0) -> None:
        super().__init__(properties, thread_index)
        self.host = properties.get("redis.host", "127.0.0.1")
        try:
            self.port = int(properties.get("redis.port", "6379"))
            self.db = int(properties.get("redis.db", "0"))
        except ValueError as exc:
            raise SpecError("redis.port", f"not an integer: {exc}") from None
        self.datatype = properties.get("redis.datatype", "hash")
        if self.datatype not in DATATYPES:
            raise SpecError("redis.datatype", f"{self.datatype!r} is not one of {', '.join(DATATYPES)}")
        password = os.environ.get("BENCHWRIGHT_DB_PASSWORD") or properties.get("redis.password") or None
        kwargs: dict[str, Any] = {
            "host": self.host,
            "port": self.port,
            "db": self.db,
            "password": password,
            "username": properties.get("redis.username") or None,
            "socket_timeout": float(properties.get("redis.timeout", "10")),
            "socket_connect_timeout": float(properties.get("redis.connect_timeout", "5")),
            "protocol": 2,  # RESP2: no HELLO round trip, and a plain NOAUTH when the password is missing
        }
        if truthy(properties.get("redis.tls")):
            kwargs["ssl_cert_reqs"] = (
                "required" if truthy(properties.get("redis.tls_verify", "true")) else "none"
            )
            self.conn: redis.Connection = redis.SSLConnection(**kwargs)
        else:
            self.conn = redis.Connection(**kwargs)

    # -------------------------------------------------------------- life cycle
    def endpoint(self) -> str:
        return f"{self.host}:{self.port}"

    def connect(self) -> None:
        try:
            self.conn.connect()
            self.command("PING")
        except redis.AuthenticationError as exc:
            raise TargetUnreachable(self.endpoint(), f"authentication failed: {exc}") from None
        except redis.ResponseError as exc:  # e.g. NOAUTH when no password was given
            raise TargetUnreachable(self.endpoint(), str(exc)) from None
        except (redis.ConnectionError, redis.TimeoutError, OSError) as exc:
            message = str(exc)
            if "connecting to" in message:  # "Error 111 connecting to h:p. Connection refused."
                message = message.rsplit(". ", 1)[-1].rstrip(".")
            raise TargetUnreachable(self.endpoint(), message) from None

    def close(self) -> None:
        self.conn.disconnect()

    def recover(self) -> None:
        # A failed command may leave unread replies behind: drop the socket; the next send reconnects.
        self.conn.disconnect()

    def server_version(self) -> str | None:
        info = self.command("INFO", "server")
        text = info.decode() if isinstance(info, bytes) else str(info)
        for line in text.splitlines():
            if line.startswith(("redis_version:", "valkey_version:")):
                return line.strip()
        return None

    # -------------------------------------------------------------- raw commands
    def command(self, *args: bytes | str | int) -> Any:
        conn = self.conn
        conn.send_command(*args)
        return conn.read_response()

    def pipeline(self, commands: Sequence[Sequence[bytes | str | int]]) -> list[Any]:
        conn = self.conn
        conn.send_packed_command(conn.pack_commands(commands))
        replies = []
        first_error: Exception | None = None
        for _ in commands:
            try:
                replies.append(conn.read_response())
            except redis.ResponseError as exc:
                first_error = first_error or exc
                replies.append(exc)
        if first_error is not None:
            raise first_error
        return replies

    # -------------------------------------------------------------- key-value (YCSB)
    def _key(self, table: str, key: str) -> str:
        return key if table == "usertable" else f"{table}:{key}"

    def _index(self, table: str) -> str:
        return f"{table}:index"

    def create_table(self, table: str, fieldcount: int, *, drop: bool = False) -> None:
        if self.datatype == "string" and fieldcount != 1:
            raise SpecError("fieldcount", "redis.datatype=string stores one value per key: set fieldcount=1")
        if drop:
            self.command("FLUSHDB")

    def count(self, table: str) -> int:
        return int(self.command("DBSIZE")) - (1 if int(self.command("EXISTS", self._index(table))) else 0)

    def read(self, table: str, key: str, fields: Sequence[str] | None) -> Status:
        k = self._key(table, key)
        t = self.datatype
        if t == "hash":
            reply = self.command("HMGET", k, *fields) if fields else self.command("HGETALL", k)
            found = any(v is not None for v in reply) if fields else bool(reply)
        elif t == "string":
            found = self.command("GET", k) is not None
        elif t == "list":
            found = bool(self.command("LRANGE", k, 0, -1))
        elif t == "set":
            found = bool(self.command("SMEMBERS", k))
        else:
            found = bool(self.command("ZRANGE", k, 0, -1, "WITHSCORES"))
        return Status.OK if found else Status.NOT_FOUND

    def scan(self, table: str, start_key: str, count: int, fields: Sequence[str] | None) -> Status:
        if self.datatype not in SCANNABLE:
            raise SpecError("redis.datatype", f"scan is not supported for redis.datatype={self.datatype}")
        keys = self.command("ZRANGE", self._index(table), f"[{start_key}", "+", "BYLEX", "LIMIT", 0, count)
        if not keys:
            return Status.OK
        if self.datatype == "string":
            self.command("MGET", *keys)
        else:
            read = ("HMGET", *fields) if fields else ("HGETALL",)
            self.pipeline([(read[0], k, *read[1:]) for k in keys])
        return Status.OK

    def update(self, table: str, key: str, values: Mapping[str, str]) -> Status:
        k = self._key(table, key)
        t = self.datatype
        if t == "hash":
            self.command("HSET", k, *_flatten(values))
        elif t == "string":
            self.command("SET", k, next(iter(values.values())), "XX")
        elif t == "list":
            self.pipeline([("LSET", k, _field_index(f), v) for f, v in values.items()])
        elif t == "set":
            cmds: list[tuple[str | int, ...]] = []
            for v in values.values():
                cmds += [("SPOP", k), ("SADD", k, v)]
            self.pipeline(cmds)
        else:
            zcmds: list[tuple[str | int, ...]] = []
            for f, v in values.items():
                i = _field_index(f)
                zcmds += [("ZREMRANGEBYSCORE", k, i, i), ("ZADD", k, i, v)]
            self.pipeline(zcmds)
        return Status.OK

    def insert(self, table: str, key: str, values: Mapping[str, str]) -> Status:
        k = self._key(table, key)
        t = self.datatype
        if t == "hash":
            self.pipeline([("HSET", k, *_flatten(values)), ("ZADD", self._index(table), 0, key)])
        elif t == "string":
            self.pipeline([("SET", k, next(iter(values.values()))), ("ZADD", self._index(table), 0, key)])
        elif t == "list":
            self.pipeline([("DEL", k), ("RPUSH", k, *values.values())])
        elif t == "set":
            self.pipeline([("DEL", k), ("SADD", k, *values.values())])
        else:
            members: list[str | int] = []
            for f, v in values.items():
                members += [_field_index(f), v]
            self.pipeline([("DEL", k), ("ZADD", k, *members)])
        return Status.OK

    def delete(self, table: str, key: str) -> Status:
        k = self._key(table, key)
        removed = self.pipeline([("DEL", k), ("ZREM", self._index(table), key)])[0]
        return Status.OK if removed else Status.NOT_FOUND


def _flatten(values: Mapping[str, str]) -> list[str]:
    out: list[str] = []
    for f, v in values.items():
        out += [f, v]
    return out


def _field_index(field: str) -> int:
    """FIELD7 -> 7: list positions and zset scores follow the YCSB field number."""
    return int(field[5:]) if field.startswith(("FIELD", "field")) else 0
