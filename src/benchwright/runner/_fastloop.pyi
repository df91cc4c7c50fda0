"""Types of the event loops' compiled hot path (``_fastloop.c``; see its header for what it does)."""

from typing import Any

SLOW: int
FLUSH: int
ERROR: int
BROKEN: int
DONE: int
TIMEOUT: int
IN_TRANSACTION: int
PROTOCOL: int
REPLY: int

def bind(libpq_path: str) -> None: ...
def bind_mysql(library_path: str) -> None: ...
def key_pipelines(
    words: bytes, head: bytes, between: bytes, tail: bytes, size: int, keyspace: int
) -> list[bytes]: ...
def ycsb_keys(numbers: list[int], pad: int) -> list[str]: ...
def uniform_ints(words: bytes, low: int, count: int) -> list[int]: ...
def special_ids(
    random: Any,
    n: int,
    low: int,
    high: int,
    cold: float,
    band_start: float,
    band: float,
    scale: float,
    iters: int,
) -> list[int]: ...
def choose_labels(words: bytes, edges: list[float], labels: list[Any]) -> list[Any]: ...
def int_requests(name: str, head: bytes, tail: bytes, values: list[int], libpq: bool) -> list[Any]: ...

class FastLoop:
    woke_ns: int
    closing: bool
    def __init__(
        self,
        loop: Any,
        epfd: int,
        rows_found: Any = None,
        rows_changed: Any = None,
        not_found: Any = None,
        steps_type: Any = None,
        not_none: Any = None,
        nonempty: Any = None,
    ) -> None: ...
    def take(self, conn: Any) -> None: ...
    def poll(self, timeout_s: float) -> list[tuple[int, int]]: ...
    def expire(self, now_ns: int) -> None: ...
    def succeeded(self) -> bool: ...
    def close(self) -> None: ...
