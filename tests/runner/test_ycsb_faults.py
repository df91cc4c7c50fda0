"""Faults have defined outcomes: bad connections fail fast with one line; a dead or stalled server
shows in the result instead of hanging the run."""

from __future__ import annotations

import subprocess
import sys

import pytest
import redis

from benchwright.results import is_failed
from benchwright.runner.engine import PhaseConfig, run_phase
from benchwright.runner.workloads.ycsb.properties import load_properties
from tests.conftest import PG_PORT, REDIS_PORT
from tests.statuses import assert_honest

pytestmark = pytest.mark.servers


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "benchwright.cli", *args], capture_output=True, text=True, timeout=60
    )


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (
            ["postgres", "-p", f"postgres.url=postgresql://bench:wrong@127.0.0.1:{PG_PORT}/bench"],
            f"127.0.0.1:{PG_PORT}: password authentication failed",
        ),
        (
            ["postgres", "-p", "postgres.url=postgresql://bench:bench@127.0.0.1:1/bench"],
            "127.0.0.1:1: Connection refused",
        ),
        (
            ["redis", "-p", f"redis.port={REDIS_PORT}", "-p", "redis.password=wrong"],
            f"127.0.0.1:{REDIS_PORT}: authentication failed",
        ),
        (["redis", "-p", "redis.port=1"], "127.0.0.1:1: Connection refused"),
    ],
    ids=["pg-wrong-password", "pg-wrong-port", "redis-wrong-password", "redis-wrong-port"],
)
def test_connection_failures_are_one_line_naming_the_host(args: list[str], needle: str) -> None:
    result = _cli("ycsb", "load", *args, "-P", "workloadc")
    assert result.returncode != 0
    assert needle in result.stderr
    assert "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert "wrong" not in result.stderr  # the password is not echoed


def test_bad_property_is_an_error_naming_the_key() -> None:
    result = _cli("ycsb", "run", "null", "-P", "workloada", "-p", "requestdistribution=gaussian")
    assert result.returncode == 2
    assert result.stderr.startswith("benchwright: error: requestdistribution:")


def test_server_killed_mid_run_ends_the_run_with_a_flagged_partial_result(private_redis) -> None:
    proc, conn = private_redis
    props = load_properties(
        ["workloada"], {**conn, "recordcount": "200", "operationcount": "0", "maxexecutiontime": "120"}
    )
    run_phase(
        PhaseConfig(workload="ycsb", phase="load", engine="redis", properties=props, threads=2, processes=1)
    )

    def kill_when_running(elapsed: float, ops: int, rate: float) -> None:
        if ops > 100 and proc.poll() is None:
            proc.kill()

    doc = run_phase(
        PhaseConfig(workload="ycsb", phase="run", engine="redis", properties=props, threads=2, processes=1),
        progress=kill_when_running,
    )
    assert doc.aborted
    assert {f.code for f in doc.validity} >= {"server_lost", "error_rate"}
    errors = sum(op.statuses.get("ERROR", 0) for op in doc.operations.values())
    assert errors > 0 and errors == doc.failed_total  # all in the -FAILED entries
    assert all(op.statuses.get("ERROR", 0) == 0 for name, op in doc.operations.items() if not is_failed(name))
    # the successes before the kill (it came after 100), counted apart from the failures; how many
    # failures the reconnect window adds depends on the host's speed, so they are not compared
    assert doc.operations_total > 100
    assert_honest(doc)
    assert doc.runtime_ms < 60_000  # it stopped on its own long before maxexecutiontime
    assert any(k.endswith("ConnectionError") for k in doc.extra["error_kinds"])


def test_a_stall_under_a_target_rate_shows_in_the_upper_percentiles(private_redis) -> None:
    _, conn = private_redis
    props = load_properties(
        ["workloadc"], {**conn, "recordcount": "100", "operationcount": "0", "maxexecutiontime": "3"}
    )
    run_phase(
        PhaseConfig(workload="ycsb", phase="load", engine="redis", properties=props, threads=1, processes=1)
    )
    admin = redis.Redis(host="127.0.0.1", port=int(conn["redis.port"]))
    stalled = []

    def stall_once(elapsed: float, ops: int, rate: float) -> None:
        if elapsed > 0.8 and not stalled:
            stalled.append(elapsed)
            admin.execute_command("DEBUG", "SLEEP", "0.6")  # the server freezes for 600 ms

    doc = run_phase(
        PhaseConfig(
            workload="ycsb",
            phase="run",
            engine="redis",
            properties=props,
            threads=1,
            processes=1,
            target=300.0,
        ),
        progress=stall_once,
    )
    assert stalled
    read = doc.operations["READ"]
    from benchwright.runner.measure import decode_histogram

    service = decode_histogram(read.service_time_histogram or "")
    # ~180 requests were due during the freeze: response time charges them all, service time one.
    assert read.p99_us > 200_000
    assert service.get_value_at_percentile(99) < read.p99_us / 4
    assert doc.measurement.latency == "response_time"
