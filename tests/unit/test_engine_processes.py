"""The engine's worker side: per-thread recorders fold into exact totals, whichever way the worker
processes start; fork is only chosen when no other thread could hold a lock, a forkserver otherwise,
and a forkserver's workers follow the parent's environment as it is at each phase."""

from __future__ import annotations

import threading

import pytest

from benchwright.runner.engine import PhaseConfig, run_phase, start_method
from benchwright.runner.measure import decode_histogram
from benchwright.runner.workloads.ycsb.properties import load_properties
from tests.null_resp import NullResp


@pytest.mark.parametrize("method", ["fork", "forkserver", "spawn"])
def test_counts_are_exact_with_several_threads_per_process(
    method: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BENCHWRIGHT_START_METHOD", method)
    props = load_properties(["workloada"], {"operationcount": "3001", "null.fail_every": "7"})
    doc = run_phase(
        PhaseConfig(workload="ycsb", phase="run", engine="null", properties=props, threads=3, processes=1)
    )
    statuses: dict[str, int] = {}
    for summary in doc.operations.values():
        assert decode_histogram(summary.histogram or "").get_total_count() == summary.operations
        for key, n in summary.statuses.items():
            statuses[key] = statuses.get(key, 0) + n
    # every 7th call of each thread's driver fails: 1001 + 1000 + 1000 calls
    failed = 1001 // 7 + 2 * (1000 // 7)
    assert statuses["ERROR"] == doc.failed_total == doc.failed() == failed
    assert doc.operations_total == 3001 - failed  # a failed operation is never counted as done
    assert doc.throughput == pytest.approx(doc.operations_total / (doc.runtime_ms / 1000), rel=1e-4)
    assert sum(sum(i.operations.values()) for i in doc.intervals) == 3001 - failed
    assert sum(i.errors for i in doc.intervals) == failed


def test_fork_only_when_this_process_runs_a_single_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("BENCHWRIGHT_START_METHOD", raising=False)
    assert start_method() == ("fork" if threading.active_count() == 1 else "forkserver")
    release = threading.Event()
    other = threading.Thread(target=release.wait)
    other.start()
    try:
        assert start_method() == "forkserver"
    finally:
        release.set()
        other.join()
    monkeypatch.setenv("BENCHWRIGHT_START_METHOD", "spawn")
    assert start_method() == "spawn"


def _empty_database(command: list[bytes]) -> bytes:
    """An empty database's answers: nothing stored, every write acknowledged."""
    name = command[0].upper()
    if name in (b"DBSIZE", b"EXISTS", b"DEL"):
        return b":0\r\n"
    if name == b"SCAN":
        return b"*2\r\n$1\r\n0\r\n*0\r\n"
    if name == b"GETRANGE":
        return b"$0\r\n\r\n"
    return b"$-1\r\n" if name in (b"GET", b"TYPE", b"INFO") else b"+OK\r\n"


def _loop_of_a_phase(port: int) -> str:
    """How a phase's worker timed its requests, against the null RESP server (tests/null_resp.py)."""
    props = {
        "redis.host": "127.0.0.1",
        "redis.port": str(port),
        "redisbench.tests": "set",
        "redisbench.requests": "50",
    }
    doc = run_phase(
        PhaseConfig(workload="redis-bench", phase="run", engine="redis", properties=props, processes=1)
    )
    assert doc.operations["SET"].operations == 50 and doc.failed_total == 0
    return doc.measurement.method


def test_a_forkserver_worker_takes_the_environment_the_parent_has_at_each_phase(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The server starts with the first phase and keeps that environment; a later phase's workers
    must still see what the parent set since (here: the compiled loop switched off, then on)."""
    monkeypatch.setenv("BENCHWRIGHT_START_METHOD", "forkserver")
    monkeypatch.setenv("BENCHWRIGHT_COMPILED_LOOP", "1")
    with NullResp(_empty_database) as server:
        assert "RESP hot path in C" in _loop_of_a_phase(server.port)
        monkeypatch.setenv("BENCHWRIGHT_COMPILED_LOOP", "0")
        method = _loop_of_a_phase(server.port)
        assert "event loop" in method and "RESP hot path in C" not in method
        monkeypatch.setenv("BENCHWRIGHT_COMPILED_LOOP", "1")
        assert "RESP hot path in C" in _loop_of_a_phase(server.port)


@pytest.mark.parametrize("cores", [1, 2, 8])
def test_default_processes_give_sql_connections_a_process_each_and_keep_redis_on_one(
    cores: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    from benchwright.runner.engine.client_model import default_processes
    from benchwright.runner.event_loop import EventLoop
    from benchwright.runner.event_loop_my import MyEventLoop
    from benchwright.runner.event_loop_pq import PqEventLoop

    monkeypatch.setattr("os.cpu_count", lambda: cores)
    for clients in (1, 4, 50, 51, 200):
        assert default_processes(clients, EventLoop) == min(-(-clients // 50), cores)
        assert default_processes(clients, PqEventLoop) == min(
            clients, 2 * cores
        )  # a process each, as threads
        assert default_processes(clients, MyEventLoop) == min(clients, cores)
        assert default_processes(clients) == min(clients, 2 * cores)  # threads
