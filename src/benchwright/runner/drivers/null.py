"""A driver that talks to nothing: every workload can be exercised without a database.

It keeps an in-memory dict per table so reads find what was inserted; SQL statements succeed and
return no rows. ``null.fail_every=N`` makes every N-th operation fail, for testing error paths.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from benchwright.runner.drivers.base import Capability, KeyValueDriver, RedisCommandsDriver, SqlDriver
from benchwright.runner.measure import Status


class NullDriver(KeyValueDriver, SqlDriver, RedisCommandsDriver):
    engine: ClassVar[str] = "null"
    dialect: ClassVar[str] = "postgres"
    capabilities: ClassVar[frozenset[Capability]] = frozenset(Capability)

    def __init__(self, properties: Mapping[str, str], thread_index: int = 0) -> None:
        super().__init__(properties, thread_index)
        self.tables: dict[str, dict[str, Mapping[str, str]]] = {}
        self.fail_every = int(properties.get("null.fail_every", "0"))
        self.calls = 0

    def _tick(self) -> bool:
        self.calls += 1
        return bool(self.fail_every) and self.calls % self.fail_every == 0

    def connect(self) -> None:
        return None

    def close(self) -> None:
        return None

    def endpoint(self) -> str:
        return "null"

    # key-value
    def create_table(self, table: str, fieldcount: int, *, drop: bool = False) -> None:
        self.tables.setdefault(table, {})

    def count(self, table: str) -> int:
        """What this instance inserted, or (never loaded) pretend the table is full."""
        rows = self.tables.get(table)
        return len(rows) if rows else int(self.properties.get("null.records", "1000000"))

    def read(self, table: str, key: str, fields: Sequence[str] | None) -> Status:
        if self._tick():
            return Status.ERROR
        return Status.OK if key in self.tables.get(table, {}) or not self.tables else Status.NOT_FOUND

    def scan(self, table: str, start_key: str, count: int, fields: Sequence[str] | None) -> Status:
        return Status.ERROR if self._tick() else Status.OK

    def update(self, table: str, key: str, values: Mapping[str, str]) -> Status:
        return Status.ERROR if self._tick() else Status.OK

    def insert(self, table: str, key: str, values: Mapping[str, str]) -> Status:
        if self._tick():
            return Status.ERROR
        self.tables.setdefault(table, {})[key] = values
        return Status.OK

    def delete(self, table: str, key: str) -> Status:
        self.tables.get(table, {}).pop(key, None)
        return Status.OK

    # sql
    def execute(self, sql: str, params: Sequence[Any] = ()) -> int:
        if self._tick():
            raise RuntimeError("null driver: injected failure")
        return 1

    def fetchall(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        self.execute(sql, params)
        return []

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        return None

    def begin(self) -> None:
        return None

    def commit(self) -> None:
        return None

    def rollback(self) -> None:
        return None

    def classify(self, error: BaseException) -> Status:
        return Status.ERROR

    def table_exists(self, table: str) -> bool:
        return True

    # redis commands
    def command(self, *args: bytes | str | int) -> Any:
        if self._tick():
            raise RuntimeError("null driver: injected failure")
        return b"OK"

    def pipeline(self, commands: Sequence[Sequence[bytes | str | int]]) -> list[Any]:
        return [self.command(*c) for c in commands]

    def send_encoded(self, data: bytes, count: int) -> Any:
        replies = [self.command() for _ in range(count)]
        return replies[0] if count == 1 else replies
