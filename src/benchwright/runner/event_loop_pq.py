"""The event loop over libpq's non-blocking API: many PostgreSQL connections on one thread.

The same client model as the RESP loop (``event_loop.EventLoop``): one request in flight per
connection, each timed from just before it is sent until its result is in. A step's payload is
``(sql, params)``: SQL text with ``$n`` placeholders and text parameters (bytes, None for NULL). The
statement is prepared on the session the first time the connection uses it (a blocking round trip,
charged to that request as a thread's driver would charge it) and then sent with
``PQsendQueryPrepared``; ``PQconsumeInput`` / ``PQisBusy`` / ``PQgetResult`` read the result without
ever blocking. libpq handles TLS itself, so unlike the RESP loop this one also runs over TLS.

A check gets the ``PGresult``. An error result fails the request under its SQLSTATE class name
(``UniqueViolation``), or makes it a RETRY for a serialization failure or a deadlock (as
``SqlDriver.classify`` says on a thread; the loop does not re-run it); inside a transaction the loop
rolls the transaction back before the connection's next request. A lost session fails the request and
the connection is reopened.
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass, field
from typing import Any

from psycopg import OperationalError, pq
from psycopg import errors as pg_errors

from benchwright.runner import compiled, fast_seam
from benchwright.runner.event_loop import READ, WRITE, Connection, EventLoop
from benchwright.runner.loop_parts import Steps
from benchwright.runner.measure import Status

# plain ints: psycopg returns ints, and comparing one with an IntEnum member costs more than the
# comparison itself (measured ~80 ns; these are read on every operation)
_OK = (int(pq.ExecStatus.COMMAND_OK), int(pq.ExecStatus.TUPLES_OK))
_BAD = int(pq.ConnStatus.BAD)
_IDLE = int(pq.TransactionStatus.IDLE)
RETRYABLE = ("SerializationFailure", "DeadlockDetected")  # what SqlDriver.classify calls RETRY
OK, NOT_FOUND = Status.OK, Status.NOT_FOUND  # read once (an Enum attribute is a slow lookup on 3.11)


def rows_found(result: Any) -> Status:
    """A check: the statement returned a row (YCSB's read), else NOT_FOUND. The rows are received
    and parsed by libpq, not copied into Python objects (pgbench does not read them either). The
    loop recognises this check and does the same inline, without a call."""
    return OK if result.ntuples else NOT_FOUND


def rows_changed(result: Any) -> Status:
    """A check: the statement changed a row (YCSB's update, delete), else NOT_FOUND; inlined by
    the loop as ``rows_found`` is."""
    return OK if result.command_tuples else NOT_FOUND


@dataclass
class PqChannel:
    """What the PostgreSQL driver lends the loop: its libpq connection and the statements already
    prepared on that session (SQL text -> statement name; the driver owns it and resets it when it
    reconnects)."""

    pgconn: Any
    prepared: dict[bytes, bytes] = field(default_factory=dict)
    reply_timeout_s: float = 10.0
    encoding: str = "utf-8"
    sock: int = -1  # the session's socket, kept: libpq refuses to name it once the session is lost

    def __post_init__(self) -> None:
        self.sock = int(self.pgconn.socket)


class PqEventLoop(EventLoop):
    """``EventLoop`` with libpq's non-blocking calls in place of a socket and a RESP parser.

    Where the compiled hot path is available (``compiled.py``), it drives each connection while its
    requests are single statements judged by row count or success alone, or fixed scripts of them
    (``Steps``), and hands the connection back for anything else (``EventLoop._handed_back``): this
    class stays the complete loop, the compiled part only its common case."""

    CONNECTIONS_PER_PROCESS = 1  # a loop per connection, up to two per core: see default_processes
    PROCESSES_PER_CORE = 2
    COMPILED_MODEL = "event loop (libpq hot path in C)"

    def _compiled(self) -> Any:
        if not compiled.bind_libpq():
            return None
        return compiled.fast_loop(
            self, rows_found=rows_found, rows_changed=rows_changed, not_found=NOT_FOUND, steps_type=Steps
        )

    def _connection_spec(self, conn: Connection) -> fast_seam.ConnectionSpec:
        channel: Any = conn.channel
        return fast_seam.connection_spec(
            conn,
            fast_seam.PQ,
            channel.reply_timeout_s,
            pgconn=channel.pgconn.pgconn_ptr,
            prepared=channel.prepared,
        )

    def _resume_send(self, conn: Connection, sent: int | None) -> None:
        self._want(conn, READ | WRITE)  # libpq keeps what it did not send: flush when writable

    def _server_error(self, conn: Connection, sqlstate: str | None, end: int) -> None:
        self._refused(conn, _kind_of(sqlstate), end)

    def _left_in_transaction(self, conn: Connection) -> None:
        conn.expected = 0
        if self._rolled_back(conn):
            self._send_next(conn)

    def _attach(self, conn: Connection) -> None:
        channel: Any = conn.channel
        channel.pgconn.nonblocking = 1
        self._watch(conn, channel.sock)

    def _detach(self, conn: Connection) -> None:
        channel: Any = conn.channel
        channel.pgconn.nonblocking = 0

    def _begin(self, conn: Connection) -> None:
        channel: Any = conn.channel
        pgconn = channel.pgconn
        sql, params = conn.payload
        conn.reply = None  # a result left by a request that failed part-way is not this one's
        try:
            name = channel.prepared.get(sql)
            if name is None:
                name = self._prepare(conn, sql)
                if name is None:
                    return  # the server refused the statement: that request failed, the next one goes
            pgconn.send_query_prepared(name, params)
            pending = pgconn.flush()
        except OperationalError:
            self._fail(conn, "ConnectionError", time.perf_counter_ns())
            return
        if pending:
            self._want(conn, READ | WRITE)

    def _prepare(self, conn: Connection, sql: bytes) -> bytes | None:
        channel: Any = conn.channel
        pgconn = channel.pgconn
        name = b"bw_ev_%d" % len(channel.prepared)
        pgconn.nonblocking = 0  # PQprepare waits for its answer in any case; say so
        try:
            result = pgconn.prepare(name, sql)
        finally:
            pgconn.nonblocking = 1
        if result.status == pq.ExecStatus.COMMAND_OK:
            channel.prepared[sql] = name
            return name
        if pgconn.status == _BAD:
            raise OperationalError("the connection to the server was lost")
        # the server refused the statement: that request fails; the connection's next one starts
        # on the loop's next turn, not from here (a statement refused every time must not recurse)
        self._finish(conn, result, time.perf_counter_ns(), defer=True)
        return None

    def _want(self, conn: Connection, events: int) -> None:
        if events != conn.events:
            self.poller.modify(conn.fd, events)
            conn.events = events

    def _write(self, conn: Connection) -> None:
        channel: Any = conn.channel
        try:
            pending = channel.pgconn.flush()
        except OperationalError:
            self._fail(conn, "ConnectionError", time.perf_counter_ns())
            return
        if not pending:
            self._want(conn, READ)

    def _read(self, conn: Connection) -> None:
        channel: Any = conn.channel
        if channel is None or not conn.expected:
            return
        pgconn = channel.pgconn
        try:
            pgconn.consume_input()
            if pgconn.is_busy():
                return
            # a result kept from an earlier wake-up (its ReadyForQuery came later) or the one now in
            result = conn.reply if conn.reply is not None else pgconn.get_result()
            conn.reply = None
            if result is not None and pgconn.is_busy():
                conn.reply = result
                return  # the result is in; ReadyForQuery is not yet
            while pgconn.get_result() is not None:  # nothing more for one statement: drain defensively
                pass
        except OperationalError:
            self._fail(conn, "ConnectionError", time.perf_counter_ns())
            return
        end = self.woke_ns  # as the RESP loop: results that arrived together are not charged for each other
        if result is None:  # no result at all: the session ended under us
            self._fail(conn, "ConnectionError", end)
            return
        check = conn.check
        if result.status not in _OK:
            self._finish(conn, result, end)
            return
        if check is rows_found:  # the hot paths, once per operation: the check written out
            outcome: Any = OK if result.ntuples else NOT_FOUND
        elif check is rows_changed:
            outcome = OK if result.command_tuples else NOT_FOUND
        elif check is None:
            outcome = OK
        else:
            self._finish(conn, result, end)  # a follow-up step may come: the check decides
            return
        # a single statement that succeeded, with its status: _finish written out (autocommit: it
        # leaves no transaction open, nothing to roll back), the OK ones appended to the recorder's
        # ``completed`` lists (no call; the tick settles them)
        if outcome is OK:
            name = conn.name
            starts, ends = self.completed.get(name) or self.recorder.completed_buffers(name)
            starts.append(conn.started_ns)
            ends.append(end)
        else:
            self.recorder.record(conn.name, conn.started_ns, end, outcome)
            self._count()
        self.failing_since = 0
        if conn.failing_since:
            self._close_window(conn, end)
        conn.expected = 0
        self._send_next(conn)

    def _send_next(self, conn: Connection) -> None:
        """``EventLoop._send_next`` and ``_begin`` in one call for the common case (the statement is
        prepared on the session already): the connection's next request, sent now; by the compiled
        part when there is one."""
        if self.fast is not None and self._taken(conn):
            return
        limit = conn.limit
        if self.closing or (limit is not None and conn.issued >= limit):
            self._unregister(conn)
            return
        request = next(conn.requests, None)
        if request is None:
            conn.limit = conn.issued  # the workload has nothing more for this connection
            self._unregister(conn)
            return
        conn.name, payload, conn.expected, conn.check = request
        conn.payload = payload
        conn.issued += 1
        channel: Any = conn.channel
        name = channel.prepared.get(payload[0])
        conn.started_ns = time.perf_counter_ns()
        if name is None:
            self._begin(conn)
            return
        pgconn = channel.pgconn
        try:
            pgconn.send_query_prepared(name, payload[1])
            pending = pgconn.flush()
        except OperationalError:
            self._fail(conn, "ConnectionError", time.perf_counter_ns())
            return
        if pending:
            self._want(conn, READ | WRITE)

    def _finish(self, conn: Connection, result: Any, end: int, defer: bool = False) -> None:
        """The step's result is in: record the request or send its follow-up step."""
        conn.reply = None
        channel: Any = conn.channel
        pgconn = channel.pgconn
        if result.status in _OK:
            if conn.check is None:
                self.recorder.record(conn.name, conn.started_ns, end, Status.OK)
                self.failing_since = 0  # a success: the loop is not failing (inline, once per operation)
                if conn.failing_since:
                    self._close_window(conn, end)
            elif self._checked(conn, result, end):
                return
        elif pgconn.status == _BAD:
            self._fail(conn, "ConnectionError", end)
            return
        else:
            self._refused(conn, _error_kind(result, channel.encoding), end, defer)
            return
        self._next_after(conn, defer)

    def _refused(self, conn: Connection, kind: str, end: int, defer: bool = False) -> None:
        """The server refused the step with an error of ``kind``: a RETRY for a serialization
        failure or a deadlock (as on a thread), else a failure of that kind; then the next request."""
        if kind in RETRYABLE or kind in getattr(conn.check, "retry_on", ()):
            self.recorder.record(conn.name, conn.started_ns, end, Status.RETRY)
        else:
            self._record_failure(conn, kind, end)
        self._next_after(conn, defer)

    def _next_after(self, conn: Connection, defer: bool) -> None:
        """The request is recorded: roll back a transaction it left open, then send the next one."""
        pgconn = conn.channel.pgconn  # type: ignore[union-attr]
        self.recorded += 1  # _count, written out
        if not self.recorded & 0xFFFF:
            self.recorder.flush()
        conn.expected = 0
        if pgconn.transaction_status != _IDLE and not self._rolled_back(conn):
            return
        if defer:
            self.later.append(conn)
        else:
            self._send_next(conn)

    def _rolled_back(self, conn: Connection) -> bool:
        """A request ended inside a transaction (it failed part-way, or its check gave up): roll the
        transaction back, outside any request's time, so the next request starts clean.

        A session lost after the request's result came in (terminated by the server: the result and
        the farewell arrive together) has no transaction to roll back, and libpq refuses even to
        switch modes on it: the connection is dropped, no request fails, and it reopens."""
        channel: Any = conn.channel
        pgconn = channel.pgconn
        result = None
        if pgconn.status != _BAD:
            try:
                pgconn.nonblocking = 0
                result = pgconn.exec_(b"ROLLBACK")
                pgconn.nonblocking = 1
            except OperationalError:  # lost on the way: as if it had been lost before
                result = None  # (a ROLLBACK that came back before the loss is not trusted either)
        if result is not None and result.status == pq.ExecStatus.COMMAND_OK:
            return True
        self._drop(conn)
        return False

    def _drop(self, conn: Connection) -> None:
        """Drop a connection without failing a request (nothing is in flight)."""
        self._unregister(conn)
        with contextlib.suppress(Exception):  # it is thrown away; the next open reports problems
            conn.drop()
        conn.channel = None
        self.idle.append(conn)


def _kind_of(sqlstate: str | None) -> str:
    """The psycopg exception class name for a SQLSTATE, as ``_error_kind`` gives it for a result."""
    cls = pg_errors.lookup(sqlstate) if sqlstate else None
    return cls.__name__ if cls is not None else "DatabaseError"


def _error_kind(result: Any, encoding: str) -> str:
    """The psycopg exception class name for an error result (``UniqueViolation``, ``SerializationFailure``)."""
    try:
        return type(pg_errors.error_from_result(result, encoding=encoding)).__name__
    except Exception:
        return "DatabaseError"
