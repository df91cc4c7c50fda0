"""Three executors of one operation stream: a workload describes its operation stream once, one
generator that takes a ``make`` (``operations`` runs it with the thread maker, ``wire_requests`` with
the driver's wire for the event loops, from the same seeded draws), and threads, the Python event
loop and the compiled (C) loop must send the same commands, in the same order, with the same keys and
values, and record the same statuses. Each runs one client's seeded stream against a
null RESP server on 127.0.0.1 (tests/null_resp.py: it keeps nothing, answers from the command and
notes every command), so no database server is needed; YCSB's answers make some reads find nothing,
so the stream's follow-up steps depend on the replies as they do on a server. The SQL workloads'
three-way comparisons need a SQL server: PostgreSQL (libpq's loops) and MariaDB (mysqlclient's),
each statement read off the wire by a relay; ON_SQL names them, every one on each server whose loop
runs the workload (a workload the MariaDB loop cannot run is listed in test_executor_parity_mysql.py).

Every registered workload is in exactly one of the tables below: a new one fails until it is listed.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Iterator
from itertools import islice
from pathlib import Path
from typing import Any

import pytest

from benchwright.runner.drivers.redis import RedisDriver
from benchwright.runner.event_loop import Connection, EventLoop, Request
from benchwright.runner.measure import Recorder
from benchwright.runner.workloads.base import ThreadInfo, Workload
from benchwright.runner.workloads.registry import registered
from tests.null_resp import Answer, NullResp, plain_answer
from tests.runner.test_executor_parity_mysql import NO_LOOP_ON_MARIADB

OPERATIONS = 120  # a client's stream at most: every kind of operation of the mixes below, several times
SEED = 20261129


def ycsb_answer(command: list[bytes]) -> bytes:
    """YCSB's hash records on the null server: a record is found when its key ends in an even digit
    (so reads are OK or NOT_FOUND, and a read-modify-write writes only what it found); a scan's
    index range names the start key and one more, whose records the scan then reads."""
    name = command[0].upper()
    if name in (b"HGETALL", b"HMGET"):
        found = command[1][-1] in b"02468"
        if name == b"HGETALL":
            return b"*2\r\n$6\r\nfield0\r\n$1\r\nv\r\n" if found else b"*0\r\n"
        value = b"$1\r\nv\r\n" if found else b"$-1\r\n"
        return b"*%d\r\n" % (len(command) - 2) + value * (len(command) - 2)
    if name == b"ZRANGE":
        start, count = command[2][1:], int(command[-1])
        keys = [start, start + b"1"][:count]
        return b"*%d\r\n" % len(keys) + b"".join(b"$%d\r\n%s\r\n" % (len(k), k) for k in keys)
    if name in (b"HSET", b"ZADD", b"DEL", b"ZREM"):
        return b":1\r\n"
    return plain_answer(command)


# Workloads the loops run, over the Redis protocol: each executor against the null RESP server.
ON_RESP: dict[str, tuple[str, dict[str, str], Answer]] = {
    "ycsb": (
        "run",
        {
            "recordcount": "50",
            "operationcount": str(OPERATIONS),
            "requestdistribution": "uniform",
            "readproportion": "0.3",
            "updateproportion": "0.2",
            "insertproportion": "0.2",
            "scanproportion": "0.1",
            "readmodifywriteproportion": "0.2",
            "maxscanlength": "3",
            "fieldcount": "2",
            "fieldlength": "8",
        },
        ycsb_answer,
    ),
    "redis-bench": (
        "run",
        {
            "redisbench.tests": "set,get,incr,lpush,mset",
            "redisbench.requests": "24",
            "redisbench.pipeline": "3",
            "redisbench.keyspace": "1000",
        },
        plain_answer,
    ),
}
# Workloads the loops run over libpq and mysqlclient: their streams need a SQL server, so the three
# executors are compared on it, statement by statement off the wire, by the tests named here.
ON_POSTGRES = "test_executor_parity_sql.py::test_threads_the_python_loop_and_the_c_loop_send_one_sql_stream"
ON_MARIADB = (
    "test_executor_parity_mysql.py::test_threads_the_python_loop_and_the_c_loop_send_one_mysql_stream"
)
ON_SQL = {
    "ycsb": (ON_MARIADB,),  # its SQL form (the key-value wire of MySQLDriver), beside ON_RESP
    "oltp": (ON_POSTGRES, ON_MARIADB),
    "tpcb": (ON_POSTGRES, ON_MARIADB),
    "tpcc": (
        "test_tpcc_loop.py::test_threads_the_python_loop_and_the_c_loop_send_one_tpcc_stream",
        ON_MARIADB,
    ),
}
# Workloads with no event-loop form (no ``wire_requests``): threads are their only executor.
THREADS_ONLY = {
    "sql": "a user's SQL script runs through the driver's cursor, statement by statement",
    "pgbench-script": "pgbench scripts (meta-commands, \\gset) run through the driver's cursor",
}


def test_every_registered_workload_is_listed_once() -> None:
    # the built-ins (a test may have registered a toy workload from its own folder)
    workloads = {n: cls for n, cls in registered().items() if cls.__module__.startswith("benchwright.")}
    on_loops = {n for n, cls in workloads.items() if cls.wire_requests is not Workload.wire_requests}
    assert on_loops == set(ON_RESP) | set(ON_SQL)
    assert set(workloads) - on_loops == set(THREADS_ONLY)
    # on MariaDB too, unless its loop cannot run the workload (a test there asserts it cannot)
    assert {n for n, comparisons in ON_SQL.items() if ON_MARIADB not in comparisons} <= set(
        NO_LOOP_ON_MARIADB
    )
    comparisons = [where for named in ON_SQL.values() for where in named]
    for where in comparisons:  # the comparisons named are there
        module, test = where.split("::")
        assert f"def {test}(" in (Path(__file__).parent / module).read_text(encoding="utf-8"), where


class Stream:
    """One client's seeded stream of ``workload``, run by each executor against the null server."""

    def __init__(self, workload: str, phase: str, props: dict[str, str], port: int) -> None:
        self.props = {**props, "redis.host": "127.0.0.1", "redis.port": str(port)}
        self.workload = registered()[workload](self.props)
        self.phase = phase
        self.thread = ThreadInfo(index=0, count=1, seed=SEED)

    def driver(self) -> RedisDriver:
        driver = RedisDriver(self.props, 0)
        driver.connect()
        return driver

    def threads(self) -> tuple[list[str], Counter[tuple[str, str]]]:
        """A thread's executor: each operation's driver call, made in turn; names and statuses."""
        driver = self.driver()
        names, statuses = [], Counter[tuple[str, str]]()
        for name, call in islice(self.workload.operations(self.phase, driver, self.thread), OPERATIONS):
            statuses[name, call().name] += 1
            names.append(name)
        driver.close()
        return names, statuses

    def loop(self) -> tuple[list[str], Counter[tuple[str, str]], str]:
        """The event loop's executor (Python or C, as BENCHWRIGHT_COMPILED_LOOP says): the same
        stream as wire requests; names as drawn, statuses as recorded, and the loop's model."""
        driver = self.driver()
        requests = self.workload.wire_requests(self.phase, driver, self.thread)
        assert requests is not None
        names: list[str] = []

        def noted() -> Iterator[Request]:
            for request in requests:
                names.append(request[0])
                yield request

        recorder = Recorder(time.perf_counter_ns(), "service_time")
        conn = Connection(driver.event_loop_channel, driver.drop_channel, noted(), OPERATIONS)  # type: ignore[arg-type]
        deadline = time.perf_counter_ns() + 30 * 10**9
        loop = EventLoop([conn], recorder, deadline, threading.Event(), {}, 5.0)
        assert loop.run() is None
        driver.close()
        statuses = Counter[tuple[str, str]]()
        for name, series in recorder.ops.items():
            for status, n in series.statuses.items():
                statuses[name, status] += n
        return names, statuses, loop.model


