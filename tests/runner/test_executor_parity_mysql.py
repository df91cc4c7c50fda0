"""Three executors of one SQL stream on MariaDB: pgbench's TPC-B, sysbench's OLTP, TPC-C and YCSB,
one client's seeded stream run by threads (``MySQLDriver``), the Python loop (mysqlclient's
``send_query`` / ``read_query_result``) and the C loop (``mysql_send_query`` on the same handle),
each on its own freshly loaded database, must send the same statements in the same order
(parameters are quoted in by every executor, so a statement's text is all there is to compare, as
the relay in tests/runner/my_stream.py reads it off the wire) and record the same operations with
the same statuses; as tests/runner/test_executor_parity_sql.py does on PostgreSQL. TPC-C's
statements are built from earlier answers (New-Order's order number, Payment's customer by name,
Delivery's oldest order), so its stream is equal only if the loop's answers are the thread's;
its warehouse is loaded once per module and copied for each executor (a load takes ~8 s here, a
copy ~2 s).

Nothing is normalised away but the client's clock (TPC-C's timestamps, my_stream.py): the
session's set-up (mysqlclient's ``SET NAMES`` for the driver's charset) and its ``COM_QUIT`` come
from the one ``MySQLDriver.connect`` / ``close`` that every executor uses, so they are the same on
the wire too, and compared with the rest.

Every workload with a loop form runs here: ``NO_LOOP_ON_MARIADB`` lists any the MariaDB loop cannot
run (none now), and ``test_a_stream_the_mysql_loops_cannot_run_is_listed_here`` fails when one of
them gains a loop form, so that its comparison is added here."""

from __future__ import annotations

import secrets
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import pytest

from benchwright.results import base_operation
from benchwright.runner.drivers.mysql import MySQLDriver
from benchwright.runner.engine import PhaseConfig, run_phase
from benchwright.runner.workloads.base import ThreadInfo, Workload
from benchwright.runner.workloads.registry import registered
from tests.runner.conftest import mysql_session
from tests.runner.sql_executors import MYSQL, SqlStream, assert_one_stream, three_ways
from tests.statuses import statuses_of

pytestmark = pytest.mark.servers

OLTP = {"oltp.tables": "2", "oltp.table_size": "200"}
# one table: the loops make its point selects a block at a time (MySqlWire.int_statements, in C
# where built); on two, one at a time (MySqlWire.statement)
ONE_TABLE = {"oltp.tables": "1", "oltp.table_size": "200"}
TPCC = {"tpcc.warehouses": "1"}
EVEN_MIX = "20,20,20,20,20"  # so that Delivery and Stock-Level (4 % each by default) come up in 40
TRANSACTIONS = {"NewOrder", "Payment", "OrderStatus", "Delivery", "StockLevel"}
YCSB = {"recordcount": "100", "fieldcount": "3", "fieldlength": "12"}
YCSB_A = {**YCSB, "readproportion": "0.5", "updateproportion": "0.5", "requestdistribution": "zipfian"}
YCSB_MIX = {  # every kind of operation; one field of three read or written (writeallfields false)
    **YCSB,
    "readproportion": "0.3",
    "updateproportion": "0.2",
    "insertproportion": "0.2",
    "scanproportion": "0.1",
    "readmodifywriteproportion": "0.2",
    "readallfields": "false",
    "maxscanlength": "5",
}
# case: (workload, its load's properties, the run's properties, operations, the names it must draw)
CASES: dict[str, tuple[str, dict[str, str], dict[str, str], int, set[str]]] = {
    "tpcb-like": ("tpcb", {}, {"tpcb.script": "tpcb-like"}, 40, {"tpcb-like"}),
    "select-only": ("tpcb", {}, {"tpcb.script": "select-only"}, 150, {"select-only"}),
    "oltp_read_write": ("oltp", OLTP, OLTP, 20, {"oltp_read_write"}),
    "point_select": ("oltp", OLTP, {**OLTP, "oltp.test": "point_select"}, 150, {"oltp_point_select"}),
    "tpcc": ("tpcc", TPCC, {**TPCC, "tpcc.mix": EVEN_MIX}, 40, TRANSACTIONS),
    "ycsb-a": ("ycsb", YCSB, YCSB_A, 150, {"READ", "UPDATE"}),
    "ycsb-mix": ("ycsb", YCSB, YCSB_MIX, 150, {"READ", "UPDATE", "INSERT", "SCAN", "READ-MODIFY-WRITE"}),
    "point_select-one-table": (
        "oltp",
        ONE_TABLE,
        {**ONE_TABLE, "oltp.test": "point_select"},
        150,
        {"oltp_point_select"},
    ),
}
# Workloads the MariaDB loop cannot run, and why (the module's docstring).
NO_LOOP_ON_MARIADB: dict[str, dict[str, str]] = {}


