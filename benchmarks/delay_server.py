"""A RESP server whose every GET answers after a known, fixed delay: the reference for fidelity.

    python benchmarks/delay_server.py PORT DELAY_MS

Listens on 127.0.0.1:PORT only. A GET is answered DELAY_MS after its request was read, with a
100-byte value; replies leave in request order per connection (a pipeline stays a pipeline). What
clients send around their GETs (AUTH, SELECT, PING, INFO, DBSIZE, EXISTS, CONFIG GET, CLIENT ...)
is answered at once with what redis-server would say to it on an empty-ish keyspace. Used by
bench_fidelity.py: with the server's delay known, two clients measuring it should agree.
"""

from __future__ import annotations

import asyncio
import sys
from collections import deque

import hiredis

VALUE = b"$100\r\n" + b"x" * 100 + b"\r\n"
RECORDS = 20_000  # what DBSIZE says: YCSB's run phase checks that the load happened


def immediate(command: list[bytes]) -> bytes:
    name = command[0].upper() if command else b""
    if name == b"PING":
        return b"+PONG\r\n"
    if name == b"DBSIZE":
        return b":%d\r\n" % RECORDS
    if name == b"EXISTS":
        return b":0\r\n"
    if name == b"INFO":
        text = b"# Server\r\nredis_version:7.0.0-delay\r\n"
        return b"$%d\r\n%s\r\n" % (len(text), text)
    if name == b"CONFIG" and len(command) >= 3:  # redis-benchmark reads save/appendonly
        key = command[2]
        return b"*2\r\n$%d\r\n%s\r\n$0\r\n\r\n" % (len(key), key)
    if name == b"HELLO":
        return b"-ERR unknown command 'HELLO'\r\n"  # clients fall back to RESP2
    return b"+OK\r\n"


class DelayedResp(asyncio.Protocol):
    def __init__(self, delay_s: float) -> None:
        self.delay_s = delay_s
        self.reader = hiredis.Reader()
        self.pending: deque[tuple[float, bytes]] = deque()  # (due, reply), in request order
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        loop = asyncio.get_running_loop()
        self.reader.feed(data)
        now = loop.time()
        while (command := self.reader.gets()) is not False:
            if command and command[0].upper() == b"GET":
                due, reply = now + self.delay_s, VALUE
            else:
                due, reply = now, immediate(command)
            if not self.pending:
                loop.call_at(due, self.flush)
            self.pending.append((due, reply))

    def flush(self) -> None:
        """Send every reply that is due, in order; wake up again for the next one."""
        if self.transport is None or self.transport.is_closing():
            self.pending.clear()
            return
        loop = asyncio.get_running_loop()
        now = loop.time()
        out = []
        while self.pending and self.pending[0][0] <= now:
            out.append(self.pending.popleft()[1])
        if out:
            self.transport.write(b"".join(out))
        if self.pending:
            loop.call_at(self.pending[0][0], self.flush)

    def connection_lost(self, exc: Exception | None) -> None:
        self.transport = None


async def serve(port: int, delay_ms: float) -> None:
    loop = asyncio.get_running_loop()
    server = await loop.create_server(lambda: DelayedResp(delay_ms / 1000), "127.0.0.1", port)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(serve(int(sys.argv[1]), float(sys.argv[2])))
