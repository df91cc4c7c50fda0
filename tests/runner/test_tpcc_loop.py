"""TPC-C on the libpq event loop against a real PostgreSQL: each transaction advances statement by
statement on one connection, its later statements built from its earlier answers (New-Order's order
number, Payment's customer by name, Delivery's oldest order), and it does exactly what it does on a
thread: from the same loaded tables and the same draws, the two client models leave the same rows.
The consistency conditions hold after a concurrent run on the loop."""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import psycopg
import pytest

from benchwright.results import ResultDocument, base_operation, is_failed
from benchwright.runner.engine import PhaseConfig, run_phase
from tests.runner.sql_executors import SqlStream, assert_one_stream, three_ways
from tests.statuses import assert_honest, failures_of, statuses_of

pytestmark = [pytest.mark.servers, pytest.mark.slow]

LOOP = "event loop"
TRANSACTIONS = {"NewOrder", "Payment", "OrderStatus", "Delivery", "StockLevel"}
# every column a transaction writes, timestamps (datetime.now() at the client) left out
STATE = {
    "warehouse": "SELECT w_id, w_ytd FROM warehouse ORDER BY 1",
    "district": "SELECT d_w_id, d_id, d_ytd, d_next_o_id FROM district ORDER BY 1, 2",
    "customer": (
        "SELECT md5(string_agg(concat_ws(':', c_w_id, c_d_id, c_id, c_balance, c_ytd_payment, c_payment_cnt,"
        " c_delivery_cnt, md5(c_data)), ',' ORDER BY c_w_id, c_d_id, c_id)) FROM customer"
    ),
    "history": (
        "SELECT count(*), md5(string_agg(concat_ws(':', h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_amount,"
        " h_data), ',' ORDER BY h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_amount, h_data)) FROM history"
    ),
    "orders": (
        "SELECT count(*), md5(string_agg(concat_ws(':', o_w_id, o_d_id, o_id, o_c_id, o_carrier_id, o_ol_cnt,"
        " o_all_local), ',' ORDER BY o_w_id, o_d_id, o_id)) FROM orders"
    ),
    "new_order": "SELECT count(*), sum(no_o_id) FROM new_order",
    "order_line": (
        "SELECT count(*), count(ol_delivery_d), md5(string_agg(concat_ws(':', ol_w_id, ol_d_id, ol_o_id,"
        " ol_number, ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_dist_info), ','"
        " ORDER BY ol_w_id, ol_d_id, ol_o_id, ol_number)) FROM order_line"
    ),
    "stock": "SELECT sum(s_quantity), sum(s_ytd), sum(s_order_cnt), sum(s_remote_cnt) FROM stock",
}


def phase(url: str, name: str, **kw: Any) -> ResultDocument:
    props = {"postgres.url": url, "tpcc.warehouses": "1", **kw.pop("props", {})}
    config = PhaseConfig("tpcc", name, "postgres", props, seed=11, **{"threads": 1, "processes": 1, **kw})
    return run_phase(config)


def state(url: str) -> dict[str, Any]:
    with psycopg.connect(url) as conn:
        return {table: conn.execute(sql).fetchall() for table, sql in STATE.items()}


@pytest.fixture(scope="module")
def loaded(pg_url: str) -> Iterator[Any]:
    """One warehouse loaded once; ``copy()`` gives a fresh database cloned from it (TEMPLATE)."""
    load = phase(pg_url, "load", threads=2)
    assert load.valid, load.validity
    parts = urlsplit(pg_url)
    source = parts.path.lstrip("/")
    admin = urlunsplit(parts._replace(path="/bench"))
    made: list[str] = []

    def copy() -> str:
        name = f"{source}_{secrets.token_hex(3)}"
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {name} TEMPLATE {source}")
        made.append(name)
        return urlunsplit(parts._replace(path=f"/{name}"))

    yield copy
    with psycopg.connect(admin, autocommit=True) as conn:
        for name in made:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def test_tpcc_on_the_loop_leaves_the_rows_threads_leave(loaded: Any) -> None:
    outcomes = []
    for model in ("threads", "auto"):
        url = loaded()
        run = phase(url, "run", operation_count=300, props={"client.model": model})
        assert (LOOP in run.measurement.method) == (model == "auto"), run.measurement.method
        statuses = {name: summary.statuses for name, summary in run.operations.items()}
        outcomes.append((statuses, state(url)))
        assert run.extra["consistency"]["ok"], run.extra["consistency"]
    threads, loop = outcomes
    assert set(loop[0]) == TRANSACTIONS
    assert sum(n for s in loop[0].values() for n in s.values()) == 300
    assert all(set(s) <= {"OK", "USER_ABORT"} for s in loop[0].values()), loop[0]
    assert loop[0] == threads[0]
    for table in STATE:
        assert loop[1][table] == threads[1][table], table


