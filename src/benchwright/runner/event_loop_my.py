"""The event loop over mysqlclient's split query calls: many MySQL / MariaDB connections on one thread.

The same client model as the RESP and libpq loops (``event_loop.EventLoop``): one request in flight
per connection, each timed from just before it is sent until its result is in. A step's payload is
the statement as bytes, parameters already quoted in (``MySqlSqlWire``), as the thread path's
``MySQLDriver._query`` sends it.

Why not MariaDB's non-blocking API (``mysql_real_query_start`` / ``_cont``): mysqlclient, the pinned
driver, does not wrap it (the compiled hot path, ``_fastloop.c``, calls the same two functions on the
same handle). What it does wrap is the query split in two: ``send_query`` writes the
statement (``mysql_send_query``; a statement fits the socket's send buffer, so it does not wait) and
``read_query_result`` reads the answer (``mysql_read_query_result``). The loop calls the second only
once epoll says the connection's socket is readable, and ``store_result`` then receives the rows as
the thread path does. On a readable socket the answer is there or on its way: the server writes a
result as it produces it, so the loop waits at most for the rest of a result already being sent
(a server that stops half-way through a packet would hold the loop until the connection's read
timeout, ``client.op_timeout_s``; one that never answers is failed by the loop's tick, as on libpq).

An error result fails the request under its exception class name, or makes it a RETRY for a
deadlock or a lock wait timeout (as ``MySQLDriver.classify`` says on a thread) and for a duplicate
key when the request's check lists ``UniqueViolation`` (sysbench's concurrent delete+insert); a
request that fails inside a transaction is rolled back before the connection's next request. A lost
session fails the request and the connection is reopened.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass
from typing import Any

import MySQLdb

from benchwright.runner import compiled, fast_seam
from benchwright.runner.event_loop import Connection, EventLoop
from benchwright.runner.loop_parts import Steps
from benchwright.runner.measure import Status

RETRY_CODES = frozenset({1213, 1205})  # ER_LOCK_DEADLOCK, ER_LOCK_WAIT_TIMEOUT: MySQLDriver.classify
DUPLICATE_KEY = 1062  # ER_DUP_ENTRY
# gone away, lost during query, out of sync, server shutdown, ...: the session cannot go on
BROKEN_CODES = frozenset({2006, 2013, 2014, 2055, 4031, 1053})
OK, NOT_FOUND = Status.OK, Status.NOT_FOUND


def rows_found(result: Any) -> Status:
    """A check: the SELECT returned a row (YCSB's read, as ``MySQLDriver.read`` judges it on a
    thread), else NOT_FOUND. The compiled part recognises it and counts the rows itself."""
    return OK if result is not None and result.num_rows() else NOT_FOUND


@dataclass
class MyChannel:
    """What the MySQL driver lends the loop: its mysqlclient connection (blocking, autocommit)."""

    db: Any
    reply_timeout_s: float = 60.0
    sock: int = -1

    def __post_init__(self) -> None:
        self.sock = int(self.db.fileno())


class MyEventLoop(EventLoop):
    """``EventLoop`` with mysqlclient's ``send_query`` / ``read_query_result`` in place of a socket
    and a RESP parser."""

    CONNECTIONS_PER_PROCESS = 1  # a loop per connection, up to one per core: see default_processes
    COMPILED_MODEL = "event loop (MySQL client hot path in C)"

    def _compiled(self) -> Any:
        """The C part drives mysqlclient's own MYSQL handle (``_get_native_connection``) through the
        client library it loaded, for statements with no check and ``Steps`` scripts; it hands every
        error reply back unread (``compiled.REPLY``), so ``_read`` names it as on a thread."""
        # mysqlclient (pinned, 2.3.1) has had the call since 2.1 and reserves it for integrations
        # that need the handle; without it, or its library, this loop runs as Python alone
        if not hasattr(MySQLdb._mysql.connection, "_get_native_connection") or not compiled.bind_mysql():
            return None
        return compiled.fast_loop(self, not_found=Status.NOT_FOUND, rows_found=rows_found, steps_type=Steps)

    def _connection_spec(self, conn: Connection) -> fast_seam.ConnectionSpec:
        channel: Any = conn.channel
        return fast_seam.connection_spec(
            conn, fast_seam.MY, channel.reply_timeout_s, mysql=channel.db._get_native_connection()
        )

    def _server_error(self, conn: Connection, errno: Any, end: int) -> None:
        """An error the C part met after the reply began well (a result cut off part-way) or on
        sending: by its client error number, as ``_failed`` judges it."""
        code = int(errno or 0)
        exc = MySQLdb.OperationalError(code, "") if code >= 1000 else MySQLdb.InterfaceError(code, "")
        self._failed(conn, exc, end)

    def _attach(self, conn: Connection) -> None:
        channel: Any = conn.channel
        self._watch(conn, channel.sock)

    def _detach(self, conn: Connection) -> None:
        """Nothing to give back: the connection stayed blocking throughout."""

    def _begin(self, conn: Connection) -> None:
        channel: Any = conn.channel
        try:
            channel.db.send_query(conn.payload)
        except MySQLdb.Error as exc:
            self._failed(conn, exc, time.perf_counter_ns())

    def _write(self, conn: Connection) -> None:
        """Never asked for: ``send_query`` writes the whole statement."""

    def _read(self, conn: Connection) -> None:
        channel: Any = conn.channel
        if channel is None or not conn.expected:
            return
        db = channel.db
        try:
            db.read_query_result()
            result = db.store_result()  # the rows, if any, received as the thread path does
        except MySQLdb.Error as exc:
            self._failed(conn, exc, time.perf_counter_ns())
            return
        end = time.perf_counter_ns()
        # hot path, once per operation: the success and _count written out
        if conn.check is None:
            self.recorder.record(conn.name, conn.started_ns, end, Status.OK)
            self.failing_since = 0
            if conn.failing_since:
                self._close_window(conn, end)
        elif self._checked(conn, result, end):
            return  # the transaction's next statement is on its way
        self.recorded += 1
        if not self.recorded & 0xFFFF:
            self.recorder.flush()
        conn.expected = 0
        self._send_next(conn)

    def _failed(self, conn: Connection, exc: Exception, end: int) -> None:
        """The server refused the step (record it, roll a transaction back, go on) or the session is
        gone (fail the request, reopen the connection)."""
        code = exc.args[0] if exc.args and isinstance(exc.args[0], int) else 0
        if code in BROKEN_CODES or isinstance(exc, MySQLdb.InterfaceError):
            self._fail(conn, "ConnectionError", end)
            return
        check = conn.check
        if code in RETRY_CODES or (
            code == DUPLICATE_KEY and "UniqueViolation" in getattr(check, "retry_on", ())
        ):
            self.recorder.record(conn.name, conn.started_ns, end, Status.RETRY)  # as on a thread
        else:
            self._record_failure(conn, type(exc).__name__, end)
        self._count()
        conn.expected = 0
        if getattr(check, "block", False) and not self._rolled_back(conn):
            return
        self.later.append(conn)  # its next request on the loop's next turn (no recursion)

    def _rolled_back(self, conn: Connection) -> bool:
        """A transaction failed part-way: roll it back, outside any request's time, so the next
        request starts clean (a deadlock has already rolled it back: then this is a no-op)."""
        channel: Any = conn.channel
        try:
            channel.db.rollback()
            return True
        except MySQLdb.Error:
            self._unregister(conn)
            with contextlib.suppress(Exception):  # thrown away; the next open reports problems
                conn.drop()
            conn.channel = None
            self.idle.append(conn)
            return False


class MySqlWire:
    """The SQL workloads' statements as requests for ``MyEventLoop``: each statement with its
    parameters quoted in exactly as ``MySQLDriver._query`` does on a thread (ints as digits, strings
    escaped and quoted, None as NULL). A transaction is one request: BEGIN, each statement, COMMIT,
    one round trip each on one connection, each sent when the previous one's result is in (what
    ``MySQLDriver.begin`` / ``commit`` and sysbench send)."""

    def __init__(self, driver: Any) -> None:
        self._driver = driver  # its connection escapes strings (its charset, its server's sql_mode)
        self._templates: dict[str, bytes] = {}

    def expresses(self, params: Any) -> bool:
        """Whether every parameter has a literal here (int, str, None); others need the cursor."""
        return all(type(v) in (int, str) or v is None for v in params)

    def _step(self, sql: str, params: Any) -> bytes:
        template = self._templates.get(sql)
        if template is None:
            template = self._templates[sql] = sql.encode("utf8")
        if not params:
            return template
        # the session's own escaping, as on a thread; between a lost session and its reconnection
        # (requests are drawn before the connection reopens) the library's, the same for utf8mb4
        quote = getattr(self._driver.conn, "string_literal", None) or MySQLdb.string_literal
        return template % tuple(
            b"%d" % v if type(v) is int else (b"NULL" if v is None else quote(v.encode("utf8")))
            for v in params
        )

    def quoted(self, sql: str, params: Any) -> bytes:
        """``sql`` with ``params`` (int, str, None) quoted in, as a thread sends it."""
        return self._step(sql, params)

    def statement(self, name: str, sql: str, params: Any) -> tuple[str, bytes, int, None]:
        """One statement on its own (autocommit), its rows received. Hot path (a point select per
        operation): one int parameter, the statement seen before, skips ``_step``."""
        template = self._templates.get(sql)
        if template is not None and len(params) == 1 and type(params[0]) is int:
            return name, template % (b"%d" % params[0],), 1, None
        return name, self._step(sql, params), 1, None

    def int_statements(self, name: str, sql: str, values: list[int]) -> list[tuple[str, bytes, int, None]]:
        """``statement(name, sql, (v,))`` for each of ``values`` (a block of point selects), made in C
        where the compiled part is built (``_fastloop.int_requests``), else in one comprehension."""
        template = self._templates.get(sql)
        if template is None:
            template = self._templates[sql] = sql.encode("utf8")
        make = compiled.int_requests()
        if make is not None and template.count(b"%") == 1 and b"%s" in template:
            head, tail = template.split(b"%s")  # no other conversion: the digits go in between
            with contextlib.suppress(OverflowError):  # an id past 64 bits: the comprehension has it
                return make(name, head, tail, values, False)  # type: ignore[no-any-return]
        return [(name, template % (b"%d" % v,), 1, None) for v in values]

    def uniform_selects(self, name: str, sql: str, rng: Any, low: int, count: int) -> Any:
        """The endless ``statement(name, sql, (low + floor(rng.random() * count),))``, made one at a
        time in C (``_fastloop.UniformSelects``); None where the compiled part is not built, the
        range is past what a double draws exactly, or the statement holds another conversion."""
        make = compiled.uniform_selects()
        template = self._templates.get(sql) or self._templates.setdefault(sql, sql.encode("utf8"))
        if make is None or not 1 <= count <= 2**53 or not -(2**62) < low < 2**62:
            return None
        if template.count(b"%") != 1 or b"%s" not in template:
            return None
        head, tail = template.split(b"%s")  # the digits go in between
        return make(name, head, tail, rng.getrandbits, low, count, False)

    def transaction(
        self, name: str, statements: Any, *, block: bool = True, retry_on: tuple[str, ...] = ()
    ) -> tuple[str, bytes, int, Any]:
        """``statements`` in order in one request; between BEGIN and COMMIT when ``block``. A
        deadlock or lock wait timeout, or an error whose kind is in ``retry_on``, is a RETRY."""
        steps = [self._step(sql, params) for sql, params in statements]
        if block:
            steps = [b"BEGIN", *steps, b"COMMIT"]
        return name, steps[0], 1, Steps(steps, retry_on, block)

    def dialogue(
        self,
        name: str,
        steps: Callable[[], Generator[Statement, Any, Any]],
        *,
        aborts: tuple[type[BaseException], ...] = (),
    ) -> tuple[str, bytes, int, Dialogue]:
        """A transaction whose statements depend on earlier answers (TPC-C's): BEGIN, then each
        statement ``steps()`` yields as ``(kind, sql, params)``, then COMMIT, one round trip each, as
        ``PostgresSqlWire.dialogue`` (``steps`` is called once here; a thread calls it once per
        attempt). Its parameters are quoted in by the connection's ``literal``, as the cursor does on
        a thread (Decimal, datetime included), and its answers are the rows as the cursor converts
        them (``Dialogue``)."""
        return name, b"BEGIN", 1, Dialogue(self._driver, steps(), aborts)


Statement = tuple[str, str, Sequence[Any]]  # (kind: the SqlDriver method answering it, sql, params)
ROLLBACK = b"ROLLBACK"


def _user_abort(result: Any) -> Status:
    return Status.USER_ABORT


class _Raise:
    """The check of the ROLLBACK sent after a transaction's own code raised: the request then
    fails under that exception's name, as the thread's ``sqlkit.transaction`` re-raises it after
    its rollback."""

    __slots__ = ("exc",)

    def __init__(self, exc: Exception) -> None:
        self.exc = exc

    def __call__(self, result: Any) -> Any:
        raise self.exc


class Dialogue:
    """The check of a ``MySqlWire.dialogue`` request: it receives each statement's result and answers
    the transaction's generator with what ``MySQLDriver.<kind>`` returns on a thread (``fetchone``
    the first row or None, ``fetchall`` every row, ``execute`` the affected row count), then gives
    the next step. The rows come from mysqlclient's result with the connection's converters, as the
    cursor's ``fetch_row`` gives them (DECIMAL as Decimal, CHAR as str, TIMESTAMP as datetime), so
    the values a transaction computes with and writes back are the thread's. One of ``aborts``
    raised by the generator: ROLLBACK, USER_ABORT; any other exception: ROLLBACK, then the request
    fails under its name (``_Raise``). A server error part-way: the loop rolls back (``block``)."""

    __slots__ = ("_aborts", "_driver", "_kind", "_statements")
    block = True  # MyEventLoop._failed rolls the transaction back
    retry_on: tuple[str, ...] = ()  # a deadlock or lock wait timeout alone is a RETRY

    def __init__(
        self, driver: Any, statements: Generator[Statement, Any, Any], aborts: tuple[type[BaseException], ...]
    ) -> None:
        self._driver = driver
        self._statements = statements
        self._aborts = aborts
        self._kind = ""  # the kind of the statement whose result comes next; "" for BEGIN

    def __call__(self, result: Any) -> Any:
        kind, conn = self._kind, self._driver.conn
        answer: Any = None
        if kind == "execute":
            answer = int(conn.affected_rows())
        elif kind:
            rows = result.fetch_row(0) if result is not None else ()
            answer = list(rows) if kind == "fetchall" else (rows[0] if rows else None)
        try:
            self._kind, sql, params = self._statements.send(answer)
            query = sql.encode("utf8")
            if params:  # as the cursor's _mogrify: each parameter by the connection's literal
                query = query % tuple(map(conn.literal, params))
        except StopIteration:
            return b"COMMIT", 1, None
        except self._aborts:
            return ROLLBACK, 1, _user_abort
        except Exception as exc:  # the transaction's own code failed between two round trips
            return ROLLBACK, 1, _Raise(exc)
        return query, 1, self
