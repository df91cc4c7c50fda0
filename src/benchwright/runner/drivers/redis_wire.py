"""YCSB's key-value operations as RESP requests for the event loop, one per ``redis.datatype``.

The same commands ``RedisDriver``'s read/update/insert/scan/delete send on a thread, written ahead
as event-loop requests (``event_loop.Request``): the loop sends them and each request's check reads
the reply the way the driver does (an empty reply is NOT_FOUND). A scan is two round trips in one
timed request (the key index, then the records), read-modify-write a read followed by an update when
the read found the record. Keys and values are ASCII, as YCSB's are.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from benchwright.runner.drivers.redis_datatype import SCANNABLE, field_index
from benchwright.runner.drivers.resp import encode_command
from benchwright.runner.event_loop import Request, Step, reply_nonempty, reply_not_none, then_if_found
from benchwright.runner.measure import Status

OK, NOT_FOUND = Status.OK, Status.NOT_FOUND
SET_XX = b"*4\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n$2\r\nXX\r\n"
HSET_ONE = b"*4\r\n$4\r\nHSET\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n"
# Whole-record reads of usertable already made, per template (GET or HGETALL), by key: the same
# record's read is the same request every time. Shared by the process's connections and bounded as
# the workload's key cache is (ycsb.workload.KEY_CACHE; ~10 MB at most).
READ_CACHE = 1 << 16
CRLF, XX = b"\r\n", b"\r\n$2\r\nXX\r\n"


class _Headers(dict[int, bytes]):
    """A RESP header by the length of the argument it announces, made on first use: ``format`` holds
    one ``%d`` (the length) and ends where the argument's bytes start."""

    def __init__(self, format_: bytes) -> None:
        super().__init__()
        self.format = format_

    def __missing__(self, length: int) -> bytes:
        header = self[length] = self.format % length
        return header


_LENGTHS = _Headers(b"\r\n$%d\r\n")  # the end of one argument, the length of the next
_READS: dict[bytes, dict[str, Request]] = {}


def _resp(*args: bytes | str | int) -> bytes:
    data = encode_command(args)
    assert data is not None, "YCSB sends str and int arguments only"
    return data


def _any_value(reply: Any) -> Status:
    for value in reply:
        if value is not None:
            return OK
    return NOT_FOUND


def _removed(reply: Any) -> Status:
    return OK if reply else NOT_FOUND


