"""What flows through the event loops: requests, their steps and checks, and the connections and
channels that carry them (``event_loop.EventLoop`` runs them; workloads and drivers build them)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Protocol

from benchwright.runner.measure import Status

# Status.OK read once: on Python 3.11 an Enum class attribute goes through EnumType.__getattr__'s
# slow path (about 1,000 instructions, measured with callgrind), once per operation otherwise
OK, NOT_FOUND = Status.OK, Status.NOT_FOUND

# A check gets the request's last reply and returns its Status, or a follow-up Step.
Check = Callable[[Any], Any]
# What one round trip sends: the payload (RESP bytes; for libpq, SQL text and parameters), the number
# of replies it expects and the check of the last one (None: OK unless the server sent an error).
Step = tuple[Any, int, "Check | None"]
Request = tuple[str, Any, int, "Check | None"]  # the operation's name, then its first step


def reply_not_none(reply: Any) -> Status:
    """A check: the reply is not nil (YCSB's GET of a string record), else NOT_FOUND. The compiled
    hot path recognises this check and judges the reply's bytes without building it."""
    return NOT_FOUND if reply is None else OK


def reply_nonempty(reply: Any) -> Status:
    """A check: the reply is not empty, nil or zero (YCSB's HGETALL, LRANGE, SMEMBERS, ZRANGE of a
    record), else NOT_FOUND; compiled as ``reply_not_none`` is."""
    return OK if reply else NOT_FOUND


def then_if_found(read: Step, write: Step) -> Step:
    """``read``, then ``write`` in the same request when the read's check says OK (YCSB's
    read-modify-write); a read that found nothing ends the request with its status."""
    payload, replies, check = read
    assert check is not None, "the read step decides whether the record was found"

    def after_read(reply: Any) -> Any:
        status = check(reply)
        return write if status is OK else status

    return payload, replies, after_read


class Steps:
    """A request's check that sends the request's remaining steps one after another, whatever each
    returns, on the same connection (a transaction's statements, BEGIN ... COMMIT): the request is
    OK when the last step's result is in. ``steps`` holds every step's payload, the first one
    included; ``at`` is the step in flight. The compiled hot path runs such a request itself (libpq
    and MySQL)."""

    __slots__ = ("at", "block", "retry_on", "steps")

    def __init__(self, steps: list[Any], retry_on: tuple[str, ...] = (), block: bool = True) -> None:
        self.steps = steps
        self.at = 0
        self.retry_on = retry_on  # error kinds that make the request a RETRY (as on a thread)
        self.block = block  # the steps are one transaction: a failure part-way is rolled back

    def __call__(self, result: Any) -> Any:
        self.at += 1
        return OK if self.at >= len(self.steps) else (self.steps[self.at], 1, self)


class ReplyParser(Protocol):
    def feed(self, data: Any, offset: int = ..., length: int = ...) -> None: ...
    def gets(self) -> Any: ...


@dataclass
class Channel:
    """What a driver lends the event loop: its connected socket (non-blocking from now on) and a
    parser that returns replies one by one, False when it needs more bytes, and server errors as
    exception instances rather than raising them."""

    sock: Any
    parser: ReplyParser
    reply_timeout_s: float = 10.0  # a request unanswered this long fails and drops the connection
    reply_error: Callable[[str], Exception] | None = None  # the parser's class for an error reply


class Connection:
    """One client of the loop: its channel, its own stream of requests and the one in flight."""

    def __init__(
        self,
        open_channel: Callable[[], Channel],
        drop: Callable[[], None],
        requests: Iterator[Request],
        limit: int | None,
    ) -> None:
        self.open_channel = open_channel  # (re)connects: blocking, raises like the driver does
        self.drop = drop
        self.requests = requests
        self.limit = limit
        self.channel: Channel | None = None
        self.issued = 0
        self.name = ""
        self.expected = 0
        self.got = 0  # replies of the request in flight received so far
        self.failed: Exception | None = None  # the first server error among them
        self.check: Check | None = None
        self.reply: Any = None  # libpq: the result of the step in flight, once received
        self.started_ns = 0
        self.payload: Any = b""  # the step in flight
        self.unsent = memoryview(b"")
        self.timeout: float | None = None  # the socket's own timeout, restored when the loop ends
        self.fd = -1  # the channel's descriptor while the poller watches it
        self.events = 0  # what the poller watches on it
        self.index = 0  # the client's number (its thread index in a threaded run)
        self.failing_since = 0  # end of this connection's first failed request in a run of failures
        self.streak = 0
        self.slow_backoff = 0  # requests to run here before the C part is offered it again

    @property
    def finished(self) -> bool:
        return self.limit is not None and self.issued >= self.limit


def protocol_error(conn: Connection) -> str:
    """The class name of the error the channel's parser raises on the bytes it holds."""
    try:
        conn.channel.parser.gets()  # type: ignore[union-attr]
    except Exception as exc:
        return type(exc).__name__
    return "ProtocolError"


def sleep_until(start_ns: int) -> None:
    """Wait for the common start instant (before the first request: not on the hot path)."""
    wait_ns = start_ns - time.perf_counter_ns()
    if wait_ns > 0:
        time.sleep(wait_ns / 1e9)
