"""Redis-protocol driver (Redis, Valkey, ElastiCache, MemoryDB, Tair, ARDB ...) on redis-py + hiredis.

Each thread owns one ``redis.Connection``. redis-py opens it (TCP or TLS, AUTH, SELECT); after
that every command skips redis-py's per-call machinery: arguments are encoded to RESP here
(``encode_command``), written with one ``sendall`` on the connection's socket and the reply is parsed
by a hiredis ``Reader`` fed straight from ``recv_into``. On plain TCP the socket is switched to
blocking mode with the read/write timeout enforced by the kernel (SO_RCVTIMEO / SO_SNDTIMEO), which
saves the poll() Python adds before every send and receive when a socket has a timeout. Errors keep
redis-py's types (``redis.ConnectionError``, ``redis.TimeoutError``, ``redis.ResponseError``).

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
import socket
import struct
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import hiredis
import redis
from redis.exceptions import InvalidResponse

from benchwright.errors import SpecError, TargetUnreachable
from benchwright.runner.dataset import MARKER_KEY as DATASET_MARKER
from benchwright.runner.drivers.base import Capability, KeyValueDriver, RedisCommandsDriver
from benchwright.runner.drivers.redis_datatype import SCANNABLE, field_index, redis_datatype
from benchwright.runner.drivers.redis_wire import RedisKeyValueWire
from benchwright.runner.drivers.resp import encode_command
from benchwright.runner.event_loop import Channel
from benchwright.runner.measure import Status

READ_BUFFER = 65536
try:  # redis-py's mapping of error replies to exception classes (NOAUTH -> AuthenticationError ...)
    from redis._parsers.base import BaseParser

    _parse_error: Any = BaseParser.parse_error
except ImportError:  # pragma: no cover - a redis-py without it: plain ResponseError
    _parse_error = redis.ResponseError


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
        self.datatype = redis_datatype(properties)
        password = os.environ.get("BENCHWRIGHT_DB_PASSWORD") or properties.get("redis.password") or None
        kwargs: dict[str, Any] = {
            "host": self.host,
            "port": self.port,
            "db": self.db,
            "password": password,
            "username": properties.get("redis.username") or None,
            "socket_timeout": float(
                properties.get("redis.timeout") or properties.get("client.op_timeout_s") or 10
            ),
            "socket_connect_timeout": float(
                properties.get("redis.connect_timeout") or properties.get("client.connect_timeout_s") or 5
            ),
            "protocol": 2,  # RESP2: no HELLO round trip, and a plain NOAUTH when the password is missing
        }
        if truthy(properties.get("redis.tls")):
            kwargs["ssl_cert_reqs"] = (
                "required" if truthy(properties.get("redis.tls_verify", "true")) else "none"
            )
            self.conn: redis.Connection = redis.SSLConnection(**kwargs)
        else:
            self.conn = redis.Connection(**kwargs)
        self._sock: socket.socket | None = None  # set by _open(), cleared when the connection is dropped
        self._reader = hiredis.Reader(protocolError=InvalidResponse, replyError=_parse_error)
        self._buffer = bytearray(READ_BUFFER)

    # -------------------------------------------------------------- life cycle
    def endpoint(self) -> str:
        return f"{self.host}:{self.port}"

    def connect(self) -> None:
        try:
            self._open()
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
        except redis.exceptions.InvalidResponse as exc:  # a port that speaks another protocol
            raise TargetUnreachable(
                self.endpoint(), f"does not answer in the Redis protocol ({exc})"
            ) from None

    def _open(self) -> None:
        """Let redis-py connect (and authenticate, select the db), then take over its socket."""
        conn = self.conn
        conn.connect()
        sock = conn._sock
        if sock is None:  # pragma: no cover - connect() either sets it or raises
            raise redis.ConnectionError(f"Error connecting to {self.endpoint()}: no socket")
        if not isinstance(conn, redis.SSLConnection) and conn.socket_timeout:
            timeout = float(conn.socket_timeout)
            timeval = struct.pack("@ll", int(timeout), int((timeout % 1) * 1_000_000))
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO, timeval)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDTIMEO, timeval)
            sock.settimeout(None)  # blocking: the kernel enforces the timeouts, no poll() per call
        self._sock = sock
        self._reader = hiredis.Reader(protocolError=InvalidResponse, replyError=_parse_error)
        self._buffer = bytearray(READ_BUFFER)

    def close(self) -> None:
        self._sock = None
        self.conn.disconnect()

    def recover(self) -> None:
        # A failed command may leave unread replies behind: drop the socket; the next send reconnects.
        self._sock = None
        self.conn.disconnect()

    def server_version(self) -> str | None:
        info = self.command("INFO", "server")
        text = info.decode() if isinstance(info, bytes) else str(info)
        for line in text.splitlines():
            if line.startswith(("redis_version:", "valkey_version:")):
                return line.strip()
        return None

    def event_loop_channel(self) -> Channel | None:
        if isinstance(self.conn, redis.SSLConnection):
            return None  # a TLS socket is not driven non-blocking here: TLS phases run on threads
        if self._sock is None:
            self._open()  # raises redis.ConnectionError / TimeoutError as any command would
        assert self._sock is not None
        parser = hiredis.Reader(protocolError=InvalidResponse, replyError=_parse_error)
        return Channel(self._sock, parser, float(self.conn.socket_timeout or 10.0), _parse_error)

    def kv_wire(self) -> Any:
        return RedisKeyValueWire(self.datatype)

    # -------------------------------------------------------------- raw commands
    def _send(self, data: bytes) -> None:
        sock = self._sock
        if sock is None:
            self._open()
            sock = self._sock
            assert sock is not None
        try:
            sock.sendall(data)
        except OSError as exc:
            raise self._socket_error(exc, "writing to") from exc

    def _reply(self) -> Any:
        """The next reply; a server error comes back as an exception instance (not raised)."""
        reader = self._reader
        reply = reader.gets()
        if reply is not False:
            return reply
        sock, buffer = self._sock, self._buffer
        assert sock is not None
        while reply is False:
            try:
                n = sock.recv_into(buffer)
            except OSError as exc:
                raise self._socket_error(exc, "reading from") from exc
            if not n:
                raise redis.ConnectionError(f"Connection closed by server {self.endpoint()}.")
            reader.feed(buffer, 0, n)  # type: ignore[arg-type]
            reply = reader.gets()
        return reply

    def _socket_error(self, exc: OSError, doing: str) -> redis.RedisError:
        if isinstance(exc, (socket.timeout, BlockingIOError)):  # Python or kernel (SO_RCVTIMEO) timeout
            return redis.TimeoutError(f"Timeout {doing} {self.endpoint()}")
        return redis.ConnectionError(f"Error {doing} {self.endpoint()}: {exc}")

    def _call(self, data: bytes) -> Any:
        """Send one encoded command and return its reply (raise a server error): the hot path, so
        the common case (the reply arrives in one read) is written out inline."""
        sock = self._sock
        if sock is not None:
            try:
                sock.sendall(data)
                n = sock.recv_into(self._buffer)
            except OSError as exc:
                raise self._socket_error(exc, "talking to") from exc
            if not n:
                raise redis.ConnectionError(f"Connection closed by server {self.endpoint()}.")
            reader = self._reader
            reader.feed(self._buffer, 0, n)  # type: ignore[arg-type]
            reply = reader.gets()
            if reply is False:
                reply = self._reply()
        else:
            self._send(data)
            reply = self._reply()
        if isinstance(reply, redis.RedisError):
            raise reply
        return reply

    def command(self, *args: bytes | str | int) -> Any:
        data = encode_command(args)
        return self._call(data if data is not None else b"".join(self.conn.pack_command(*args)))

    def pipeline(self, commands: Sequence[Sequence[bytes | str | int]]) -> list[Any]:
        encoded = [encode_command(c) for c in commands]
        packed = [c for c in encoded if c is not None]
        data = (
            b"".join(packed) if len(packed) == len(encoded) else b"".join(self.conn.pack_commands(commands))
        )
        self._send(data)
        replies = []
        first_error: Exception | None = None
        for _ in commands:
            reply = self._reply()
            if isinstance(reply, redis.RedisError) and first_error is None:
                first_error = reply
            replies.append(reply)
        if first_error is not None:
            raise first_error
        return replies

    def send_encoded(self, data: bytes, count: int) -> Any:
        if count == 1:
            return self._call(data)
        self._send(data)
        reply = self._reply
        replies = [reply() for _ in range(count)]
        for r in replies:
            if isinstance(r, redis.RedisError):
                raise r
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
        """Records: the database's keys less the scan index and Benchwright's dataset marker."""
        extra = int(self.command("EXISTS", self._index(table), DATASET_MARKER))
        return int(self.command("DBSIZE")) - extra

    def read(self, table: str, key: str, fields: Sequence[str] | None) -> Status:
        k = self._key(table, key)
        t = self.datatype
        if t == "hash":
            reply = self.command("HMGET", k, *fields) if fields else self.command("HGETALL", k)
            found = any(v is not None for v in reply) if fields else bool(reply)
        elif t == "string":
            kb = k.encode()
            found = self._call(b"*2\r\n$3\r\nGET\r\n$%d\r\n%s\r\n" % (len(kb), kb)) is not None
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
            self.pipeline([("LSET", k, field_index(f), v) for f, v in values.items()])
        elif t == "set":
            cmds: list[tuple[str | int, ...]] = []
            for v in values.values():
                cmds += [("SPOP", k), ("SADD", k, v)]
            self.pipeline(cmds)
        else:
            zcmds: list[tuple[str | int, ...]] = []
            for f, v in values.items():
                i = field_index(f)
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
                members += [field_index(f), v]
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