def _load(admin: Any, url: str, workload: str, props: dict[str, str]) -> tuple[str, str]:
    """A new database of the shared server with ``workload`` loaded into it: its name and URL."""
    name = f"parity_{secrets.token_hex(4)}"
    admin.cursor().execute(f"CREATE DATABASE {name}")
    loaded = urlunsplit(urlsplit(url)._replace(path=f"/{name}"))
    config = PhaseConfig(workload, "load", "mysql", {**props, "mysql.url": loaded}, seed=5, threads=2)
    done = run_phase(config)
    assert done.valid, done.validity
    return name, loaded


@pytest.fixture(scope="module")
def tpcc_loaded(mysql_url: str) -> Iterator[str]:
    """One TPC-C warehouse, loaded once for the module: the database each executor's copy is made from."""
    admin = mysql_session(mysql_url)
    name = ""
    try:
        name, _ = _load(admin, mysql_url, "tpcc", TPCC)
        yield name
    finally:
        if name:
            admin.cursor().execute(f"DROP DATABASE IF EXISTS {name}")
        admin.close()


def _copy(admin: Any, source: str, name: str) -> None:
    """Every table of database ``source`` into the new database ``name``: its definition, then its rows."""
    cursor = admin.cursor()
    cursor.execute(f"CREATE DATABASE {name}")
    cursor.execute("SELECT table_name FROM information_schema.tables WHERE table_schema = %s", (source,))
    for (table,) in cursor.fetchall():
        cursor.execute(f"CREATE TABLE {name}.{table} LIKE {source}.{table}")
        cursor.execute(f"INSERT INTO {name}.{table} SELECT * FROM {source}.{table}")


@pytest.fixture
def loads(
    mysql_url: str, request: pytest.FixtureRequest
) -> Iterator[Callable[[str, dict[str, str]], Callable[[], str]]]:
    """``loads(workload, props)``: a function that loads ``workload`` into a new database of the
    shared server and returns its URL, so that each executor starts from the same freshly loaded
    rows and sees no other's writes (on MariaDB a database is a schema: cheap to make and drop).
    TPC-C's is a copy of the module's one load (``tpcc_loaded``)."""
    admin = mysql_session(mysql_url)
    made: list[str] = []

    def source(workload: str, props: dict[str, str]) -> Callable[[], str]:
        def load() -> str:
            if workload != "tpcc":
                name, url = _load(admin, mysql_url, workload, props)
                made.append(name)
                return url
            name = f"parity_{secrets.token_hex(4)}"
            made.append(name)
            _copy(admin, request.getfixturevalue("tpcc_loaded"), name)
            return urlunsplit(urlsplit(mysql_url)._replace(path=f"/{name}"))

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
    assert sum(threads.statuses.values()) == count
    # a New-Order in a hundred ends with an unused item and rolls back (TPC-C 2.4.1.4)
    assert {status for _, status in threads.statuses} <= (
        {"OK", "USER_ABORT"} if workload == "tpcc" else {"OK"}
    )
    assert_one_stream(threads, python, c, count)
    # the session as the driver opens and closes it, on every executor's wire
    for run in (threads, python, c):
        assert run.statements[0] == ("SET NAMES utf8mb4", ()) and run.statements[-1] == ("COM_QUIT", ())


