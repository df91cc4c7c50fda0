"""The SQL workloads' streams as PostgreSQL receives them, recorded on the client's side of the wire.

Why: threads (psycopg: simple queries, its own prepared statements) and the event loops (libpq's
non-blocking calls, made from Python or from C) build their statements in different code, so
comparing what each executor *meant* to send proves little; what reached the socket does. A relay
on 127.0.0.1 sits between an executor and the shared test server, forwards every byte unchanged,
and decodes the frontend messages it passes: each statement run (a simple ``Query``, or a ``Bind``
of a statement ``Parse`` named) as its SQL text and its parameters. Prepared statement names,
protocol (simple or extended) and parameter types are left out: they are how a statement is sent,
not which. A parameter psycopg sends in binary (an int, a Decimal as numeric, a float) is read into
the text the loops send for the same value; any other binary type stays ``(oid, bytes)``, so the
comparison fails rather than guesses. Timestamps (TPC-C's ``datetime.now()``) are CLIENT_CLOCK on
both sides: each executor reads the clock when it runs, so they differ by design.
"""

from __future__ import annotations

import contextlib
import re
import socket
import struct
import threading
import time
from collections.abc import Callable
from decimal import Decimal
from types import TracebackType
from typing import Any, Protocol

Statement = tuple[str, tuple[Any, ...]]  # SQL text, its parameters (bytes, None, or (oid, bytes))

SSL_REQUEST, GSS_REQUEST = 80877103, 80877104


class SessionLog(Protocol):
    """What the relay keeps of one session: its statements, read from the client's bytes (``feed``),
    and the server's bytes as they are to reach the client (``from_server``)."""

    statements: list[Statement]
    error: Exception | None

    def feed(self, data: bytes) -> None: ...

    def from_server(self, data: bytes) -> bytes: ...


class FrontendLog:
    """One session's statements, decoded from the client's bytes as they pass."""

    def __init__(self) -> None:
        self.statements: list[Statement] = []
        self.error: Exception | None = None  # what made the relay stop reading this session
        self._buffer = b""
        self._started = False
        self._parsed: dict[bytes, tuple[str, tuple[int, ...]]] = {}  # statement name -> text, types

    def feed(self, data: bytes) -> None:
        self._buffer += data
        while True:
            if not self._started:
                if len(self._buffer) < 8:
                    return
                (length,) = struct.unpack("!I", self._buffer[:4])
                if len(self._buffer) < length:
                    return
                (code,) = struct.unpack("!I", self._buffer[4:8])
                if code in (SSL_REQUEST, GSS_REQUEST):
                    raise AssertionError("the relay cannot read an encrypted session: sslmode=disable")
                self._buffer, self._started = self._buffer[length:], True
                continue
            if len(self._buffer) < 5:
                return
            kind = self._buffer[:1]
            (length,) = struct.unpack("!I", self._buffer[1:5])
            if len(self._buffer) < 1 + length:
                return
            body, self._buffer = self._buffer[5 : 1 + length], self._buffer[1 + length :]
            self._message(kind, body)

    def from_server(self, data: bytes) -> bytes:
        """Passed on unchanged: the client asks for no encryption (``through``'s sslmode)."""
        return data

    def _message(self, kind: bytes, body: bytes) -> None:
        if kind == b"Q":
            self.statements.append((body.rstrip(b"\0").decode(), ()))
        elif kind == b"P":
            name, rest = body.split(b"\0", 1)
            text, rest = rest.split(b"\0", 1)
            (count,) = struct.unpack("!H", rest[:2])
            types = struct.unpack(f"!{count}I", rest[2 : 2 + 4 * count])
            self._parsed[name] = (text.decode(), types)
        elif kind == b"B":
            self.statements.append(self._bound(body))

    def _bound(self, body: bytes) -> Statement:
        _portal, rest = body.split(b"\0", 1)
        name, rest = rest.split(b"\0", 1)
        text, types = self._parsed[name]
        (nformats,) = struct.unpack("!H", rest[:2])
        formats = struct.unpack(f"!{nformats}H", rest[2 : 2 + 2 * nformats])
        at = 2 + 2 * nformats
        (count,) = struct.unpack("!H", rest[at : at + 2])
        at += 2
        params: list[Any] = []
        for i in range(count):
            (size,) = struct.unpack("!i", rest[at : at + 4])
            at += 4
            value = None if size < 0 else rest[at : at + size]
            at += max(size, 0)
            binary = (formats[i] if nformats > 1 else formats[0] if nformats else 0) == 1
            oid = types[i] if i < len(types) else 0
            params.append(_canonical(oid, value) if binary and value is not None else _clock(value))
        return text, tuple(params)


