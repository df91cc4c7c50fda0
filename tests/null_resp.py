"""A RESP server that keeps nothing, on 127.0.0.1: it answers each command from its name alone and
notes every command each connection sent, in order. Why: the event loops (Python and C) and the
Redis driver can then be driven, and the command streams they send compared, with no Redis server.

It runs in a thread of the test process (the C loop releases the GIL while it waits), one
``selectors`` loop over every connection, until ``close``."""

from __future__ import annotations

import selectors
import socket
import threading
from collections.abc import Callable

import hiredis

Answer = Callable[[list[bytes]], bytes]


def plain_answer(command: list[bytes]) -> bytes:
    """GET of a key with ``missing`` in it: nil; other GETs: a one-byte value; ``ERR``: an error
    reply; anything else: ``+OK``."""
    name = command[0].upper()
    if name == b"GET":
        return b"$-1\r\n" if b"missing" in command[1] else b"$1\r\nv\r\n"
    if name == b"ERR":
        return b"-ERR boom\r\n"
    return b"+OK\r\n"


class NullResp:
    """``with NullResp() as server:`` a server on ``server.port``; ``server.received``: per accepted
    connection (in the order they were accepted), the commands it sent."""

    def __init__(self, answer: Answer = plain_answer) -> None:
        self.answer = answer
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.listener.setblocking(False)
        self.port: int = self.listener.getsockname()[1]
        self.received: list[list[list[bytes]]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, name="null-resp", daemon=True)

    def __enter__(self) -> NullResp:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=10)
        self.listener.close()

    def _serve(self) -> None:
        selector = selectors.DefaultSelector()
        selector.register(self.listener, selectors.EVENT_READ, None)
        while not self._stop.is_set():  # bounded: close() sets the flag; each wait is 50 ms at most
            for key, _ in selector.select(timeout=0.05):
                if key.data is None:
                    sock, _ = self.listener.accept()
                    sock.setblocking(False)
                    self.received.append([])
                    selector.register(sock, selectors.EVENT_READ, (hiredis.Reader(), self.received[-1]))
                else:
                    self._answer(selector, key.fileobj, *key.data)  # type: ignore[arg-type]
        for key in list(selector.get_map().values()):
            if key.data is not None:
                key.fileobj.close()  # type: ignore[union-attr]
        selector.close()

    def _answer(
        self,
        selector: selectors.BaseSelector,
        sock: socket.socket,
        reader: hiredis.Reader,
        log: list[list[bytes]],
    ) -> None:
        try:
            data = sock.recv(65536)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:
            selector.unregister(sock)
            sock.close()
            return
        reader.feed(data)
        out = []
        while (command := reader.gets()) is not False:
            log.append(list(command))
            out.append(self.answer(list(command)))
        if out:
            sock.setblocking(True)  # replies are small: the client reads them before it sends more
            sock.sendall(b"".join(out))
            sock.setblocking(False)
