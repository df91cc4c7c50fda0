"""Types of the event loops' compiled hot path (``_fastloop.c``; see its header for what it does).

The loop's interface is the three structures of ``fast_seam.py``: C reads ``LoopSpec`` and
``ConnectionSpec`` by position (in the order of ``LOOP_SPEC_FIELDS`` / ``CONNECTION_SPEC_FIELDS``)
and hands a ``HandBack`` back."""

from collections.abc import Callable
from typing import Any

from benchwright.runner.fast_seam import ConnectionSpec, LoopSpec

SLOW: int
FLUSH: int
ERROR: int
BROKEN: int
DONE: int
TIMEOUT: int
IN_TRANSACTION: int
PROTOCOL: int
REPLY: int
PQ: int
RESP: int
MY: int
LOOP_SPEC_FIELDS: tuple[str, ...]
CONNECTION_SPEC_FIELDS: tuple[str, ...]
HANDBACK_FIELDS: tuple[str, ...]

def bind(libpq_path: str) -> None: ...
def bind_mysql(library_path: str) -> None: ...
def key_pipelines(
    words: bytes, head: bytes, between: bytes, tail: bytes, size: int, keyspace: int
) -> list[bytes]: ...
def ycsb_keys(numbers: list[int], pad: int) -> list[str]: ...
def uniform_ints(words: bytes, low: int, count: int) -> list[int]: ...
def special_ids(
    random: Callable[[], float], n: int, spec: tuple[int, int, float, float, float, float, int]
) -> list[int]: ...
def choose_labels(words: bytes, edges: list[float], labels: list[Any]) -> list[Any]: ...
def int_requests(name: str, head: bytes, tail: bytes, values: list[int], libpq: bool) -> list[Any]: ...

class UniformSelects:
    def __init__(
        self,
        name: str,
        head: bytes,
        tail: bytes,
        getrandbits: Callable[[int], int],
        low: int,
        count: int,
        libpq: bool,
    ) -> None: ...
    def __iter__(self) -> UniformSelects: ...
    def __next__(self) -> tuple[str, Any, int, None]: ...

class HandBack:
    """fast_seam.HandBack's fields, as C fills them (a struct sequence)."""

    n_fields: int
    __match_args__: tuple[str, ...]
    @property
    def issued(self) -> int: ...
    @property
    def limit(self) -> int | None: ...
    @property
    def request(self) -> tuple[str, Any, int, Any] | None: ...
    @property
    def payload(self) -> Any: ...
    @property
    def step(self) -> int: ...
    @property
    def started_ns(self) -> int: ...
    @property
    def unread(self) -> bytes | None: ...

class FastLoop:
    woke_ns: int
    closing: bool
    def __init__(self, spec: LoopSpec) -> None: ...
    def take(self, spec: ConnectionSpec) -> None: ...
    def poll(self, timeout_s: float) -> list[tuple[int, int]]: ...
    def expire(self, now_ns: int) -> None: ...
    def succeeded(self) -> bool: ...
    def close(self) -> list[tuple[Any, int]]: ...
