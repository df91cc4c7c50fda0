"""The SQL workloads' streams as MariaDB receives them, recorded on the client's side of the wire.

Why: threads (``MySQLDriver``: the connection's own ``query``, or the cursor) and the event loops
(mysqlclient's ``send_query`` from Python, or ``mysql_send_query`` on the same handle from C) build
their statements in different code, so what reached the socket is what to compare, as
tests/runner/pg_stream.py does for PostgreSQL. The relay (that module's, with this module's
decoder) forwards every byte from the client unchanged and reads its packets: a 3-byte
little-endian length and a sequence number, a payload of up to 16 MB - 1 (a longer one continues in
the next packet, 0xffffff long each but the last). A command starts a new sequence (number 0); the
handshake response (number 1) and any further rounds of an authentication (the numbers go on) are
the session's log-in, not its stream, and are skipped. Each command is noted in order: a COM_QUERY
as its SQL text (the loops and threads both quote parameters in: no parameters travel apart), any
other as its name and its payload (COM_INIT_DB's schema, COM_STMT_PREPARE's text, ...), so that a
difference between executors shows rather than being dropped.

The relay cannot read an encrypted or compressed session. Compression is only ever the client's
request (mysqlclient's ``compress``, which the driver never sets). TLS takes both sides: the local
MariaDB 10.11 offers none (``have_ssl`` DISABLED), and Connector/C 3.3 takes it up only when asked
(the driver has no option that asks). A newer pair (MariaDB 11.4 offers TLS by default, Connector/C
3.4 takes it up by default) must not turn the stream into ciphertext unseen: the relay clears
``CLIENT_SSL`` in the server's greeting (``without_tls``, the one bit it changes), so that the
client goes on in clear or refuses to connect, and the decoder refuses a session whose client asked
for TLS or compression all the same.

A timestamp quoted into a statement (TPC-C's ``datetime.now()``) is noted as pg_stream.py's
CLIENT_CLOCK: each executor reads the clock when it runs, so they differ by design.
"""

from __future__ import annotations

import re
import struct

from tests.runner.pg_stream import CLIENT_CLOCK, Statement
from tests.runner.pg_stream import Relay as _Relay

MAX_PAYLOAD = 0xFFFFFF  # a payload this long continues in the next packet
CLIENT_COMPRESS, CLIENT_SSL = 0x20, 0x800
CLIENT_QUERY_ATTRIBUTES = 1 << 27  # MySQL 8: a COM_QUERY carries parameter counts before its text
COM_QUERY = 0x03
COMMANDS = {
    0x01: "COM_QUIT",
    0x02: "COM_INIT_DB",
    0x0E: "COM_PING",
    0x11: "COM_CHANGE_USER",
    0x16: "COM_STMT_PREPARE",
    0x17: "COM_STMT_EXECUTE",
    0x19: "COM_STMT_CLOSE",
    0x1A: "COM_STMT_RESET",
    0x1B: "COM_SET_OPTION",
    0x1F: "COM_RESET_CONNECTION",
}
# a datetime quoted in as mysqlclient's literal does (TPC-C's datetime.now() at the client)
_TIMESTAMP = re.compile(r"'\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(\.\d{1,6})?'")


class Packets:
    """Whole payloads out of a byte stream: packets split across reads are joined, several in one
    read are each taken, and a 16 MB continuation is joined to the packet it continues. Each comes
    with the sequence number of its first packet."""

    def __init__(self) -> None:
        self._buffer = b""
        self._partial: tuple[int, bytes] | None = None  # a payload continued in the next packet

    def feed(self, data: bytes) -> list[tuple[int, bytes]]:
        self._buffer += data
        done: list[tuple[int, bytes]] = []
        while len(self._buffer) >= 4:
            length = int.from_bytes(self._buffer[:3], "little")
            if len(self._buffer) < 4 + length:
                break
            sequence, payload = self._buffer[3], self._buffer[4 : 4 + length]
            self._buffer = self._buffer[4 + length :]
            if self._partial is not None:
                sequence, payload = self._partial[0], self._partial[1] + payload
                self._partial = None
            if length == MAX_PAYLOAD:
                self._partial = (sequence, payload)
            else:
                done.append((sequence, payload))
        return done


class ClientLog:
    """One session's commands, decoded from the client's bytes as they pass."""

    def __init__(self) -> None:
        self.statements: list[Statement] = []
        self.error: Exception | None = None  # what made the relay stop reading this session
        self.capabilities: int | None = None  # the client's, from its handshake response
        self.log_in_packets = 0  # the handshake response and any authentication rounds after it
        self._packets = Packets()
        self._greeting: bytes | None = b""  # the server's first packet, until it is passed on

    def feed(self, data: bytes) -> None:
        for sequence, payload in self._packets.feed(data):
            if sequence != 0:  # the log-in (or a later authentication's rounds): not a command
                self._log_in(payload)
            else:
                self.statements.append(self._command(payload))

    def from_server(self, data: bytes) -> bytes:
        """The server's bytes as the client is to get them: the greeting without TLS (held back
        until it is whole; nothing else comes before the client's answer to it)."""
        if self._greeting is None:
            return data
        self._greeting += data
        length = int.from_bytes(self._greeting[:3], "little")
        if len(self._greeting) < 4 + length:
            return b""
        greeting, self._greeting = without_tls(self._greeting), None
        return greeting

    def _log_in(self, payload: bytes) -> None:
        self.log_in_packets += 1
        if self.capabilities is not None:
            return
        if len(payload) < 4:
            raise AssertionError(f"a handshake response of {len(payload)} bytes: not the protocol read here")
        (self.capabilities,) = struct.unpack("<I", payload[:4])
        if self.capabilities & CLIENT_SSL:
            raise AssertionError("the relay cannot read an encrypted session: the client asked for TLS")
        if self.capabilities & CLIENT_COMPRESS:
            raise AssertionError("the relay cannot read a compressed session: connect without compress")

    def _command(self, payload: bytes) -> Statement:
        if self.capabilities is None:
            raise AssertionError("a command before the handshake response: not the protocol read here")
        if not payload:
            raise AssertionError("an empty command packet")
        code, body = payload[0], payload[1:]
        if code != COM_QUERY:
            name = COMMANDS.get(code, f"command 0x{code:02x}")
            return name, (body,) if body else ()
        if self.capabilities & CLIENT_QUERY_ATTRIBUTES:
            if body[:2] != b"\0\x01":  # no parameters, one parameter set: the text follows
                raise AssertionError("a COM_QUERY with query attributes: not decoded here")
            body = body[2:]
        return _TIMESTAMP.sub(CLIENT_CLOCK, body.decode()), ()


def without_tls(greeting: bytes) -> bytes:
    """``greeting`` (the server's first packet, HandshakeV10, whole) with ``CLIENT_SSL`` cleared
    in its capabilities, so that no client starts TLS."""
    if greeting[4] != 10:  # an error packet (0xff: too many connections, a host refused) passes as is
        return greeting
    end = greeting.index(b"\0", 5)  # the server's version, NUL-terminated
    at = end + 1 + 4 + 8 + 1  # then the connection id, the scramble's first part, a filler byte
    (flags,) = struct.unpack("<H", greeting[at : at + 2])
    return greeting[:at] + struct.pack("<H", flags & ~CLIENT_SSL) + greeting[at + 2 :]


class Relay(_Relay):
    """tests/runner/pg_stream.py's relay, each session read as MariaDB's protocol."""

    def __init__(self, port: int) -> None:
        super().__init__(port, ClientLog)
