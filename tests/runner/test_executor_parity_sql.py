"""Three executors of one SQL stream on PostgreSQL: pgbench's TPC-B and sysbench's OLTP, one client's
seeded stream run by threads, the Python libpq loop and the C libpq loop, each on its own copy of
the same freshly loaded database, must send the same statements with the same parameters in the
same order (as the relay in tests/runner/pg_stream.py reads them off the wire), and record the same
operations with the same statuses. Each workload draws its run in one generator taking a ``make``:
the threads' ``SqlCalls`` (workloads/sqlscript/sql_calls.py) or the driver's SQL wire, so this holds
that the makers agree. Each executor runs on its own freshly loaded schema. TPC-C's three-way case
is in test_tpcc_loop.py, on that module's one loaded warehouse (its load alone takes ~16 s here). The streams' pairwise outcomes
(the rows left) are compared in test_event_loop_sql.py."""

from __future__ import annotations

import secrets
from collections.abc import Callable, Iterator

import psycopg
import pytest

from benchwright.runner.engine import PhaseConfig, run_phase
from tests.runner.sql_executors import SqlStream, assert_one_stream, in_schema, three_ways

pytestmark = pytest.mark.servers

OLTP = {"oltp.tables": "2", "oltp.table_size": "200"}
LOAD = {"tpcb": {}, "oltp": OLTP}  # each workload's load, once per executor
CASES: dict[str, tuple[str, dict[str, str], int, set[str]]] = {
    "tpcb-like": ("tpcb", {"tpcb.script": "tpcb-like"}, 40, {"tpcb-like"}),
    "select-only": ("tpcb", {"tpcb.script": "select-only"}, 150, {"select-only"}),
    "oltp_read_write": ("oltp", OLTP, 20, {"oltp_read_write"}),
}


@pytest.fixture
def loads(pg_url: str) -> Iterator[Callable[[str], Callable[[], str]]]:
    """``loads(workload)``: a function that loads ``workload`` into a new schema of this module's
    database (pg_url's) and returns its URL: each executor starts from the same freshly loaded rows
    and sees no other's writes. A schema, not a database cloned per executor: dropping a database
    forces a checkpoint of the shared server (seconds each, here)."""
    made: list[str] = []

    def source(workload: str) -> Callable[[], str]:
        def load() -> str:
            schema = f"parity_{secrets.token_hex(4)}"
            with psycopg.connect(pg_url, autocommit=True) as conn:
                conn.execute(f"CREATE SCHEMA {schema}")
            made.append(schema)
            url = in_schema(pg_url, schema)
            props = {**LOAD[workload], "postgres.url": url}
            done = run_phase(PhaseConfig(workload, "load", "postgres", props, seed=5, threads=2))
            assert done.valid, done.validity
            return url

        return load

    yield source
    with psycopg.connect(pg_url, autocommit=True) as conn:
        for schema in made:
            conn.execute(f"DROP SCHEMA {schema} CASCADE")


@pytest.mark.parametrize("case", sorted(CASES))
def test_threads_the_python_loop_and_the_c_loop_send_one_sql_stream(
    case: str, loads: Callable[[str], Callable[[], str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    workload, props, count, names = CASES[case]
    threads, python, c = three_ways(SqlStream(workload, props, "", count), loads(workload), monkeypatch)
    assert set(threads.names) == names
    assert threads.statuses == {(name, "OK"): count for name in names}
    assert_one_stream(threads, python, c, count)
