"""YCSB's key-value operations as libpq requests for the event loop (``event_loop_pq``).

The statements ``PostgresDriver`` prepares for its read/update/insert/scan/delete, with the same
text parameters, written as event-loop requests: ``(sql, params)`` payloads and a check on the
``PGresult`` that decides the status the way the driver does (no row read or updated: NOT_FOUND).
The rows are received and parsed by libpq; they are not copied into Python objects (the status
needs only their count, and pgbench does not read them either).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Generator, Iterator, Mapping, Sequence
from decimal import Decimal
from typing import Any

from benchwright.runner import compiled
from benchwright.runner.event_loop import Request, Step, then_if_found
from benchwright.runner.event_loop_pq import rows_changed, rows_found
from benchwright.runner.loop_parts import Steps
from benchwright.runner.measure import Status

OK = Status.OK


class PostgresKeyValueWire:
    """Builds one connection's requests; the SQL text of each statement shape is made once."""

    def __init__(self) -> None:
        self._sql: dict[Any, bytes] = {}
        self._read_all: dict[str, bytes] = {}
        self._update_one: dict[str, dict[str, bytes]] = {}  # table -> field name -> one-field UPDATE
        self._update_encoded: dict[str, dict[bytes, bytes]] = {}  # the same, by the name in bytes

    def _statement(self, sig: Any) -> bytes:
        sql = self._sql.get(sig)
        if sql is None:
            sql = self._sql[sig] = _sql_for(sig).encode()
        return sql

    def read_step(self, table: str, key: str, fields: Sequence[str] | None) -> Step:
        sql = self._statement(("r", table, tuple(fields) if fields else None))
        return (sql, [key.encode()]), 1, rows_found

    def read(self, table: str, key: str, fields: Sequence[str] | None) -> Request:
        if fields is None:  # the hot path: one statement per table
            sql = self._read_all.get(table)
            if sql is None:
                sql = self._read_all[table] = self._statement(("r", table, None))
            return "READ", (sql, [key.encode()]), 1, rows_found
        return ("READ", *self.read_step(table, key, fields))

    def reads(self, table: str, keys: list[str], fields: list[list[str] | None] | None) -> list[Request]:
        """``read`` of each key (``fields``: one list per key, or None: every field), a block at a time
        (``stream.RunStream``): whole-record reads are built in one comprehension, no call per read."""
        if fields is None:
            sql = self._read_all.get(table)
            if sql is None:
                sql = self._read_all[table] = self._statement(("r", table, None))
            return [("READ", (sql, [key]), 1, rows_found) for key in map(str.encode, keys)]
        return [self.read(table, key, f) for key, f in zip(keys, fields, strict=True)]

    def updates(self, table: str, keys: list[str], values: list[dict[str, str]]) -> list[Request]:
        """``update`` of each key with its values, a block at a time: one-field updates (YCSB's
        default) are built in one comprehension, their statements looked up by field name."""
        if any(len(v) != 1 for v in values):
            return [self.update(table, key, v) for key, v in zip(keys, values, strict=True)]
        by_name = self._update_one.get(table)
        if by_name is None:
            by_name = self._update_one[table] = {}
        for ((name, _),) in map(dict.items, values):
            if name not in by_name:
                by_name[name] = self._statement(("u", table, (name,)))
        encode = str.encode
        return [
            ("UPDATE", (by_name[name], [encode(value), encode(key)]), 1, rows_changed)
            for key, ((name, value),) in zip(keys, map(dict.items, values), strict=True)
        ]

    def updates_encoded(self, table: str, keys: list[str], pairs: list[tuple[bytes, bytes]]) -> list[Request]:
        """``updates`` of one field each, the (field, value) pairs already in bytes (the stream's
        ``Values.one_field_encoded_block``): no dictionary and no encoding of the value per update.
        Why: on the loop YCSB A's blocks cost 4.3 us of CPU a request, against 1.1 run alone."""
        by_name = self._update_encoded.get(table)
        if by_name is None:
            by_name = self._update_encoded[table] = {}
        for name, _ in pairs:
            if name not in by_name:
                by_name[name] = self._statement(("u", table, (name.decode(),)))
        return [
            ("UPDATE", (by_name[name], [value, key]), 1, rows_changed)
            for key, (name, value) in zip(map(str.encode, keys), pairs, strict=True)
        ]

    def scan(self, table: str, start_key: str, count: int, fields: Sequence[str] | None) -> Request:
        sql = self._statement(("s", table, tuple(fields) if fields else None))
        return "SCAN", (sql, [start_key.encode(), b"%d" % count]), 1, None

    def update_step(self, table: str, key: str, values: Mapping[str, str]) -> Step:
        sql = self._statement(("u", table, tuple(values)))
        params = [v.encode() for v in values.values()]
        params.append(key.encode())
        return (sql, params), 1, rows_changed

    def update(self, table: str, key: str, values: Mapping[str, str]) -> Request:
        return ("UPDATE", *self.update_step(table, key, values))

    def insert(self, table: str, key: str, values: Mapping[str, str]) -> Request:
        sql = self._statement(("i", table, tuple(values)))
        params = [key.encode()]
        params += [v.encode() for v in values.values()]
        return "INSERT", (sql, params), 1, None

    def delete(self, table: str, key: str) -> Request:
        return "DELETE", (self._statement(("d", table, None)), [key.encode()]), 1, rows_changed

    def read_modify_write(
        self, table: str, key: str, fields: Sequence[str] | None, values: Mapping[str, str]
    ) -> Request:
        step = then_if_found(self.read_step(table, key, fields), self.update_step(table, key, values))
        return ("READ-MODIFY-WRITE", *step)


