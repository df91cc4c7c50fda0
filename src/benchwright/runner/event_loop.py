"""Many connections on one thread: the client model of redis-benchmark and memtier_benchmark.

A thread per connection costs a GIL hand-off and a context switch around every request in Python:
with 50 Redis clients and 16-command pipelines, 3.5-4 us of client CPU per GET on threads, 1.5 us on
one event loop per process, 0.5 us for redis-benchmark itself (benchmarks/bench_redis.py).

A workload whose requests can be written ahead in the server's wire format (``Workload.wire_requests``)
runs this way on drivers that hand out a channel: a socket and a RESP parser (``Channel``) here,
libpq (``event_loop_pq``), mysqlclient (``event_loop_my``).
Each connection sends one request, waits for all its replies, then sends the next, as a thread would.
The loop times every request from just before its first byte is sent until the poller reports its
last reply (one clock reading per wake-up: replies that arrived together are not charged for each
other's handling, ~40 us on average at 4 connections and a 2 ms server): the wrapper measures, never
a driver. No pacing here: a rate-limited phase runs on threads, where each thread keeps a schedule.

A request may look at its reply (``check``): the check returns the request's ``Status`` (YCSB's
NOT_FOUND), or a follow-up step sent on the same connection inside the same timed request (a scan's
second round trip, read-modify-write, the statements of a transaction).
"""

from __future__ import annotations

import contextlib
import select
import time
from typing import Any

from benchwright.runner import compiled, fast_seam
from benchwright.runner.loop_parts import (  # the loop's vocabulary, re-exported (__all__)
    Channel,
    Check,
    Connection,
    ReplyParser,
    Request,
    Step,
    protocol_error,
    reply_nonempty,
    reply_not_none,
    sleep_until,
    then_if_found,
)
from benchwright.runner.measure import Recorder, Status

__all__ = [
    "BROKEN",
    "NS",
    "READ",
    "WRITE",
    "Channel",
    "Check",
    "Connection",
    "EventLoop",
    "ReplyParser",
    "Request",
    "Step",
    "reply_nonempty",
    "reply_not_none",
    "sleep_until",
    "then_if_found",
]

NS = 1_000_000_000
READ, WRITE = select.POLLIN, select.POLLOUT  # the same bits in epoll and poll
BROKEN = select.POLLERR | select.POLLHUP  # reported whatever is asked for: the read finds out what
TICK_S = 0.05  # how often the loop looks at the stop flag, the deadline and overdue requests
READ_BUFFER = 65536
# Status.OK read once: on Python 3.11 an Enum class attribute goes through EnumType.__getattr__'s
# slow path (about 1,000 instructions, measured with callgrind), once per operation otherwise
OK, NOT_FOUND = Status.OK, Status.NOT_FOUND