def test_a_stream_the_mysql_loops_cannot_run_is_listed_here(mysql_url: str) -> None:
    """A workload listed here has a loop form on other servers but none on MariaDB: when it gains
    it, its three-way comparison belongs above."""
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


def _tpcc(url: str, phase: str, **kw: Any) -> Any:
    props = {**TPCC, "mysql.url": url, **kw.pop("props", {})}
    return run_phase(PhaseConfig("tpcc", phase, "mysql", props, seed=11, **{"processes": 1, **kw}))


def test_concurrent_tpcc_terminals_on_the_mysql_loop_keep_the_consistency_conditions(
    loads: Callable[[str, dict[str, str]], Callable[[], str]],
) -> None:
    """TPC-C's outcome on the MariaDB loop, as tests/runner/test_tpcc_loop.py checks it on
    PostgreSQL's: four terminals on one warehouse, a count of transactions, every one OK or a user
    abort (a deadlock between two terminals would be a RETRY, never an error), the consistency
    conditions holding, and no session left inside a transaction."""
    url = loads("tpcc", TPCC)()
    run = _tpcc(url, "run", threads=4, operation_count=300, max_seconds=600)
    assert "event loop" in run.measurement.method, run.measurement.method
    assert set(run.operations) == TRANSACTIONS
    assert run.operations_total == 300 and run.failed_total == 0, run.operations
    assert run.extra["consistency"]["ok"], run.extra["consistency"]
    new_order = run.operations["NewOrder"]
    assert run.extra["user_aborts"] == new_order.statuses.get("USER_ABORT", 0)
    assert _open_transactions(url) == 0


def test_a_tpcc_transaction_that_fails_part_way_on_the_mysql_loop_is_rolled_back(
    loads: Callable[[str, dict[str, str]], Callable[[], str]],
) -> None:
    """District 3 is gone: a New-Order there raises LookupError in its own code, between two round
    trips. On the loop, as on a thread, the request fails under that name, the transaction is rolled
    back (no order row is left for that district, d_next_o_id elsewhere moves with the orders) and
    the connection's next transaction starts clean."""
    outcomes = []
    for model in ("threads", "auto"):
        url = loads("tpcc", TPCC)()
        admin = mysql_session(url)
        try:
            admin.cursor().execute("DELETE FROM district WHERE d_id = 3")
            run = _tpcc(url, "run", threads=1, operation_count=120, props={"client.model": model})
            cursor = admin.cursor()
            cursor.execute("SELECT COUNT(*) FROM orders WHERE o_d_id = 3 AND o_id > 3000")
            (left,) = cursor.fetchone()
        finally:
            admin.close()
        assert ("event loop" in run.measurement.method) == (model == "auto")
        statuses = {name: statuses_of(run.operations, name) for name in map(base_operation, run.operations)}
        outcomes.append((statuses, run.extra.get("error_kinds"), left))
    threads, loop = outcomes
    assert loop[1] and set(loop[1]) == {"NewOrder:LookupError"}, loop[1]
    assert loop == threads and loop[2] == 0


def _open_transactions(url: str) -> int:
    """Sessions of this database inside a transaction: every one the loop began, it ended."""
    admin = mysql_session(url)
    try:
        cursor = admin.cursor()
        cursor.execute(
            "SELECT COUNT(*) FROM information_schema.innodb_trx t JOIN information_schema.processlist p"
            " ON p.id = t.trx_mysql_thread_id WHERE p.db = DATABASE()"
        )
        (count,) = cursor.fetchone()
    finally:
        admin.close()
    return int(count)