def test_threads_the_python_loop_and_the_c_loop_send_one_tpcc_stream(
    loaded: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One terminal's seeded TPC-C stream, each executor on its own copy of the warehouse: the same
    transactions, the same statements with the same parameters (each built from the answers before
    it: order numbers, customers by name, the oldest new order) and the same statuses; as
    tests/runner/test_executor_parity_sql.py does for TPC-B and OLTP. An even mix, so that Delivery
    and Stock-Level (4 % each by default) come up in 40 transactions."""
    props = {"tpcc.warehouses": "1", "tpcc.mix": "20,20,20,20,20"}
    threads, python, c = three_ways(SqlStream("tpcc", props, "", 40), loaded, monkeypatch)
    assert set(threads.names) == TRANSACTIONS
    assert {status for _, status in threads.statuses} <= {"OK", "USER_ABORT"}
    assert_one_stream(threads, python, c, 40)


def test_concurrent_terminals_on_the_loop_keep_the_consistency_conditions(loaded: Any) -> None:
    """Four terminals on one warehouse, a count of transactions each (not a duration: how many a
    few seconds hold depends on the machine's load, and the rarer types, 4 % each, may not come up
    at all in a short run); then a run the deadline cuts off with transactions in flight."""
    url = loaded()
    run = phase(url, "run", threads=4, operation_count=400, max_seconds=600)  # the count ends it
    assert LOOP in run.measurement.method
    assert set(run.operations) == TRANSACTIONS
    assert sum(sum(op.statuses.values()) for op in run.operations.values()) == 400
    assert run.operations_total == 400 and run.failed_total == 0  # no failure: every one counts
    assert_honest(run)
    new_order = run.operations["NewOrder"]
    assert failures_of(run.operations, "NewOrder") == 0 and new_order.statuses.get("OK", 0) > 10
    assert run.extra["consistency"]["ok"], run.extra["consistency"]
    assert {f.severity for f in run.validity if f.code == "tpcc_consistency"} == {"info"}
    assert run.extra["user_aborts"] == new_order.statuses.get("USER_ABORT", 0)
    assert open_transactions(url) == 0
    # The deadline stops the terminals mid-stream (each busy with a transaction at any speed): the
    # loop sends no new one, lets those in flight finish, and leaves nothing half done.
    cut = phase(url, "run", threads=4, max_seconds=1)
    assert LOOP in cut.measurement.method and not cut.aborted
    assert cut.failed_total == 0 and not any(is_failed(name) for name in cut.operations), cut.operations
    assert_honest(cut)
    assert cut.extra["consistency"]["ok"], cut.extra["consistency"]
    assert open_transactions(url) == 0


def open_transactions(url: str) -> int:
    """Sessions left inside a transaction on this database: every one the loop began, it committed
    or rolled back."""
    with psycopg.connect(url) as conn:
        (idle,) = conn.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
            " AND state LIKE 'idle in transaction%'"
        ).fetchone() or (0,)
    return int(idle)


def test_a_transaction_that_fails_part_way_on_the_loop_fails_as_on_a_thread_and_is_rolled_back(
    loaded: Any,
) -> None:
    """District 3 is gone: a New-Order there raises LookupError after its first statements (in the
    transaction's own code, between two round trips). That request fails under that name, nothing
    it did stays, and the connection's next transaction starts clean; threads do the same."""
    outcomes = []
    for model in ("threads", "auto"):
        url = loaded()
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("DELETE FROM district WHERE d_id = 3")
        run = phase(url, "run", operation_count=200, props={"client.model": model})
        assert (LOOP in run.measurement.method) == (model == "auto")
        assert_honest(run)
        names = {base_operation(name) for name in run.operations}
        statuses = {name: statuses_of(run.operations, name) for name in names}
        outcomes.append((statuses, run.extra.get("error_kinds"), state(url)))
        # the failed New-Orders are their own entry and not in the throughput
        assert run.failed_total == run.failed("NewOrder") == statuses["NewOrder"].get("ERROR", 0)
    threads, loop = outcomes
    assert loop[0]["NewOrder"].get("ERROR", 0) > 0 and loop[0]["NewOrder"].get("OK", 0) > 0
    assert loop[1] == {"NewOrder:LookupError": loop[0]["NewOrder"]["ERROR"]}
    assert loop[0] == threads[0] and loop[1] == threads[1]
    for table in STATE:
        assert loop[2][table] == threads[2][table], table
