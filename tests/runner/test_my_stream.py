"""The MariaDB relay's decoder (tests/runner/my_stream.py) on bytes recorded from a real session: the
commands come out in order however the reads cut the bytes, the log-in is skipped, a 16 MB
statement is joined from its packets, and a session the relay could not read is refused."""

from __future__ import annotations

import struct

import pytest

from tests.runner.my_stream import CLIENT_COMPRESS, CLIENT_SSL, ClientLog, Packets, without_tls

# mysqlclient 2.3.1 on MariaDB Connector/C 3.3.20 against the local MariaDB 10.11 (test user "bench"):
# the handshake response, then SET NAMES (the driver's charset), a query with an escaped quote, a
# ping, select_db and close.
SESSION = bytes.fromhex(
    "be00000184a2bf00000010002d000000000000000000000000000000000000001d00000062656e63680014b06a54e6"
    "422b2f8eb4d9d31f470a47345054dcb16d7973716c5f6e61746976655f70617373776f7264006c035f6f73054c696e"
    "75780c5f636c69656e745f6e616d650a6c69626d617269616462045f7069640533303132380f5f636c69656e745f76"
    "657273696f6e06332e332e3230095f706c6174666f726d067838365f36340c5f7365727665725f686f737409313237"
    "2e302e302e311200000003534554204e414d455320757466386d62340e0000000353454c4543542027615c27622701"
    "0000000e06000000026d7973716c0100000001"
)
COMMANDS = [
    ("SET NAMES utf8mb4", ()),
    ("SELECT 'a\\'b'", ()),
    ("COM_PING", ()),
    ("COM_INIT_DB", (b"mysql",)),
    ("COM_QUIT", ()),
]
# that server's greeting (HandshakeV10): it offers no TLS (capabilities 0xf7fe)
GREETING = bytes.fromhex(
    "640000000a352e352e352d31302e31312e31392d4d6172696144422d302b6465623132753100a1000000767a243e4f"
    "50246100fef7080200ff81150000000000001d000000405a24415d3179333035583d006d7973716c5f6e6174697665"
    "5f70617373776f726400"
)
HANDSHAKE_END = 4 + 0xBE  # the handshake response: a 0xbe-byte payload


def packet(sequence: int, payload: bytes) -> bytes:
    return len(payload).to_bytes(3, "little") + bytes([sequence]) + payload


def decoded(*reads: bytes) -> ClientLog:
    log = ClientLog()
    for data in reads:
        log.feed(data)
    return log


def test_a_recorded_session_read_at_once_gives_its_commands_and_skips_the_log_in() -> None:
    log = decoded(SESSION)
    assert log.statements == COMMANDS
    assert log.log_in_packets == 1
    assert log.capabilities == 0xBFA284 and not log.capabilities & (CLIENT_SSL | CLIENT_COMPRESS)


def test_every_cut_of_the_recorded_session_gives_the_same_commands() -> None:
    """Packets split across reads (at every byte, the 4-byte header included) and several in one."""
    for cut in range(1, len(SESSION)):
        assert decoded(SESSION[:cut], SESSION[cut:]).statements == COMMANDS, cut
    one_byte_reads = decoded(*(SESSION[i : i + 1] for i in range(len(SESSION))))
    assert one_byte_reads.statements == COMMANDS and one_byte_reads.log_in_packets == 1


def test_a_command_is_noted_only_once_it_is_whole() -> None:
    log = decoded(SESSION[: HANDSHAKE_END + 4 + 5])  # the handshake and SET NAMES' first bytes
    assert log.statements == [] and log.log_in_packets == 1
    log.feed(SESSION[HANDSHAKE_END + 4 + 5 :])
    assert log.statements == COMMANDS


def test_authentication_rounds_after_the_handshake_response_are_not_commands() -> None:
    """An auth switch: the server asks for another plugin, the client answers in the same sequence
    (number 3); the commands after it start at 0."""
    switch_answer = packet(3, b"\x01" * 20)
    log = decoded(SESSION[:HANDSHAKE_END] + switch_answer + SESSION[HANDSHAKE_END:])
    assert log.statements == COMMANDS and log.log_in_packets == 2


@pytest.mark.parametrize("extra", [-1, 0, 1, 300])
def test_a_statement_past_16_mb_is_joined_from_its_packets(extra: int) -> None:
    """A payload of 0xffffff bytes continues in the next packet (sequence + 1): one of exactly
    0xffffff (extra 0) is followed by an empty one; one byte less fits one packet. The packets and
    the next command come in two reads, cut in the middle of the first packet's payload."""
    sql = b"SELECT '" + b"x" * (0xFFFFFF - 10 + extra) + b"'"
    payload = b"\x03" + sql
    chunks = [payload[i : i + 0xFFFFFF] for i in range(0, len(payload), 0xFFFFFF)]
    if len(chunks[-1]) == 0xFFFFFF:
        chunks.append(b"")
    wire = b"".join(packet(i, chunk) for i, chunk in enumerate(chunks)) + packet(0, b"\x0e")
    assert [len(c) for c in chunks][-1] == {-1: 0xFFFFFE, 0: 0, 1: 1, 300: 300}[extra]
    middle = len(wire) // 2
    log = decoded(SESSION[:HANDSHAKE_END], wire[:middle], wire[middle:])
    assert log.statements == [(sql.decode(), ()), ("COM_PING", ())]


def test_packets_keep_the_sequence_number_of_a_continued_payloads_first_packet() -> None:
    reader = Packets()
    long = packet(0, b"a" * 0xFFFFFF)
    assert reader.feed(long) == []
    assert reader.feed(packet(1, b"bc") + packet(0, b"\x01")) == [(0, b"a" * 0xFFFFFF + b"bc"), (0, b"\x01")]


@pytest.mark.parametrize(("flag", "says"), [(CLIENT_SSL, "encrypted"), (CLIENT_COMPRESS, "compressed")])
def test_a_session_that_asks_for_tls_or_compression_is_refused(flag: int, says: str) -> None:
    (caps,) = struct.unpack("<I", SESSION[4:8])
    asking = SESSION[:4] + struct.pack("<I", caps | flag) + SESSION[8:]
    with pytest.raises(AssertionError, match=says):
        decoded(asking)


def test_a_command_before_any_handshake_response_is_refused() -> None:
    with pytest.raises(AssertionError, match="before the handshake"):
        decoded(packet(0, b"\x03SELECT 1"))


def test_the_greeting_reaches_the_client_without_tls_and_nothing_else_changes() -> None:
    at = GREETING.index(b"\0", 5) + 1 + 4 + 8 + 1  # the capabilities' lower two bytes
    offering = GREETING[:at] + struct.pack("<H", 0xF7FE | CLIENT_SSL) + GREETING[at + 2 :]
    assert without_tls(GREETING) == GREETING  # this server offers none: passed on unchanged
    assert without_tls(offering) == GREETING
    log = ClientLog()
    # the greeting in two reads is held back until whole; what follows passes as it comes
    assert log.from_server(offering[:10]) == b""
    assert log.from_server(offering[10:]) == GREETING
    assert log.from_server(offering) == offering
    error = packet(0, b"\xff\x10\x04Too many connections")
    assert ClientLog().from_server(error) == error
