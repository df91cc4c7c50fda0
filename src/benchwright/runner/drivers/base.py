"""What a driver offers. Workloads ask for a capability, never for a driver.

A driver instance belongs to one thread and holds one connection. It never times anything: the
engine times the callables a workload yields. Operation methods return a ``Status``; exceptions
escape only for conditions the engine must see (a lost connection), and the engine counts them as
``Status.ERROR`` and calls ``recover`` before the next operation.
"""

from __future__ import annotations

import enum
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, Protocol

from benchwright.runner.event_loop import Request
from benchwright.runner.measure import Status


class Capability(enum.Enum):
    KEY_VALUE = "key-value"  # YCSB's DB interface: read/scan/update/insert/delete by key
    SQL = "sql"  # statements and transactions
    REDIS = "redis-commands"  # raw Redis commands (redis-benchmark semantics)


class Driver(ABC):
    """Base of every driver: connection life cycle and identity."""

    engine: ClassVar[str]
    capabilities: ClassVar[frozenset[Capability]]

    def __init__(self, properties: Mapping[str, str], thread_index: int = 0) -> None:
        self.properties = properties
        self.thread_index = thread_index

    @abstractmethod
    def connect(self) -> None:
        """Open the connection; raise ``TargetUnreachable(host, cause)`` on failure."""

    @abstractmethod
    def close(self) -> None: ...

    def recover(self) -> None:  # noqa: B027 - optional hook
        """Called after an operation raised: reconnect if the connection is broken."""

    @abstractmethod
    def endpoint(self) -> str:
        """host:port this instance talks to (never credentials)."""

    def server_version(self) -> str | None:
        return None

    def event_loop_channel(self) -> Any:
        """What the engine's event-loop client drives: a ``Channel`` (the connected socket and a
        reply parser, runner/event_loop.py) or a ``PqChannel`` (libpq, runner/event_loop_pq.py);
        reconnects when the connection was dropped. None: threads only."""
        return None

    def drop_channel(self) -> None:
        """The event loop gave up on the connection (it broke, or a reply is overdue): close it so
        that ``event_loop_channel`` opens a fresh one."""
        self.recover()


class KeyValueDriver(Driver):
    """YCSB's DB interface. ``values`` map field names to (ASCII) strings."""

    @abstractmethod
    def create_table(self, table: str, fieldcount: int, *, drop: bool = False) -> None:
        """Make the table (or key space) ready for inserts."""

    @abstractmethod
    def count(self, table: str) -> int:
        """Number of records in ``table`` (used to check a load)."""

    @abstractmethod
    def read(self, table: str, key: str, fields: Sequence[str] | None) -> Status: ...

    @abstractmethod
    def scan(self, table: str, start_key: str, count: int, fields: Sequence[str] | None) -> Status: ...

    @abstractmethod
    def update(self, table: str, key: str, values: Mapping[str, str]) -> Status: ...

    @abstractmethod
    def insert(self, table: str, key: str, values: Mapping[str, str]) -> Status: ...

    @abstractmethod
    def delete(self, table: str, key: str) -> Status: ...

    def kv_wire(self) -> KeyValueWire | None:
        """The same operations written ahead as event-loop requests; None: threads only."""
        return None


class KeyValueWire(Protocol):
    """YCSB's operations as event-loop requests (runner/event_loop.py), one object per connection."""

    def read(self, table: str, key: str, fields: Sequence[str] | None) -> Request: ...
    def scan(self, table: str, start_key: str, count: int, fields: Sequence[str] | None) -> Request: ...
    def update(self, table: str, key: str, values: Mapping[str, str]) -> Request: ...
    def insert(self, table: str, key: str, values: Mapping[str, str]) -> Request: ...
    def delete(self, table: str, key: str) -> Request: ...
    def read_modify_write(
        self, table: str, key: str, fields: Sequence[str] | None, values: Mapping[str, str]
    ) -> Request: ...


class SqlDriver(Driver):
    """Statements and transactions on a SQL engine. Parameters use the ``%s`` placeholder style on
    every dialect (psycopg and the MySQL clients agree on it)."""

    dialect: ClassVar[str]  # "postgres" | "mysql"

    @abstractmethod
    def execute(self, sql: str, params: Sequence[Any] = ()) -> int:
        """Run one statement; return the affected row count."""

    @abstractmethod
    def fetchall(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]: ...

    def fetchone(self, sql: str, params: Sequence[Any] = ()) -> tuple[Any, ...] | None:
        rows = self.fetchall(sql, params)
        return rows[0] if rows else None

    def fetch_count(self, sql: str, params: Sequence[Any] = ()) -> int:
        """Run a query and receive its rows without turning them into Python values; return how
        many there were. What pgbench and sysbench do with the rows of the SELECTs they time."""
        return len(self.fetchall(sql, params))

    @abstractmethod
    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None: ...

    @abstractmethod
    def begin(self) -> None: ...

    @abstractmethod
    def commit(self) -> None: ...

    @abstractmethod
    def rollback(self) -> None: ...

    @abstractmethod
    def classify(self, error: BaseException) -> Status:
        """``Status.RETRY`` for serialization failures and deadlocks, else ``Status.ERROR``."""

    def table_exists(self, table: str) -> bool:
        raise NotImplementedError

    def sql_wire(self) -> Any:
        """Statements and transactions as event-loop requests (``drivers/postgres_wire.py``);
        None: threads only."""
        return None


class RedisCommandsDriver(Driver):
    """Raw Redis commands, for redis-benchmark semantics (SET/GET/INCR/LPUSH ... and pipelines)."""

    @abstractmethod
    def command(self, *args: bytes | str | int) -> Any: ...

    @abstractmethod
    def pipeline(self, commands: Sequence[Sequence[bytes | str | int]]) -> list[Any]: ...

    @abstractmethod
    def send_encoded(self, data: bytes, count: int) -> Any:
        """Send ``count`` commands the caller already wrote in RESP and read every reply: the one
        reply when ``count`` is 1, else the list. A server error is raised after all replies are read."""
