"""The engine's worker side: per-thread recorders fold into exact totals, whichever way the worker
processes start, and fork is only chosen when no other thread could hold a lock."""

from __future__ import annotations

import threading

import pytest

from benchwright.runner.engine import PhaseConfig, run_phase, start_method
from benchwright.runner.measure import decode_histogram
from benchwright.runner.workloads.ycsb.properties import load_properties


@pytest.mark.parametrize("method", ["fork", "spawn"])
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
    assert start_method() == ("fork" if threading.active_count() == 1 else "spawn")
    release = threading.Event()
    other = threading.Thread(target=release.wait)
    other.start()
    try:
        assert start_method() == "spawn"
    finally:
        release.set()
        other.join()
    monkeypatch.setenv("BENCHWRIGHT_START_METHOD", "forkserver")
    assert start_method() == "forkserver"


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