def _sql_for(sig: Any) -> str:
    """The statement ``PostgresDriver`` prepares for the same operation shape."""
    kind, table, names = sig
    columns = ", ".join(names) if names else "*"
    if kind == "r":
        return f"SELECT {columns} FROM {table} WHERE YCSB_KEY = $1"
    if kind == "s":
        return f"SELECT {columns} FROM {table} WHERE YCSB_KEY >= $1 ORDER BY YCSB_KEY LIMIT $2"
    if kind == "u":
        sets = ", ".join(f"{n} = ${i}" for i, n in enumerate(names, 1))
        return f"UPDATE {table} SET {sets} WHERE YCSB_KEY = ${len(names) + 1}"
    if kind == "i":
        cols = ", ".join(("YCSB_KEY", *names))
        marks = ", ".join(f"${i}" for i in range(1, len(names) + 2))
        return f"INSERT INTO {table} ({cols}) VALUES ({marks})"
    return f"DELETE FROM {table} WHERE YCSB_KEY = $1"


BEGIN: tuple[bytes, list[bytes | None]] = (b"BEGIN", [])
COMMIT: tuple[bytes, list[bytes | None]] = (b"COMMIT", [])
ROLLBACK: tuple[bytes, list[bytes | None]] = (b"ROLLBACK", [])
_INTEGERS = frozenset((20, 21, 23, 26))  # int8, int2, int4, oid
_NUMERIC, _FLOATS = 1700, frozenset((700, 701))


def _rows(result: Any, encoding: str) -> list[tuple[Any, ...]]:
    """Every row of a result, with the Python types psycopg gives the columns a workload computes
    with (integers, numeric as Decimal, floats); any other column as text."""
    converters: list[Any] = []
    for column in range(result.nfields):
        oid = result.ftype(column)
        converters.append(
            int if oid in _INTEGERS else Decimal if oid == _NUMERIC else float if oid in _FLOATS else str
        )
    get = result.get_value
    rows = []
    for row in range(result.ntuples):
        values: list[Any] = []
        for column, convert in enumerate(converters):
            raw = get(row, column)
            values.append(None if raw is None else convert(bytes(raw).decode(encoding)))
        rows.append(tuple(values))
    return rows


def _user_abort(result: Any) -> Status:
    return Status.USER_ABORT