class EventLoop:
    """Runs ``connections`` until each reaches its limit, the deadline passes or ``stop`` is set."""

    # Connections one worker process drives before the default adds another, up to
    # PROCESSES_PER_CORE per core (``engine.client_model.default_processes``). Redis answers in
    # microseconds, so replies share wake-ups: one loop drives 50, as redis-benchmark's thread does.
    CONNECTIONS_PER_PROCESS, PROCESSES_PER_CORE = 50, 1
    COMPILED_MODEL = "event loop (RESP hot path in C)"  # measurement.method, when the C part runs
    # Requests a connection runs here after the C part handed one back as SLOW before it is offered
    # again: a workload whose requests all need Python (YCSB's checks) does not bounce every time.
    SLOW_BACKOFF = 64

    def __init__(
        self,
        connections: list[Connection],
        recorder: Recorder,
        deadline_ns: int,
        stop: Any,
        errors: dict[str, int],
        abort_after_s: float,
        windows: dict[int, list[tuple[int, int | None, int]]] | None = None,
    ) -> None:
        self.connections = connections
        self.recorder = recorder
        self.deadline_ns = deadline_ns
        self.stop = stop
        self.errors = errors
        self.abort_after_ns = int(abort_after_s * NS)
        self.windows = windows  # per client: its runs of failures (see engine._thread_loop)
        # epoll (or poll) itself, not the selectors module: its Python layer cost a few microseconds
        # per wake-up, as much as the rest of a request's handling
        self.poller: Any = select.epoll() if hasattr(select, "epoll") else select.poll()
        self.poll_timeout = TICK_S if hasattr(select, "epoll") else TICK_S * 1000  # poll: ms
        self.watched: dict[int, Connection] = {}
        self.buffer = bytearray(READ_BUFFER)
        self.idle: list[Connection] = []  # dropped (or not yet opened): to connect before the next request
        self.later: list[Connection] = []  # connected, nothing in flight: their next request on the next turn
        self.closing = False  # no new requests: deadline, stop flag or abort
        self.failing_since = 0
        self.last_failed = ""
        self.recorded = 0  # the libpq loop's count between flushes (this loop's recorder settles on ticks)
        self.woke_ns = 0  # when the poller last returned: the end of every request it completed
        self.completed = recorder.completed  # cleared in place by the recorder, never replaced
        self.fast: Any = self._compiled()  # the compiled hot path (compiled.py), or None

    @property
    def model(self) -> str:
        """What the result document says timed the requests."""
        return self.COMPILED_MODEL if self.fast is not None else "event loop"

    def _compiled(self) -> Any:
        """The C part for this loop's protocol (RESP here), or None: this loop runs alone."""
        return compiled.fast_loop(self, not_found=NOT_FOUND, not_none=reply_not_none, nonempty=reply_nonempty)

    # ------------------------------------------------------------------ the loop
    def run(self, start_ns: int = 0) -> str | None:
        """Wait for the common start instant, then run; return a reason when the loop gave up
        because every request failed for a while."""
        sleep_until(start_ns)
        self.idle = list(self.connections)
        reason: str | None = None
        next_tick = time.perf_counter_ns()
        wait = self._wait
        try:
            while True:
                if self.idle and not self.closing:
                    self._start_idle()
                if self.later:
                    later, self.later = self.later, []
                    for waiting in later:
                        if waiting.channel is not None:
                            self._send_next(waiting)
                watched = self.watched
                if watched:
                    ready = wait(0 if self.later else self.poll_timeout)
                    for fd, mask in ready:
                        conn = watched.get(fd)
                        if conn is None:
                            continue  # dropped by an earlier event of the same wake-up
                        if mask & WRITE:
                            self._write(conn)
                        if mask & (READ | BROKEN):
                            self._read(conn)
                elif self.closing or not self.idle:
                    return reason
                # else every connection is down: the next turn retries them (bounded by the abort)
                now = time.perf_counter_ns()
                if now >= next_tick:
                    next_tick = now + int(TICK_S * NS)
                    reason = self._tick(now) or reason
        finally:
            self._release()

    def _wait(self, timeout: float) -> list[tuple[int, int]]:
        """Wait for the poller; note when it returned (the end of every request this wake-up
        completes). Returns the ready descriptors and their events. With the C part, it waits and
        drives its connections until this loop has work, and returns the events of the others."""
        fast = self.fast
        if fast is not None:
            ready: list[tuple[int, int]] = fast.poll(timeout)
            self.woke_ns = fast.woke_ns
            return ready
        ready = self.poller.poll(timeout)
        self.woke_ns = time.perf_counter_ns()
        return ready

    def _release(self) -> None:
        """The loop is over: close every run of failures, hand each connection back as the driver
        lent it and close the poller."""
        if self.fast is not None:
            for conn, issued in self.fast.close():  # those it still held
                conn.issued = issued
        for conn in self.connections:
            self._close_window(conn, None)
            self._unregister(conn)
            if conn.channel is not None:
                with contextlib.suppress(Exception):
                    self._detach(conn)
        if hasattr(self.poller, "close"):  # epoll holds a descriptor; poll does not
            self.poller.close()

    def _tick(self, now: int) -> str | None:
        fast = self.fast
        if fast is not None:
            # the C part records successes without touching the loop; the loop learns of them here,
            # so an abort for "every operation failed" can come one tick (50 ms) late
            if fast.succeeded():
                self.failing_since = 0
            fast.expire(now)  # its overdue replies come back as TIMEOUT (the check below sees no others)
        self.recorder.settle()  # the OK requests of the last tick, to their intervals
        if now >= self.deadline_ns or self.stop.is_set():
            self.closing = True
            if fast is not None:
                fast.closing = True
        for conn in list(self.watched.values()):
            channel: Any = conn.channel
            if conn.expected and now - conn.started_ns > channel.reply_timeout_s * NS:
                self._fail(conn, "TimeoutError", now)
        if self.failing_since and now - self.failing_since > self.abort_after_ns:
            self.closing = True
            if fast is not None:
                fast.closing = True
            return f"every operation failed for {self.abort_after_ns / NS:.0f} s (last: {self.last_failed})"
        return None

    # ------------------------------------------------------------------ one connection
    def _start_idle(self) -> None:
        waiting, self.idle = self.idle, []
        for conn in waiting:
            if conn.finished or not self._next_request(conn):
                continue  # nothing left to send: this connection is done
            conn.started_ns = time.perf_counter_ns()  # a reconnection is part of the request's time
            try:
                conn.channel = conn.open_channel()
            except Exception as exc:
                self._record_failure(conn, type(exc).__name__, time.perf_counter_ns())
                self.idle.append(conn)
                continue
            self._attach(conn)
            self._begin(conn)

    def _next_request(self, conn: Connection) -> bool:
        request = next(conn.requests, None)
        if request is None:
            conn.limit = conn.issued  # the workload has nothing more for this connection
            return False
        conn.name, conn.payload, conn.expected, conn.check = request
        conn.got, conn.failed = 0, None
        conn.issued += 1
        return True

    def _send_next(self, conn: Connection) -> None:
        """The connection's next request, sent now (by the C part when it takes the connection).
        Hot path (once per operation): what ``finished`` and ``_next_request`` do is written out
        here, saving two calls per operation."""
        if self.fast is not None and self._taken(conn):
            return
        limit = conn.limit
        if self.closing or (limit is not None and conn.issued >= limit):
            self._unregister(conn)  # done: the loop ends when no connection is left in the poller
            return
        request = next(conn.requests, None)
        if request is None:
            conn.limit = conn.issued  # the workload has nothing more for this connection
            self._unregister(conn)
            return
        conn.name, conn.payload, conn.expected, conn.check = request
        conn.got, conn.failed = 0, None
        conn.issued += 1
        conn.started_ns = time.perf_counter_ns()
        self._begin(conn)

    # ------------------------------------------------------------------ the compiled hot path
    def _taken(self, conn: Connection) -> bool:
        """The C part takes the connection from its next request on, unless the connection came back
        as SLOW recently (``SLOW_BACKOFF``); False: this loop sends the request."""
        if conn.slow_backoff:
            conn.slow_backoff -= 1
            return False
        conn.expected = 0  # nothing in flight that this loop must time out: the C part does
        self.fast.take(self._connection_spec(conn))
        return True

    def _connection_spec(self, conn: Connection) -> fast_seam.ConnectionSpec:
        """What the C part reads of the connection it takes (fast_seam.py): a RESP socket here."""
        return fast_seam.connection_spec(conn, fast_seam.RESP, conn.channel.reply_timeout_s)  # type: ignore[union-attr]

    def _handed_back(self, conn: Connection, why: int, end: int, detail: Any, state: Any) -> None:
        """The C part gives a connection back, its state (``fast_seam.HandBack``) written where
        ``_send_next`` sets it (``detail``: the server's error, or how much of a partial send went
        out): go on from there as this loop would have."""
        fast_seam.restore(conn, state)
        if why == compiled.SLOW:
            conn.got, conn.failed = 0, None
            conn.slow_backoff = self.SLOW_BACKOFF
            self._begin(conn)
        elif why == compiled.FLUSH:
            conn.got, conn.failed = 0, None
            self._resume_send(conn, detail)
        elif why == compiled.DONE:
            self._unregister(conn)
        elif why == compiled.ERROR:
            self._server_error(conn, detail, end)
        elif why == compiled.TIMEOUT:
            self._fail(conn, "TimeoutError", end)
        elif why == compiled.PROTOCOL:  # the parser has the bad bytes: it names the error
            self._fail(conn, protocol_error(conn), end)
        elif why == compiled.IN_TRANSACTION:
            self._left_in_transaction(conn)
        elif why == compiled.REPLY:  # an error reply, unread: this loop reads and names it
            self._read(conn)
        else:  # BROKEN
            self._fail(conn, "ConnectionError", end or time.perf_counter_ns())

    def _resume_send(self, conn: Connection, sent: int | None) -> None:
        """The C part sent ``sent`` bytes of the request: the rest when the socket is writable."""
        conn.unsent = memoryview(conn.payload)[sent or 0 :]
        if conn.events != READ | WRITE:
            self.poller.modify(conn.fd, READ | WRITE)
            conn.events = READ | WRITE

    def _server_error(self, conn: Connection, message: Any, end: int) -> None:
        """An error among the request's replies (its message): the request fails under the error's
        class, as the channel's parser would name it; the connection goes on."""
        reply_error = getattr(conn.channel, "reply_error", None)
        kind = type(reply_error(message)).__name__ if reply_error is not None else "ResponseError"
        self._record_failure(conn, kind, end)
        conn.expected = 0
        self._send_next(conn)

    def _left_in_transaction(self, conn: Connection) -> None:
        """The request left a transaction open (libpq only)."""
        raise NotImplementedError

    # ------------------------------------------------------------------ the protocol (RESP here)
    def _attach(self, conn: Connection) -> None:
        """A freshly opened channel joins the loop."""
        assert conn.channel is not None
        conn.timeout = conn.channel.sock.gettimeout()
        conn.channel.sock.setblocking(False)
        self._watch(conn, conn.channel.sock.fileno())

    def _detach(self, conn: Connection) -> None:
        """The loop is over: the channel goes back to the driver as it was lent."""
        assert conn.channel is not None
        conn.channel.sock.settimeout(conn.timeout)

    def _begin(self, conn: Connection) -> None:
        """Send the step in ``conn.payload``. Hot path: a request goes out in one ``send`` almost
        always, so that case neither slices a memoryview nor asks the poller for anything;
        ``_write`` finishes a partial send when the socket is writable again."""
        payload = conn.payload
        assert conn.channel is not None
        try:
            sent = conn.channel.sock.send(payload)
        except BlockingIOError:
            sent = 0
        except OSError:
            self._fail(conn, "ConnectionError", time.perf_counter_ns())
            return
        if sent == len(payload):
            if conn.events != READ:
                self.poller.modify(conn.fd, READ)
                conn.events = READ
            return
        conn.unsent = memoryview(payload)[sent:]
        if conn.events != READ | WRITE:
            self.poller.modify(conn.fd, READ | WRITE)
            conn.events = READ | WRITE

    def _write(self, conn: Connection) -> None:
        assert conn.channel is not None
        try:
            sent = conn.channel.sock.send(conn.unsent)
        except BlockingIOError:
            sent = 0
        except OSError:
            self._fail(conn, "ConnectionError", time.perf_counter_ns())
            return
        conn.unsent = conn.unsent[sent:]
        events = READ | WRITE if len(conn.unsent) else READ
        if events != conn.events:  # a system call: only when a partial send starts or ends
            self.poller.modify(conn.fd, events)
            conn.events = events

    def _read(self, conn: Connection) -> None:
        channel = conn.channel
        if channel is None:
            return
        try:
            n = channel.sock.recv_into(self.buffer)
        except BlockingIOError:
            return
        except OSError:
            n = 0
        if not n:
            self._fail(conn, "ConnectionError", time.perf_counter_ns())
            return
        parser = channel.parser
        got, expected, failed = conn.got, conn.expected, conn.failed
        reply = None
        try:
            parser.feed(self.buffer, 0, n)
            gets = parser.gets  # once per reply of a pipeline: bound once
            while got < expected:
                reply = gets()
                if reply is False:
                    break
                got += 1
                if failed is None and isinstance(reply, Exception):
                    failed = reply  # the first server error decides the request's status
        except Exception as exc:  # a protocol error: the stream cannot be trusted any more
            self._fail(conn, type(exc).__name__, time.perf_counter_ns())
            return
        if got < expected:
            conn.got, conn.failed = got, failed
            return
        end = self.woke_ns  # not now: replies that arrived together are not charged for each other
        # hot path, once per operation: the success noted inline (no call), an OK request appended to the
        # recorder's ``completed`` lists (no call; the tick settles them)
        if failed is None:
            if conn.check is None:
                name = conn.name
                starts, ends = self.completed.get(name) or self.recorder.completed_buffers(name)
                starts.append(conn.started_ns)
                ends.append(end)
                self.failing_since = 0
                if conn.failing_since:
                    self._close_window(conn, end)
            elif self._checked(conn, reply, end):
                return  # a follow-up step is on its way
        else:
            self._record_failure(conn, type(failed).__name__, end)
        conn.expected = 0
        self._send_next(conn)

    def _checked(self, conn: Connection, reply: Any, end: int) -> bool:
        """Record what the request's check makes of its last reply; True when the check asked for a
        follow-up step instead, which has then been sent (the request goes on, its clock running)."""
        check = conn.check
        assert check is not None
        try:
            outcome = check(reply)
        except Exception as exc:  # an unexpected reply: this request fails, the stream is intact
            self._record_failure(conn, type(exc).__name__, end)
            return False
        if type(outcome) is tuple:
            conn.payload, conn.expected, conn.check = outcome
            conn.got, conn.failed = 0, None
            self._begin(conn)
            return True
        if outcome is OK:
            name = conn.name
            starts, ends = self.completed.get(name) or self.recorder.completed_buffers(name)
            starts.append(conn.started_ns)
            ends.append(end)
        else:
            self.recorder.record(conn.name, conn.started_ns, end, outcome)
        self.failing_since = 0  # a success: the loop is not failing (inline, once per operation)
        if conn.failing_since:
            self._close_window(conn, end)
        return False

    # ------------------------------------------------------------------ failures
    def _fail(self, conn: Connection, kind: str, now: int) -> None:
        """The connection broke or a reply is overdue: the request in flight is an error and the
        connection is dropped, to be reopened before its next request (as a thread would)."""
        self._record_failure(conn, kind, now)
        conn.expected = 0
        self._unregister(conn)
        with contextlib.suppress(Exception):
            conn.drop()
        conn.channel = None
        self.idle.append(conn)

    def _record_failure(self, conn: Connection, kind: str, now: int) -> None:
        self.recorder.record(conn.name, conn.started_ns or now, now, Status.ERROR)
        key = f"{conn.name}:{kind}"
        self.errors[key] = self.errors.get(key, 0) + 1
        self.last_failed = conn.name
        if not self.failing_since:
            self.failing_since = now
        if not conn.failing_since:
            conn.failing_since = now
        conn.streak += 1

    def _close_window(self, conn: Connection, until: int | None) -> None:
        if conn.failing_since and self.windows is not None:
            self.windows.setdefault(conn.index, []).append((conn.failing_since, until, conn.streak))
        conn.failing_since = conn.streak = 0

    def _count(self) -> None:
        """One more request recorded through ``record`` (the SQL loops): fold now and then."""
        self.recorded += 1
        if not self.recorded & 0xFFFF:
            self.recorder.flush()  # keeps the pending buffers small when intervals are long

    def _watch(self, conn: Connection, fd: int) -> None:
        self.poller.register(fd, READ)
        self.watched[fd] = conn
        conn.fd, conn.events = fd, READ

    def _unregister(self, conn: Connection) -> None:
        """The poller stops watching the connection (before its socket is closed, never after)."""
        if conn.fd >= 0:
            self.watched.pop(conn.fd, None)
            with contextlib.suppress(KeyError, ValueError, OSError):
                self.poller.unregister(conn.fd)
            conn.fd = -1
