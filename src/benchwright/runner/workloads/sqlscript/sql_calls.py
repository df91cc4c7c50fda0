"""The SQL workloads' thread executor: one run stream, described once, run as thread operations.

Why: TPC-B, OLTP and TPC-C each draw their run phase in one generator that takes a ``make``. On the
event loop ``make`` is the driver's SQL wire (``PostgresSqlWire``, ``MySqlWire``) and each item is
one request; on a thread it is ``SqlCalls`` below, with the wires' method names and arguments, and
each item is the operations it takes: one, or for a transaction one per attempt (a RETRY re-runs
the same statements, each attempt timed and counted on its own, as pgbench and BenchBase do).
``thread_operations`` flattens the items into the ``(name, callable)`` pairs the engine times. The
stream cannot tell which executor it feeds, so the three executors send one stream.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Generator, Iterable, Iterator, Sequence
from itertools import chain
from math import floor
from typing import Any

from benchwright.runner.drivers.base import SqlDriver
from benchwright.runner.measure import Status
from benchwright.runner.workloads.base import Operation
from benchwright.runner.workloads.sqlscript.sqlkit import UserAbort, retrying, transaction

Item = Iterable[Operation]  # what one request of the stream is on a thread
Call = Callable[[str, Sequence[Any]], Any]  # the driver method that sends a statement
Statement = tuple[str, str, Sequence[Any]]  # a dialogue's (SqlDriver method name, sql, params)
DUPLICATE = "UniqueViolation"  # psycopg's name for a duplicate key; MySQL's is error 1062


def thread_operations(items: Iterable[Item]) -> Iterator[Operation]:
    """The operations of a stream's items, in order: what ``Workload.operations`` returns."""
    return chain.from_iterable(items)


class SqlCalls:
    """A SQL wire's interface over a driver, for threads. ``tries``: attempts of a transaction that
    comes back RETRY (1: the RETRY is counted and the stream goes on, as sysbench does)."""

    def __init__(self, db: SqlDriver, *, tries: int = 10) -> None:
        self.db = db
        self.tries = tries
        self._calls: dict[str, Call] = {}

    def _call(self, sql: str) -> Call:
        """``fetch_count`` for a statement whose rows are read (a SELECT: its rows are received,
        as the wires receive them), ``execute`` otherwise."""
        call = self._calls.get(sql)
        if call is None:
            reads = sql.lstrip()[:6].upper() == "SELECT"
            call = self._calls[sql] = self.db.fetch_count if reads else self.db.execute
        return call

    def statement(self, name: str, sql: str, params: Sequence[Any]) -> Item:
        """One statement on its own (autocommit)."""
        return ((name, functools.partial(_sent, self._call(sql), sql, params)),)

    def int_statements(self, name: str, sql: str, values: list[int]) -> list[Item]:
        """``statement(name, sql, (v,))`` for each of ``values``."""
        call = self._call(sql)
        return [((name, functools.partial(_sent, call, sql, (v,))),) for v in values]

    def uniform_selects(self, name: str, sql: str, rng: Any, low: int, count: int) -> Iterator[Item]:
        """The endless ``statement(name, sql, (low + floor(rng.random() * count),))``: the draws the
        wires' ``_fastloop.UniformSelects`` makes in C, so any range works here."""
        call, draw = self._call(sql), rng.random
        while True:
            yield ((name, functools.partial(_sent, call, sql, (low + floor(draw() * count),))),)

    def transaction(
        self,
        name: str,
        statements: Sequence[tuple[str, Sequence[Any]]],
        *,
        block: bool = True,
        retry_on: tuple[str, ...] = (),
    ) -> Item:
        """``statements`` in order, between BEGIN and COMMIT when ``block`` (``sqlkit.transaction``:
        a deadlock or serialization failure is a RETRY); an error whose kind is in ``retry_on`` is a
        RETRY too."""
        known, call = self._calls.get, self._call  # a lookup per statement, a call the first time
        steps = [(known(sql) or call(sql), sql, params) for sql, params in statements]
        body = functools.partial(_run, steps)
        attempt = functools.partial(_in_transaction if block else _autocommit, self.db, body, retry_on)
        return self._attempts(name, attempt)

    def dialogue(
        self,
        name: str,
        steps: Callable[[], Generator[Statement, Any, Any]],
        *,
        aborts: tuple[type[BaseException], ...] = (),
    ) -> Item:
        """A transaction whose statements depend on earlier answers: ``steps()`` (called once per
        attempt) yields each as ``(kind, sql, params)`` and receives what ``SqlDriver.<kind>``
        returns. One of ``aborts`` raised by it rolls back as a USER_ABORT."""
        body = functools.partial(_answered, self.db, steps, aborts)
        return self._attempts(name, functools.partial(transaction, self.db, body))

    def _attempts(self, name: str, attempt: Callable[[], Status]) -> Item:
        return ((name, attempt),) if self.tries == 1 else retrying(attempt, name, self.tries)


def run_steps(db: SqlDriver, steps: Generator[Statement, Any, Any]) -> Any:
    """Answer each statement ``steps`` yields with the driver's method of its kind; returns what
    ``steps`` returns."""
    answer: Any = None
    while True:
        try:
            kind, sql, params = steps.send(answer)
        except StopIteration as done:
            return done.value
        answer = getattr(db, kind)(sql, params)


def _sent(call: Call, sql: str, params: Sequence[Any]) -> Status:
    call(sql, params)
    return Status.OK


def _run(steps: list[tuple[Call, str, Sequence[Any]]]) -> None:
    for call, sql, params in steps:
        call(sql, params)


def _in_transaction(db: SqlDriver, body: Callable[[], None], retry_on: tuple[str, ...]) -> Status:
    try:
        return transaction(db, body)  # rolled back before it re-raises
    except Exception as exc:
        if retry_on and is_kind(exc, retry_on):
            return Status.RETRY
        raise


def _autocommit(db: SqlDriver, body: Callable[[], None], retry_on: tuple[str, ...]) -> Status:
    try:
        body()
    except Exception as exc:
        if retry_on and is_kind(exc, retry_on):
            return Status.RETRY
        raise
    return Status.OK


def _answered(
    db: SqlDriver,
    steps: Callable[[], Generator[Statement, Any, Any]],
    aborts: tuple[type[BaseException], ...],
) -> None:
    try:
        run_steps(db, steps())
    except aborts as exc:
        if isinstance(exc, UserAbort):
            raise
        raise UserAbort(str(exc)) from exc


def is_kind(exc: BaseException, kinds: tuple[str, ...]) -> bool:
    """Whether ``exc`` is one of the error kinds the event loops name (psycopg's class names): by
    its class name, or a duplicate key by its message, which names it on both engines ("duplicate
    key value" on PostgreSQL, "Duplicate entry" on MySQL / MariaDB)."""
    return type(exc).__name__ in kinds or (DUPLICATE in kinds and "uplicate" in str(exc))