class PostgresSqlWire:
    """The SQL workloads' statements as libpq requests: ``%s`` placeholders become ``$n`` and
    parameters are sent as text, untyped, as ``pgbench -M prepared`` sends them (what
    ``PostgresDriver`` does on a thread). A transaction is one request: BEGIN, each statement, COMMIT,
    one round trip each on one connection, each sent when the previous one's result is in."""

    def __init__(self, encoding: str = "utf-8") -> None:
        self.encoding = encoding
        self._text: dict[str, bytes] = {}

    def expresses(self, params: Sequence[Any]) -> bool:
        """Whether every parameter has a text form here (int, str, None); others need psycopg."""
        return all(type(v) in (int, str) or v is None for v in params)

    def _step(self, sql: str, params: Sequence[Any]) -> tuple[bytes, list[bytes | None]]:
        text = self._text.get(sql)
        if text is None:
            pieces = sql.split("%s")
            dollar = pieces[0] + "".join(f"${i}{piece}" for i, piece in enumerate(pieces[1:], 1))
            text = self._text[sql] = dollar.replace("%%", "%").encode(self.encoding)
        encoding = self.encoding
        return text, [
            b"%d" % v if type(v) is int else (None if v is None else v.encode(encoding)) for v in params
        ]

    def statement(self, name: str, sql: str, params: Sequence[Any]) -> Request:
        """One statement on its own (autocommit), its rows received, not decoded. Hot path (a point
        select per operation): one int parameter, the statement seen before, skips ``_step``."""
        text = self._text.get(sql)
        if text is not None and len(params) == 1 and type(params[0]) is int:
            return name, (text, [b"%d" % params[0]]), 1, None
        return name, self._step(sql, params), 1, None

    def int_statements(self, name: str, sql: str, values: list[int]) -> list[Request]:
        """``statement(name, sql, (v,))`` for each of ``values`` (a block of point selects), made in C
        where the compiled part is built (``_fastloop.int_requests``), else in one comprehension."""
        text = self._text.get(sql) or self._step(sql, (0,))[0]
        make = compiled.int_requests()
        if make is not None:
            with contextlib.suppress(OverflowError):  # an id past 64 bits: the comprehension has it
                return make(name, text, b"", values, True)  # type: ignore[no-any-return]
        return [(name, (text, [b"%d" % v]), 1, None) for v in values]

    def uniform_selects(
        self, name: str, sql: str, rng: Any, low: int, count: int
    ) -> Iterator[Request] | None:
        """The endless ``statement(name, sql, (low + floor(rng.random() * count),))``, made one at a
        time in C (``_fastloop.UniformSelects``: the same ids from the same generator); None where
        the compiled part is not built or the range is past what a double draws exactly."""
        make = compiled.uniform_selects()
        if make is None or not 1 <= count <= 2**53 or not -(2**62) < low < 2**62:
            return None
        text = self._text.get(sql) or self._step(sql, (0,))[0]
        return make(name, text, b"", rng.getrandbits, low, count, True)  # type: ignore[no-any-return]

    def transaction(
        self,
        name: str,
        statements: Sequence[tuple[str, Sequence[Any]]],
        *,
        block: bool = True,
        retry_on: tuple[str, ...] = (),
    ) -> Request:
        """``statements`` in order in one request; between BEGIN and COMMIT when ``block``. An error
        whose kind is in ``retry_on`` (or a serialization failure, a deadlock) is a RETRY."""
        steps = [self._step(sql, params) for sql, params in statements]
        if block:
            steps = [BEGIN, *steps, COMMIT]
        return name, steps[0], 1, Steps(steps, retry_on)

    def dialogue(
        self,
        name: str,
        steps: Callable[[], Generator[tuple[str, str, Sequence[Any]], Any, Any]],
        *,
        aborts: tuple[type[BaseException], ...] = (),
    ) -> Request:
        """A transaction whose statements depend on earlier answers (TPC-C's): BEGIN, then each
        statement ``steps()`` yields as ``(kind, sql, params)``, then COMMIT, one round trip each
        (``steps`` is called once here; a thread calls it once per attempt, ``SqlCalls.dialogue``).
        The generator receives what ``SqlDriver.<kind>`` would return on a thread: ``fetchone`` the
        first row or None, ``fetchall`` every row, ``execute`` the row count. One of ``aborts``
        raised by it rolls the transaction back as a USER_ABORT (TPC-C's 1% New-Orders); any other
        exception fails the request, and the loop rolls the transaction back. Parameters that are
        neither int nor str (Decimal, datetime) are sent as their ``str``, which PostgreSQL casts to
        the column's type."""
        encoding = self.encoding
        statements = steps()
        kind = ""

        def send(answer: Any) -> Any:
            nonlocal kind
            try:
                kind, sql, params = statements.send(answer)
            except StopIteration:
                return COMMIT, 1, None
            except aborts:
                return ROLLBACK, 1, _user_abort
            texts = [v if v is None or type(v) in (int, str) else str(v) for v in params]
            return self._step(sql, texts), 1, answered

        def answered(result: Any) -> Any:
            if kind == "execute":
                return send(result.command_tuples or 0)
            rows = _rows(result, encoding)
            return send(rows if kind == "fetchall" else (rows[0] if rows else None))

        return name, BEGIN, 1, lambda result: send(None)
