"""Small pieces every SQL workload (tpcc, tpcb, oltp, sql) shares: transactions whose outcome is a
Status value, streaming batch inserts, schema checks, and dialect-specific DDL spellings.

Kept here, next to the simplest SQL workload, so the four workloads do not copy each other.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from benchwright.errors import SchemaMissing, SpecError
from benchwright.runner.drivers.base import Driver, SqlDriver
from benchwright.runner.measure import Status

DEFAULT_BATCH = 500


class UserAbort(Exception):
    """Raised inside a transaction body to roll back on purpose (TPC-C's 1% New-Orders)."""


def sql_driver(driver: Driver, workload: str) -> SqlDriver:
    """The workloads only ever talk to the SQL interface; anything else is a programming error
    (check_capability refuses such an engine before this point)."""
    if not isinstance(driver, SqlDriver):
        raise SpecError("engine", f"workload {workload!r} needs a SQL engine, not {driver.engine!r}")
    return driver


def transaction(driver: SqlDriver, body: Callable[[], Any]) -> Status:
    """Run ``body`` in one transaction and turn its outcome into a Status.

    Deadlocks and serialization failures come back as ``Status.RETRY`` (the caller may re-run the
    same transaction); ``UserAbort`` rolls back and gives ``USER_ABORT``; anything else is re-raised
    so the engine counts an error and lets the driver reconnect.
    """
    driver.begin()
    try:
        body()
        driver.commit()
        return Status.OK
    except UserAbort:
        driver.rollback()
        return Status.USER_ABORT
    except Exception as exc:
        status = driver.classify(exc)
        with contextlib.suppress(Exception):
            driver.rollback()
        if status is Status.RETRY:
            return Status.RETRY
        raise


def retrying(
    call: Callable[[], Status], name: str, max_tries: int = 10
) -> Iterator[tuple[str, Callable[[], Status]]]:
    """Yield one operation, then re-yield the *same* transaction while it comes back RETRY.

    Each attempt is timed and counted on its own (RETRY is a separate status), as BenchBase does.
    """
    outcome: list[Status] = []

    def attempt() -> Status:
        status = call()
        outcome.append(status)
        return status

    for _ in range(max_tries):
        outcome.clear()
        yield name, attempt
        if not outcome or outcome[-1] is not Status.RETRY:
            return


def insert_rows(
    driver: SqlDriver,
    table: str,
    columns: Sequence[str],
    rows: Iterable[Sequence[Any]],
    batch: int = DEFAULT_BATCH,
) -> int:
    """Stream rows into ``table`` in batches: memory stays one batch whatever the table size.

    Uses COPY when the driver offers it (PostgreSQL), else multi-row INSERT statements.
    """
    copy = getattr(driver, "copy_rows", None)
    if copy is not None:
        counter = _Counter(rows)
        copy(table, columns, counter)
        return counter.n
    head = f"INSERT INTO {table} ({', '.join(columns)}) VALUES "
    one = "(" + ", ".join(["%s"] * len(columns)) + ")"
    total = 0
    chunk: list[Any] = []
    n = 0
    for row in rows:
        chunk.extend(row)
        n += 1
        if n == batch:
            driver.execute(head + ", ".join([one] * n), chunk)
            total += n
            chunk, n = [], 0
    if n:
        driver.execute(head + ", ".join([one] * n), chunk)
        total += n
    return total


class _Counter:
    """Iterates rows and counts them, so COPY streams without a list."""

    def __init__(self, rows: Iterable[Sequence[Any]]) -> None:
        self.rows = rows
        self.n = 0

    def __iter__(self) -> Iterator[Sequence[Any]]:
        for row in self.rows:
            self.n += 1
            yield row


def require_tables(driver: SqlDriver, tables: Iterable[str], load_hint: str) -> None:
    """Raise SchemaMissing naming the first absent table ("run the load phase first")."""
    for table in tables:
        if not driver.table_exists(table):
            raise SchemaMissing(f"table {table} does not exist: run the load phase first ({load_hint})")


def drop_tables(driver: SqlDriver, tables: Iterable[str]) -> None:
    for table in tables:
        driver.execute(f"DROP TABLE IF EXISTS {table}")


def ddl(dialect: str, statement: str) -> str:
    """Adapt a portable CREATE TABLE to the dialect: MySQL wants DATETIME and an explicit InnoDB."""
    if dialect == "mysql":
        statement = statement.replace(" TIMESTAMP", " DATETIME")
        if statement.lstrip().upper().startswith("CREATE TABLE"):
            statement += " ENGINE=InnoDB"
    return statement


def analyze(driver: SqlDriver, tables: Iterable[str]) -> None:
    """Fresh optimizer statistics after a load, as pgbench -i and sysbench prepare leave them."""
    names = list(tables)
    if driver.dialect == "postgres":
        for table in names:
            driver.execute(f"VACUUM ANALYZE {table}")
    else:
        driver.fetchall(f"ANALYZE TABLE {', '.join(names)}")  # returns a status result set


def percentiles_ms(summary: Any) -> dict[str, float]:
    """tps/avg/p90/p99 of one OperationSummary in milliseconds (the seeds' columns)."""
    return {
        "tps": round(summary.throughput, 3),
        "avg_ms": round(summary.average_us / 1000, 3),
        "p90_ms": round(summary.p90_us / 1000, 3),
        "p99_ms": round(summary.p99_us / 1000, 3),
        "max_ms": round(summary.max_us / 1000, 3),
    }
