"""A failed operation is never throughput (issue 24): servers that refuse work, and what the result says.

Each case provokes real failures on a real server and checks the reported figures against the
successes the server itself holds: throughput is successes per second, the failures have their own
entry (``INSERT-FAILED``) with their own latencies, the interval series adds up to the same counts, and
the error-rate flag makes the phase invalid."""

from __future__ import annotations

from typing import Any

import psycopg
import pytest
import redis

from benchwright.results import ResultDocument
from benchwright.runner.engine import PhaseConfig, run_phase
from benchwright.runner.measure import decode_histogram
from benchwright.runner.workloads.ycsb.properties import load_properties

pytestmark = pytest.mark.servers


def _phase(phase: str, engine: str, props: dict[str, str], threads: int = 2) -> ResultDocument:
    return run_phase(
        PhaseConfig(
            workload="ycsb", phase=phase, engine=engine, properties=props, threads=threads, processes=1
        )
    )


def assert_successes_only(doc: ResultDocument, op: str) -> None:
    """The figures a reader sees count ``op``'s successes only, and add up everywhere."""
    runtime_s = doc.runtime_ms / 1000
    done = doc.operations.get(op)
    failed = doc.operations[f"{op}-FAILED"]
    ok = done.operations if done is not None else 0
    assert failed.statuses == {"ERROR": failed.operations} and failed.operations > 0
    assert decode_histogram(failed.histogram or "").get_total_count() == failed.operations  # its own
    if done is not None:
        assert "ERROR" not in done.statuses
        assert decode_histogram(done.histogram or "").get_total_count() == ok
        # runtime_ms is kept to the microsecond: on a phase of a few hundred ms that rounding alone
        # is over 1e-6 of the rate (CI: 675.26669 against 675.26581), as tests/statuses.py allows
        assert done.throughput == pytest.approx(ok / runtime_s, rel=max(1e-6, 1e-3 / doc.runtime_ms))
    assert doc.failed_total == doc.failed() == failed.operations
    assert doc.operations_total == sum(o.operations for o in doc.succeeded().values())
    assert doc.throughput == pytest.approx(doc.operations_total / runtime_s, rel=1e-3)
    assert sum(sum(i.operations.values()) for i in doc.intervals) == doc.operations_total
    assert sum(i.errors for i in doc.intervals) == doc.failed_total
    assert {f.code: f.severity for f in doc.validity}.get("error_rate") == "invalid"


def test_a_redis_that_fills_up_reports_only_the_inserts_it_kept(private_redis: Any) -> None:
    # given a Redis with 2 MB of memory that refuses writes beyond it (noeviction), 200 records loaded
    _, conn = private_redis
    admin = redis.Redis(host="127.0.0.1", port=int(conn["redis.port"]))
    props = load_properties(
        ["workloada"],
        {
            **conn,
            "recordcount": "200",
            "fieldlength": "1000",
            "operationcount": "6000",
            "maxexecutiontime": "20",
            "readproportion": "0",
            "updateproportion": "0",
            "insertproportion": "1",
        },
    )
    _phase("load", "redis", props)
    admin.config_set("maxmemory-policy", "noeviction")
    admin.config_set("maxmemory", str(admin.info("memory")["used_memory"] + 2_000_000))
    before = admin.dbsize()

    # when the run phase inserts 6,000 records of 10 KB: most are refused (OOM)
    doc = _phase("run", "redis", props)

    # then the reported inserts are exactly the records the server holds, and nothing else counts
    assert_successes_only(doc, "INSERT")
    kept = doc.operations["INSERT"].operations
    assert admin.dbsize() - before == kept
    assert doc.failed("INSERT") + kept == 6000
    assert any(k.startswith("INSERT:") for k in doc.extra["error_kinds"])


def test_a_postgresql_that_refuses_writes_reports_the_reads_alone(pg_url: str) -> None:
    # given 300 records loaded, then the database made read-only for new sessions
    props = load_properties(
        ["workloada"],
        {"postgres.url": pg_url, "recordcount": "300", "operationcount": "2000", "maxexecutiontime": "20"},
    )
    _phase("load", "postgres", props)
    name = pg_url.rsplit("/", 1)[-1]
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(f"ALTER DATABASE {name} SET default_transaction_read_only = on")
    try:
        # when YCSB A (50% updates) runs
        doc = _phase("run", "postgres", props)
    finally:
        writable = "-c default_transaction_read_only=off"  # this session may undo it
        with psycopg.connect(pg_url, autocommit=True, options=writable) as conn:
            conn.execute(f"ALTER DATABASE {name} RESET default_transaction_read_only")

    # then every update failed and is its own entry; the throughput is the reads' alone
    assert "UPDATE" not in doc.operations
    assert_successes_only(doc, "UPDATE")
    reads = doc.operations["READ"]
    assert "ERROR" not in reads.statuses and reads.operations > 0
    assert doc.operations_total == reads.operations
    assert doc.failed("UPDATE") + reads.operations == 2000
    assert set(doc.extra["error_kinds"]) == {"UPDATE:ReadOnlySqlTransaction"}
