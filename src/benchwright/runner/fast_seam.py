"""The seam between the event loops and their compiled hot path (``_fastloop.c``), as data.

Why: the C part used to read and write some two dozen Python attributes by name (``loop.recorder``,
``channel.pgconn``, ``conn.issued``, ...), so renaming one in Python broke the C loop at run time, far
from the rename. Now Python hands C three fixed-shape tuples and C reads them by position:

- ``LoopSpec``, once per loop (``FastLoop(spec)``): the loop's epoll descriptor, the callbacks C
  calls (the hand-back, the recorder's entry points, closing a run of failures) and the checks and
  statuses it recognises by identity;
- ``ConnectionSpec``, once per ``take``: what one connection needs (its protocol, socket, request
  iterator, counters and its client library's handle);
- ``HandBack``, from C: the connection's state when it comes back (``restore`` writes it where the
  Python loop keeps it).

C exports the field names it expects (``_fastloop.LOOP_SPEC_FIELDS``, ``CONNECTION_SPEC_FIELDS``,
``HANDBACK_FIELDS``); ``compiled.py`` refuses a build whose names differ from these classes' and
tests/unit/test_fast_seam.py compares them, so a field moved on one side only fails loudly.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from operator import attrgetter
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from benchwright.runner.loop_parts import Connection

# The protocol a connection speaks (``_fastloop.PQ`` / ``RESP`` / ``MY``).
PQ, RESP, MY = 1, 2, 3
NS = 1_000_000_000

Buffers = tuple[list[int], list[int]]  # an operation's OK requests: their start and end instants


class LoopSpec(NamedTuple):
    """What the C part of one loop holds: where it waits, whom it calls, what it recognises."""

    epfd: int  # the loop's epoll descriptor: C waits on it for every connection
    handback: Callable[[Connection, int, int, Any, Any], None]  # (conn, why, end_ns, detail, HandBack)
    close_window: Callable[[Connection, int], None]  # the first success closes a run of failures
    record: Callable[[str, int, int, Any], None]  # recorder.record(name, start_ns, end_ns, status)
    flush: Callable[[], None]  # recorder.flush: keeps its pending buffers small
    completed: dict[str, Buffers]  # recorder.completed: name -> (starts, ends), cleared in place
    completed_buffers: Callable[[str], Buffers]  # makes a name's entry in ``completed``
    not_found: Any  # Status.NOT_FOUND, recorded for a check's miss
    rows_found: Any  # libpq (and MySQL: rows_found) checks judged by row count (identity), or None
    rows_changed: Any
    not_none: Any  # RESP checks judged from the reply's bytes, or None
    nonempty: Any
    steps_type: Any  # loop_parts.Steps (a script C runs itself), or None
    steps_of: Callable[[Any], list[Any]]  # a Steps object's list of step payloads


class ConnectionSpec(NamedTuple):
    """What C needs of one connection it takes; built at the take (``EventLoop._connection_spec``)."""

    conn: Connection  # opaque to C: given back to ``handback`` and ``close_window``
    kind: int  # PQ, RESP or MY
    fd: int  # the socket epoll reports on
    requests: Iterator[Any]  # the connection's requests (loop_parts.Request), drawn by C
    limit: int  # requests it may issue in all; -1: no limit
    issued: int  # issued so far
    failing: bool  # a run of failures is open
    reply_timeout_ns: int  # a reply overdue this long comes back as TIMEOUT
    pgconn: int  # libpq: the PGconn pointer; 0 otherwise
    prepared: dict[bytes, bytes] | None  # libpq: SQL text -> statement name on this session
    mysql: Any  # MySQL: mysqlclient's MYSQL handle (a capsule); None otherwise


class HandBack(NamedTuple):
    """The connection's state as C hands it back (``_fastloop.HandBack`` has these fields, in order)."""

    issued: int
    limit: int | None  # its limit (what was issued, once the requests ran out); None: no limit
    request: tuple[str, Any, int, Any] | None  # the request in flight, or None
    payload: Any  # its step in flight
    step: int  # a Steps request: the step in flight; -1 otherwise
    started_ns: int
    unread: bytes | None  # RESP: bytes read past the last whole reply, for the channel's parser


def loop_spec(loop: Any, **checks: Any) -> LoopSpec:
    """The spec of ``loop`` (an ``EventLoop``); ``checks`` names those of LoopSpec's check fields the
    loop's protocol has (the rest are None)."""
    recorder = loop.recorder
    return LoopSpec(
        epfd=loop.poller.fileno(),
        handback=loop._handed_back,
        close_window=loop._close_window,
        record=recorder.record,
        flush=recorder.flush,
        completed=recorder.completed,
        completed_buffers=recorder.completed_buffers,
        not_found=checks.get("not_found"),
        rows_found=checks.get("rows_found"),
        rows_changed=checks.get("rows_changed"),
        not_none=checks.get("not_none"),
        nonempty=checks.get("nonempty"),
        steps_type=checks.get("steps_type"),
        steps_of=attrgetter("steps"),
    )


def connection_spec(conn: Connection, kind: int, reply_timeout_s: float, **handles: Any) -> ConnectionSpec:
    """The spec of ``conn`` for the take; ``handles``: ``pgconn``, ``prepared`` (libpq) or ``mysql``."""
    return ConnectionSpec(
        conn=conn,
        kind=kind,
        fd=conn.fd,
        requests=conn.requests,
        limit=-1 if conn.limit is None else conn.limit,
        issued=conn.issued,
        failing=bool(conn.failing_since),
        reply_timeout_ns=int(reply_timeout_s * NS),
        pgconn=handles.get("pgconn", 0),
        prepared=handles.get("prepared"),
        mysql=handles.get("mysql"),
    )


def restore(conn: Connection, back: Any) -> None:
    """Write the state C handed back (a ``HandBack``) where the Python loop keeps it, as
    ``_send_next`` would have set it up: the request in flight, its step, the parser's bytes."""
    conn.issued, conn.limit = back.issued, back.limit
    request = back.request
    if request is None:
        conn.expected = 0
    else:
        conn.name, _, conn.expected, conn.check = request
        conn.payload = back.payload
        conn.started_ns = back.started_ns
        conn.reply = None
        if back.step >= 0:
            conn.check.at = back.step  # type: ignore[union-attr]
    if back.unread:  # never more than a reply's worth: the parser goes on from it
        conn.channel.parser.feed(back.unread)  # type: ignore[union-attr]