CLIENT_CLOCK = "<the client's clock>"
# str(datetime): the event loops send a timestamp parameter as this text
_TIMESTAMP = re.compile(rb"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(\.\d{1,6})?")
INT_TYPES = {21: 2, 23: 4, 20: 8}  # int2, int4, int8: their sizes
NUMERIC, FLOAT4, FLOAT8, TIMESTAMP, TIMESTAMPTZ = 1700, 700, 701, 1114, 1184


def _clock(value: bytes | None) -> Any:
    """A text parameter, or CLIENT_CLOCK for a timestamp (each executor's run reads the clock anew)."""
    return CLIENT_CLOCK if value is not None and _TIMESTAMP.fullmatch(value) else value


def _canonical(oid: int, raw: bytes) -> Any:
    """A binary parameter as the text PostgreSQL would read as the same value; CLIENT_CLOCK for a
    timestamp; ``(oid, raw)`` for a type read nowhere here (so a comparison with text fails)."""
    if oid in INT_TYPES and len(raw) == INT_TYPES[oid]:
        return b"%d" % int.from_bytes(raw, "big", signed=True)
    if oid == NUMERIC:
        return _numeric(raw)
    if oid in (FLOAT4, FLOAT8):
        return repr(struct.unpack("!f" if oid == FLOAT4 else "!d", raw)[0]).encode()
    if oid in (TIMESTAMP, TIMESTAMPTZ):
        return CLIENT_CLOCK
    return oid, raw


def _numeric(raw: bytes) -> bytes:
    """PostgreSQL's binary numeric (base-10,000 digits, a weight, a sign, a display scale) as text."""
    ndigits, weight, sign, dscale = struct.unpack("!hhHH", raw[:8])
    if sign == 0xC000:
        return b"NaN"
    value = Decimal(0)
    for i, digit in enumerate(struct.unpack(f"!{ndigits}H", raw[8 : 8 + 2 * ndigits])):
        value += Decimal(digit).scaleb(4 * (weight - i))
    value = value.quantize(Decimal(1).scaleb(-dscale))
    return str(-value if sign == 0x4000 else value).encode()


class Relay:
    """A relay on 127.0.0.1 to ``port`` (the shared test server): each session it passes gets a
    ``session()`` log (PostgreSQL's ``FrontendLog`` unless told) in ``sessions``, in the order they
    connected. Bounded: its threads end when either side closes, and ``close`` stops accepting."""

    def __init__(self, port: int, session: Callable[[], SessionLog] = FrontendLog) -> None:
        self.target = port
        self._session = session
        self.sessions: list[SessionLog] = []
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self._threads: list[threading.Thread] = []
        self._sockets: list[socket.socket] = []
        self._accepting = threading.Thread(target=self._accept, daemon=True)

    def __enter__(self) -> Relay:
        self._accepting.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close(drain=kind is None)

    def close(self, drain: bool = False) -> None:
        """Stop accepting and end the sessions. With ``drain`` (the clients have closed their ends:
        the ``with`` block ran through), each session's last bytes are read first: closing its
        sockets under its threads could lose a message with no answer (a closing COM_QUIT, 1 in 50
        sessions on a loaded host)."""
        with contextlib.suppress(OSError):  # wakes the accepting thread (close alone does not)
            self._listener.shutdown(socket.SHUT_RDWR)
        self._listener.close()
        self._accepting.join(10)
        if drain:  # bounded: a client that did not close is cut off after 10 s
            deadline = time.monotonic() + 10
            for thread in self._threads:
                thread.join(max(0.0, deadline - time.monotonic()))
        for sock in self._sockets:
            sock.close()
        for thread in self._threads:
            thread.join(10)

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:  # closed: no more sessions
                return
            server = socket.create_connection(("127.0.0.1", self.target), timeout=10)
            server.settimeout(None)
            log = self._session()
            self.sessions.append(log)
            self._sockets += [client, server]
            for args in ((client, server, log, True), (server, client, log, False)):
                thread = threading.Thread(target=_pump, args=args, daemon=True)
                thread.start()
                self._threads.append(thread)


def _pump(source: socket.socket, sink: socket.socket, log: SessionLog, from_client: bool) -> None:
    """Forward ``source`` to ``sink`` until either closes, the client's bytes decoded into ``log``
    on the way."""
    try:
        while data := source.recv(65536):
            if from_client:
                log.feed(data)
            else:
                data = log.from_server(data)
            sink.sendall(data)
    except OSError:
        pass
    except Exception as exc:  # bytes the log cannot read: the comparison must not pass on them
        log.error = exc
    finally:
        for sock in (source, sink):
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
