"""Three executors of one SQL stream on MariaDB: pgbench's TPC-B and sysbench's OLTP, one client's
seeded stream run by threads (``MySQLDriver``), the Python loop (mysqlclient's ``send_query`` /
``read_query_result``) and the C loop (``mysql_send_query`` on the same handle), each on its own
freshly loaded database, must send the same statements in the same order (parameters are quoted in
by every executor, so a statement's text is all there is to compare, as the relay in
tests/runner/my_stream.py reads it off the wire) and record the same operations with the same
statuses; as tests/runner/test_executor_parity_sql.py does on PostgreSQL.

Nothing is normalised away: the session's set-up (mysqlclient's ``SET NAMES`` for the driver's
charset) and its ``COM_QUIT`` come from the one ``MySQLDriver.connect`` / ``close`` that every
executor uses, so they are the same on the wire too, and compared with the rest.

Not here, because the MariaDB path has no loop form for them (threads are their only executor
there, so there is nothing to compare): YCSB (``MySQLDriver`` lends no ``kv_wire``) and TPC-C
(``MySqlWire`` has no ``dialogue``, which its transactions need to build a statement from an
earlier answer). ``test_a_stream_the_mysql_loops_cannot_run_is_listed_here`` fails when one
gains a loop form, so that its comparison is added here."""

from __future__ import annotations

import secrets
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import MySQLdb
import pytest

from benchwright.runner.drivers.mysql import MySQLDriver
from benchwright.runner.engine import PhaseConfig, run_phase
from benchwright.runner.workloads.base import ThreadInfo, Workload
from benchwright.runner.workloads.registry import registered
from tests.runner.sql_executors import MYSQL, SqlStream, assert_one_stream, three_ways

pytestmark = pytest.mark.servers

OLTP = {"oltp.tables": "2", "oltp.table_size": "200"}
# one table: the loops make its point selects a block at a time (MySqlWire.int_statements, in C
# where built); on two, one at a time (MySqlWire.statement)
ONE_TABLE = {"oltp.tables": "1", "oltp.table_size": "200"}
# case: (workload, its load's properties, the run's properties, operations, the names it must draw)
CASES: dict[str, tuple[str, dict[str, str], dict[str, str], int, set[str]]] = {
    "tpcb-like": ("tpcb", {}, {"tpcb.script": "tpcb-like"}, 40, {"tpcb-like"}),
    "select-only": ("tpcb", {}, {"tpcb.script": "select-only"}, 150, {"select-only"}),
    "oltp_read_write": ("oltp", OLTP, OLTP, 20, {"oltp_read_write"}),
    "point_select": ("oltp", OLTP, {**OLTP, "oltp.test": "point_select"}, 150, {"oltp_point_select"}),
    "point_select-one-table": (
        "oltp",
        ONE_TABLE,
        {**ONE_TABLE, "oltp.test": "point_select"},
        150,
        {"oltp_point_select"},
    ),
}
# Workloads the MariaDB loop cannot run, and why (the module's docstring).
NO_LOOP_ON_MARIADB = {"ycsb": {"recordcount": "10"}, "tpcc": {"tpcc.warehouses": "1"}}


@pytest.fixture
def loads(mysql_url: str) -> Iterator[Callable[[str, dict[str, str]], Callable[[], str]]]:
    """``loads(workload, props)``: a function that loads ``workload`` into a new database of the
    shared server and returns its URL, so that each executor starts from the same freshly loaded
    rows and sees no other's writes (on MariaDB a database is a schema: cheap to make and drop)."""
    parts = urlsplit(mysql_url)
    admin = MySQLdb.connect(
        host=parts.hostname, port=parts.port, user=parts.username, password=parts.password or ""
    )
    made: list[str] = []

    def source(workload: str, props: dict[str, str]) -> Callable[[], str]:
        def load() -> str:
            name = f"parity_{secrets.token_hex(4)}"
            admin.cursor().execute(f"CREATE DATABASE {name}")
            made.append(name)
            url = urlunsplit(parts._replace(path=f"/{name}"))
            config = PhaseConfig(workload, "load", "mysql", {**props, "mysql.url": url}, seed=5, threads=2)
            done = run_phase(config)
            assert done.valid, done.validity
            return url

        return load

    yield source
    try:
        for name in made:
            admin.cursor().execute(f"DROP DATABASE IF EXISTS {name}")
    finally:
        admin.close()


@pytest.mark.parametrize("case", sorted(CASES))
def test_threads_the_python_loop_and_the_c_loop_send_one_mysql_stream(
    case: str,
    loads: Callable[[str, dict[str, str]], Callable[[], str]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    workload, load, props, count, names = CASES[case]
    stream = SqlStream(workload, props, "", count, MYSQL)
    threads, python, c = three_ways(stream, loads(workload, load), monkeypatch)
    assert set(threads.names) == names
    assert threads.statuses == {(name, "OK"): count for name in names}
    assert_one_stream(threads, python, c, count)
    # the session as the driver opens and closes it, on every executor's wire
    for run in (threads, python, c):
        assert run.statements[0] == ("SET NAMES utf8mb4", ()) and run.statements[-1] == ("COM_QUIT", ())


def test_a_stream_the_mysql_loops_cannot_run_is_listed_here(mysql_url: str) -> None:
    """YCSB and TPC-C have loop forms on other servers but none on MariaDB: when one gains it, its
    three-way comparison belongs above."""
    driver = MySQLDriver({"mysql.url": mysql_url}, 0)
    driver.connect()
    try:
        thread = ThreadInfo(index=0, count=1, seed=1)
        for name, props in NO_LOOP_ON_MARIADB.items():
            workload: Any = registered()[name]({**props, "mysql.url": mysql_url})
            assert type(workload).wire_requests is not Workload.wire_requests, name  # a loop form elsewhere
            assert workload.wire_requests("run", driver, thread) is None, name
    finally:
        driver.close()