class RedisKeyValueWire:
    """Builds the requests of one connection (``datatype`` as in ``RedisDriver``)."""

    def __init__(self, datatype: str) -> None:
        self.datatype = datatype
        # a whole record's read, as a template: HGETALL (hash) or GET (string)
        self._read_all: bytes | None = None
        self._read_all_check: Any = None
        if datatype == "hash":
            self._read_all, self._read_all_check = b"*2\r\n$7\r\nHGETALL\r\n$%d\r\n%s\r\n", reply_nonempty
        elif datatype == "string":
            self._read_all, self._read_all_check = b"*2\r\n$3\r\nGET\r\n$%d\r\n%s\r\n", reply_not_none
        # the start of a one-field update, up to the key's bytes (updates_encoded)
        command = b"*4\r\n$3\r\nSET\r\n" if datatype == "string" else b"*4\r\n$4\r\nHSET\r\n"
        self._heads = _Headers(command + b"$%d\r\n")

    @staticmethod
    def _key(table: str, key: str) -> str:
        return key if table == "usertable" else f"{table}:{key}"

    # -------------------------------------------------------------- reads
    def read_step(self, table: str, key: str, fields: Sequence[str] | None) -> Step:
        k = self._key(table, key)
        t = self.datatype
        if t == "hash":
            if fields:
                return _resp("HMGET", k, *fields), 1, _any_value
            kb = k.encode()
            return b"*2\r\n$7\r\nHGETALL\r\n$%d\r\n%s\r\n" % (len(kb), kb), 1, reply_nonempty
        if t == "string":
            kb = k.encode()
            return b"*2\r\n$3\r\nGET\r\n$%d\r\n%s\r\n" % (len(kb), kb), 1, reply_not_none
        if t == "list":
            return _resp("LRANGE", k, 0, -1), 1, reply_nonempty
        if t == "set":
            return _resp("SMEMBERS", k), 1, reply_nonempty
        return _resp("ZRANGE", k, 0, -1, "WITHSCORES"), 1, reply_nonempty

    def read(self, table: str, key: str, fields: Sequence[str] | None) -> Request:
        if fields is None and table == "usertable" and self._read_all is not None:  # the hot path
            kb = key.encode()
            return "READ", self._read_all % (len(kb), kb), 1, self._read_all_check
        return ("READ", *self.read_step(table, key, fields))

    def reads(self, table: str, keys: list[str], fields: list[list[str] | None] | None) -> list[Request]:
        """``read`` of each key (``fields``: one list per key, or None: every field), a block at a time:
        whole-record reads of usertable come from the process's ``_READS`` when they were made before,
        else are formatted in one comprehension."""
        if fields is None and table == "usertable" and self._read_all is not None:  # the hot path
            return self._whole_reads(keys)
        if fields is None:
            return [self.read(table, key, None) for key in keys]
        return [self.read(table, key, f) for key, f in zip(keys, fields, strict=True)]

    def _whole_reads(self, keys: list[str]) -> list[Request]:
        """Whole-record reads of usertable: from ``_READS`` when made before, else formatted."""
        assert self._read_all is not None
        made = _READS.setdefault(self._read_all, {})
        found: list[Request | None] = list(map(made.get, keys))
        if None not in found:
            return found  # type: ignore[return-value]  # no None in it
        template, check = self._read_all, self._read_all_check
        requests: list[Request] = [
            r or ("READ", template % (len(kb), kb), 1, check)
            for r, kb in zip(found, map(str.encode, keys), strict=True)
        ]
        if len(made) < READ_CACHE:
            made.update(zip(keys, requests, strict=True))
        return requests

    def scan(self, table: str, start_key: str, count: int, fields: Sequence[str] | None) -> Request:
        if self.datatype not in SCANNABLE:  # refused by the workload's setup before any request
            raise ValueError(f"scan is not supported for redis.datatype={self.datatype}")
        string = self.datatype == "string"
        read = ("HMGET", *fields) if fields else ("HGETALL",)

        def records(keys: Any) -> Status | Step:
            if not keys:
                return OK
            if string:
                return _resp("MGET", *keys), 1, None
            return b"".join(_resp(read[0], k, *read[1:]) for k in keys), len(keys), None

        index = _resp("ZRANGE", f"{table}:index", f"[{start_key}", "+", "BYLEX", "LIMIT", 0, count)
        return "SCAN", index, 1, records

    # -------------------------------------------------------------- writes
    def update_step(self, table: str, key: str, values: Mapping[str, str]) -> Step:
        k = self._key(table, key)
        t = self.datatype
        if t == "hash":
            args: list[str | int] = ["HSET", k]
            for f, v in values.items():
                args += (f, v)
            return _resp(*args), 1, None
        if t == "string":
            return _resp("SET", k, next(iter(values.values())), "XX"), 1, None
        if t == "list":
            return (
                b"".join(_resp("LSET", k, field_index(f), v) for f, v in values.items()),
                len(values),
                None,
            )
        if t == "set":
            cmds = [_resp("SPOP", k) + _resp("SADD", k, v) for v in values.values()]
            return b"".join(cmds), 2 * len(values), None
        zcmds = []
        for f, v in values.items():
            i = field_index(f)
            zcmds.append(_resp("ZREMRANGEBYSCORE", k, i, i) + _resp("ZADD", k, i, v))
        return b"".join(zcmds), 2 * len(values), None

    def update(self, table: str, key: str, values: Mapping[str, str]) -> Request:
        if len(values) == 1 and table == "usertable" and self.datatype in SCANNABLE:  # the hot path
            (name, value), kb = next(iter(values.items())), key.encode()
            vb = value.encode()
            if self.datatype == "string":
                return "UPDATE", SET_XX % (len(kb), kb, len(vb), vb), 1, None
            nb = name.encode()
            return "UPDATE", HSET_ONE % (len(kb), kb, len(nb), nb, len(vb), vb), 1, None
        return ("UPDATE", *self.update_step(table, key, values))

    def updates(self, table: str, keys: list[str], values: list[dict[str, str]]) -> list[Request]:
        """``update`` of each key with its values, a block at a time: one-field updates of usertable
        (YCSB's default) are formatted in one comprehension."""
        if table != "usertable" or self.datatype not in SCANNABLE or any(len(v) != 1 for v in values):
            return [self.update(table, key, v) for key, v in zip(keys, values, strict=True)]
        encode = str.encode
        pairs = [(encode(n), encode(v)) for ((n, v),) in map(dict.items, values)]
        if self.datatype == "string":
            return [
                ("UPDATE", SET_XX % (len(kb), kb, len(vb), vb), 1, None)
                for kb, (_, vb) in zip(map(encode, keys), pairs, strict=True)
            ]
        return [
            ("UPDATE", HSET_ONE % (len(kb), kb, len(nb), nb, len(vb), vb), 1, None)
            for kb, (nb, vb) in zip(map(encode, keys), pairs, strict=True)
        ]

    def updates_encoded(self, table: str, keys: list[str], pairs: list[tuple[bytes, bytes]]) -> list[Request]:
        """``updates`` of one field each, the (field, value) pairs already in bytes (the stream's
        ``Values.one_field_encoded_block``): no dictionary and no encoding per update."""
        if table != "usertable" or self.datatype not in SCANNABLE:
            return [
                self.update(table, key, {name.decode(): value.decode()})
                for key, (name, value) in zip(keys, pairs, strict=True)
            ]
        # each request joined from its parts (one allocation), the length headers looked up
        join, heads, lengths = b"".join, self._heads, _LENGTHS
        if self.datatype == "string":  # SET key value XX
            return [
                ("UPDATE", join((heads[len(kb)], kb, lengths[len(vb)], vb, XX)), 1, None)
                for kb, (_, vb) in zip(map(str.encode, keys), pairs, strict=True)
            ]
        return [  # HSET key field value
            ("UPDATE", join((heads[len(kb)], kb, lengths[len(nb)], nb, lengths[len(vb)], vb, CRLF)), 1, None)
            for kb, (nb, vb) in zip(map(str.encode, keys), pairs, strict=True)
        ]

    def insert(self, table: str, key: str, values: Mapping[str, str]) -> Request:
        k = self._key(table, key)
        t = self.datatype
        if t in SCANNABLE:
            if t == "hash":
                args: list[str | int] = ["HSET", k]
                for f, v in values.items():
                    args += (f, v)
                write = _resp(*args)
            else:
                write = _resp("SET", k, next(iter(values.values())))
            return "INSERT", write + _resp("ZADD", f"{table}:index", 0, key), 2, None
        if t == "list":
            write = _resp("RPUSH", k, *values.values())
        elif t == "set":
            write = _resp("SADD", k, *values.values())
        else:
            members: list[str | int] = []
            for f, v in values.items():
                members += (field_index(f), v)
            write = _resp("ZADD", k, *members)
        return "INSERT", _resp("DEL", k) + write, 2, None

    def delete(self, table: str, key: str) -> Request:
        k = self._key(table, key)  # the record's DEL last: its reply says whether it existed
        return "DELETE", _resp("ZREM", f"{table}:index", key) + _resp("DEL", k), 2, _removed

    def read_modify_write(
        self, table: str, key: str, fields: Sequence[str] | None, values: Mapping[str, str]
    ) -> Request:
        step = then_if_found(self.read_step(table, key, fields), self.update_step(table, key, values))
        return ("READ-MODIFY-WRITE", *step)