def received(server: NullResp, executor: Any) -> tuple[Any, list[list[bytes]]]:
    """What ``executor`` returned and the commands its connection sent after the driver's own."""
    before = len(server.received)
    out = executor()
    (log,) = server.received[before:]
    return out, [c for c in log if c[0] not in (b"CLIENT", b"PING", b"HELLO", b"SELECT")]


@pytest.mark.parametrize("workload", sorted(ON_RESP))
def test_threads_the_python_loop_and_the_c_loop_send_one_stream(
    workload: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    phase, props, answer = ON_RESP[workload]
    with NullResp(answer) as server:
        stream = Stream(workload, phase, props, server.port)
        (names, statuses), by_threads = received(server, stream.threads)
        monkeypatch.setenv("BENCHWRIGHT_COMPILED_LOOP", "0")
        (py_names, py_statuses, py_model), by_python = received(server, stream.loop)
        monkeypatch.setenv("BENCHWRIGHT_COMPILED_LOOP", "1")
        (c_names, c_statuses, c_model), by_c = received(server, stream.loop)
    assert "in C" not in py_model and "in C" in c_model
    assert len(names) >= 40 and py_names == c_names == names  # redis-bench's stream ends at 40
    assert len(set(names)) > 2  # the mix ran several kinds of operation
    assert py_statuses == c_statuses == statuses
    assert by_threads and by_python == by_threads and by_c == by_threads
    if workload == "ycsb":  # the replies steered the stream: some reads found nothing, so wrote nothing
        assert statuses["READ", "NOT_FOUND"] > 0 and statuses["READ", "OK"] > 0
        writes = sum(1 for c in by_threads if c[0] == b"HSET")
        assert writes < names.count("UPDATE") + names.count("INSERT") + names.count("READ-MODIFY-WRITE")
