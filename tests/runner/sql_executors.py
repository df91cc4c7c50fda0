"""The three executors of a SQL workload's seeded stream, each on one session through a recording
relay (PostgreSQL's in tests/runner/pg_stream.py, MariaDB's in tests/runner/my_stream.py): threads
(``operations``, each driver call in turn), the Python event loop and the compiled (C) loop
(``wire_requests`` on the driver's loop, ``PqEventLoop`` or ``MyEventLoop``, as
``BENCHWRIGHT_COMPILED_LOOP`` says). Each returns the operation names as drawn, the statuses as
recorded, and the statements its session sent; the loops also the loop's model."""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from itertools import islice
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import pytest

from benchwright.runner.drivers.mysql import MySQLDriver
from benchwright.runner.drivers.postgres import PostgresDriver
from benchwright.runner.event_loop import Connection, EventLoop, Request
from benchwright.runner.event_loop_my import MyEventLoop
from benchwright.runner.event_loop_pq import PqEventLoop
from benchwright.runner.measure import Recorder
from benchwright.runner.workloads.base import ThreadInfo
from benchwright.runner.workloads.registry import registered
from tests.runner import my_stream
from tests.runner.pg_stream import Relay, Statement

SEED = 20261129
# The driver's guard around preparing a statement inside a transaction (PostgresDriver._prepare_sql):
# how a thread's session prepares, not a statement of the workload's stream.
PREPARE_GUARD = frozenset({"SAVEPOINT bw_prepare", "RELEASE SAVEPOINT bw_prepare"})

# workload: (its properties, operations in the stream, the operation names it must draw)


@dataclass
class Run:
    """What one executor did with the stream."""

    names: list[str]
    statuses: Counter[tuple[str, str]]
    statements: list[Statement]
    model: str = "threads"


def through(url: str, relay: Relay) -> str:
    """``url`` with the relay in front of its server, unencrypted (the relay reads the bytes)."""
    parts = urlsplit(url)
    netloc = f"{parts.username}:{parts.password}@127.0.0.1:{relay.port}"
    query = [*parse_qsl(parts.query), ("sslmode", "disable"), ("gssencmode", "disable")]
    return urlunsplit(parts._replace(netloc=netloc, query=urlencode(query)))


def through_my(url: str, relay: Relay) -> str:
    """``url`` (mysql://) with the relay in front of its server (its TLS is off: my_stream.py)."""
    parts = urlsplit(url)
    user = parts.netloc.rpartition("@")[0]  # as written: percent-encoded, with or without a password
    return urlunsplit(parts._replace(netloc=f"{user}@127.0.0.1:{relay.port}"))


@dataclass(frozen=True)
class Engine:
    """How the executors reach one kind of server: its driver and the property naming its URL, its
    event loop, and the relay that reads its protocol."""

    driver: Callable[[dict[str, str], int], Any]
    url_key: str
    loop: type[EventLoop]
    relay: Callable[[int], Relay]
    through: Callable[[str, Relay], str]


POSTGRES = Engine(PostgresDriver, "postgres.url", PqEventLoop, Relay, through)
MYSQL = Engine(MySQLDriver, "mysql.url", MyEventLoop, my_stream.Relay, through_my)


def in_schema(url: str, schema: str) -> str:
    """``url`` whose sessions find their tables in ``schema`` (a case's own dataset)."""
    parts = urlsplit(url)
    query = [*parse_qsl(parts.query), ("options", f"-csearch_path={schema}")]
    return urlunsplit(parts._replace(query=urlencode(query)))


class SqlStream:
    """One client's seeded stream of ``workload`` against the database at ``url``."""

    def __init__(
        self, workload: str, props: dict[str, str], url: str, count: int, engine: Engine = POSTGRES
    ) -> None:
        self.name, self.props, self.url, self.count = workload, props, url, count
        self.engine = engine
        self.thread = ThreadInfo(index=0, count=1, seed=SEED)

    def _driver(self, relay: Relay) -> tuple[Any, Any]:
        props = {**self.props, self.engine.url_key: self.engine.through(self.url, relay)}
        driver = self.engine.driver(props, 0)
        driver.connect()
        return registered()[self.name](props), driver

    def threads(self, port: int) -> Run:
        """A thread's executor: each operation's driver call, made in turn."""
        with self.engine.relay(port) as relay:
            workload, driver = self._driver(relay)
            names, statuses = [], Counter[tuple[str, str]]()
            for name, call in islice(workload.operations("run", driver, self.thread), self.count):
                statuses[name, call().name] += 1
                names.append(name)
            driver.close()
        return Run(names, statuses, sent(relay))

    def loop(self, port: int, compiled: bool, monkeypatch: pytest.MonkeyPatch) -> Run:
        """The driver's event loop's executor, its hot path in C or not."""
        monkeypatch.setenv("BENCHWRIGHT_COMPILED_LOOP", "1" if compiled else "0")
        with self.engine.relay(port) as relay:
            workload, driver = self._driver(relay)
            requests = workload.wire_requests("run", driver, self.thread)
            assert requests is not None, f"{self.name} has no loop form on {self.engine.url_key}"
            names: list[str] = []

            def noted() -> Iterator[Request]:
                for request in requests:
                    names.append(request[0])
                    yield request

            recorder = Recorder(time.perf_counter_ns(), "service_time")
            conn = Connection(driver.event_loop_channel, driver.drop_channel, noted(), self.count)
            deadline = time.perf_counter_ns() + 30 * 10**9
            loop = self.engine.loop([conn], recorder, deadline, threading.Event(), {}, 5.0)
            assert loop.run() is None
            driver.close()
        statuses = Counter[tuple[str, str]]()
        for name, series in recorder.ops.items():
            for status, n in series.statuses.items():
                statuses[name, status] += n
        return Run(names, statuses, sent(relay), loop.model)


def sent(relay: Relay) -> list[Statement]:
    """The statements of the executor's one session."""
    (session,) = relay.sessions
    assert session.error is None, session.error
    return session.statements


def stream_of(run: Run) -> list[Any]:
    return [s for s in run.statements if s[0] not in PREPARE_GUARD]


def assert_one_stream(threads: Run, python: Run, c: Run, count: int) -> None:
    """The three executors ran one stream: names, statuses and statements, exactly."""
    assert "in C" not in python.model and "in C" in c.model and python.model != "threads"
    assert len(threads.names) == count and python.names[:count] == c.names[:count] == threads.names
    assert python.statuses == c.statuses == threads.statuses
    sent = stream_of(threads)
    assert len(sent) > count  # every operation sent at least one statement
    for loop in (python, c):
        got = stream_of(loop)
        first = next((i for i, (a, b) in enumerate(zip(got, sent, strict=False)) if a != b), None)
        assert first is None, (
            f"{loop.model}, statement {first}: {got[first]} where threads sent {sent[first]}"
        )
        assert len(got) == len(sent), f"{loop.model} sent {len(got)} statements, threads {len(sent)}"


def three_ways(stream: SqlStream, copy: Callable[[], str], monkeypatch: pytest.MonkeyPatch) -> list[Run]:
    """``stream`` run by threads, the Python loop and the C loop, each on its own ``copy()``."""
    runs = []
    for executor in ("threads", "python", "c"):
        stream.url = copy()
        port = urlsplit(stream.url).port or 5432
        runs.append(
            stream.threads(port) if executor == "threads" else stream.loop(port, executor == "c", monkeypatch)
        )
    return runs
