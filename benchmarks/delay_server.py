"""A RESP server whose every GET answers after a known, fixed delay: the reference for fidelity.

    python benchmarks/delay_server.py PORT DELAY_MS

Listens on 127.0.0.1:PORT only. A GET is answered DELAY_MS after its request arrived, with a
100-byte value; replies leave in request order per connection (a pipeline stays a pipeline). What
clients send around their GETs (AUTH, SELECT, PING, INFO, DBSIZE, EXISTS, CONFIG GET, CLIENT ...)
is answered at once with what redis-server would say to it on an empty-ish keyspace. Used by
bench_fidelity.py: with the server's delay known, two clients measuring it should agree.

Why threads and not asyncio: asyncio's timers wait in epoll, whose timeout is whole milliseconds
rounded up, so a reply due 2 ms after its request left 2.0-3.0 ms after it, and where in that
millisecond depended on when the other connections' requests had woken the loop: the client's own
send pattern changed the "known" delay (measured here: 2.38-2.43 ms for redis-benchmark's lock-step
clients, more for clients whose sends are spread out). Here each connection has a reader thread
that stamps a request the moment ``recv`` returns it, and a writer thread that sleeps until the
reply is due with ``clock_nanosleep`` (``time.sleep``), the thread's timer slack lowered to 1 us
where Linux allows it. ``DELAYSTATS`` (a command of this server only) returns what the server
actually served since the previous call, ``count avg_us p99_us max_us`` from each GET's arrival to
its reply's ``send`` returning, so a benchmark can show that both clients got the same delay.
"""

from __future__ import annotations

import contextlib
import ctypes
import socket
import sys
import threading
import time
from collections import deque

import hiredis

VALUE = b"$100\r\n" + b"x" * 100 + b"\r\n"
RECORDS = 20_000  # what DBSIZE says: YCSB's run phase checks that the load happened
PR_SET_TIMERSLACK = 29


def immediate(command: list[bytes]) -> bytes:
    name = command[0].upper() if command else b""
    if name == b"PING":
        return b"+PONG\r\n"
    if name == b"DBSIZE":
        return b":%d\r\n" % RECORDS
    if name == b"GETRANGE":  # the dataset marker's read (no such key, as Redis answers) or a record's
        return b"$0\r\n\r\n" if command[1:2] == [b"benchwright:dataset"] else VALUE
    if name == b"EXISTS":
        return b":0\r\n"
    if name == b"TYPE":
        return b"+string\r\n"  # every record is a string of 100 bytes (a dataset check samples one)
    if name == b"INFO":
        text = b"# Server\r\nredis_version:7.0.0-delay\r\n"
        return b"$%d\r\n%s\r\n" % (len(text), text)
    if name == b"CONFIG" and len(command) >= 3:  # redis-benchmark reads save/appendonly
        key = command[2]
        return b"*2\r\n$%d\r\n%s\r\n$0\r\n\r\n" % (len(key), key)
    if name == b"HELLO":
        return b"-ERR unknown command 'HELLO'\r\n"  # clients fall back to RESP2
    if name == b"DELAYSTATS":
        text = SERVED.take().encode()
        return b"$%d\r\n%s\r\n" % (len(text), text)
    return b"+OK\r\n"


class Served:
    """Every GET's served delay (ns) since the last ``take``; appended by the writer threads."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.delays: list[int] = []

    def add(self, delays: list[int]) -> None:
        with self.lock:
            self.delays.extend(delays)

    def take(self) -> str:
        with self.lock:
            delays, self.delays = sorted(self.delays), []
        if not delays:
            return "0 0 0 0"
        p99 = delays[min(len(delays) - 1, int(len(delays) * 0.99))]
        return (
            f"{len(delays)} {sum(delays) / len(delays) / 1000:.1f} {p99 / 1000:.1f} {delays[-1] / 1000:.1f}"
        )


SERVED = Served()


class Client:
    """One connection: its reader stamps requests, its writer sends each reply when it is due."""

    def __init__(self, sock: socket.socket, delay_ns: int) -> None:
        self.sock = sock
        self.delay_ns = delay_ns
        self.pending: deque[tuple[int, int, bytes]] = deque()  # (arrived, due, reply), in order
        self.ready = threading.Condition()
        self.closed = False

    def read(self) -> None:
        reader = hiredis.Reader()
        try:
            while data := self.sock.recv(65536):
                now = time.perf_counter_ns()
                reader.feed(data)
                batch = []
                while (command := reader.gets()) is not False:
                    if command and command[0].upper() == b"GET":
                        batch.append((now, now + self.delay_ns, VALUE))
                    else:
                        batch.append((0, now, immediate(command)))
                with self.ready:
                    self.pending.extend(batch)
                    self.ready.notify()
        except OSError:
            pass
        finally:
            with self.ready:
                self.closed = True
                self.ready.notify()

    def write(self) -> None:
        with contextlib.closing(self.sock):
            while True:
                with self.ready:
                    while not self.pending and not self.closed:
                        self.ready.wait()
                    if self.closed:
                        return
                    due = self.pending[0][1]
                wait = due - time.perf_counter_ns()
                if wait > 0:
                    time.sleep(wait / 1e9)
                if not self._send_due():
                    return

    def _send_due(self) -> bool:
        now = time.perf_counter_ns()
        out, arrivals = [], []
        with self.ready:
            while self.pending and self.pending[0][1] <= now:
                arrived, _, reply = self.pending.popleft()
                out.append(reply)
                if arrived:
                    arrivals.append(arrived)
        try:
            self.sock.sendall(b"".join(out))
        except OSError:
            return False
        sent = time.perf_counter_ns()
        SERVED.add([sent - a for a in arrivals])
        return True


def lower_timer_slack() -> None:
    """1 us instead of Linux's default 50 us: threads started afterwards inherit it."""
    with contextlib.suppress(Exception):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_TIMERSLACK, 1, 0, 0, 0)


def serve(port: int, delay_ms: float) -> None:
    lower_timer_slack()
    listener = socket.create_server(("127.0.0.1", port), backlog=128)
    delay_ns = int(delay_ms * 1_000_000)
    while True:
        sock, _ = listener.accept()
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        client = Client(sock, delay_ns)
        threading.Thread(target=client.read, daemon=True).start()
        threading.Thread(target=client.write, daemon=True).start()


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt):
        serve(int(sys.argv[1]), float(sys.argv[2]))
