"""The engine on the null driver: counts, mixes, merging across processes, pacing, errors."""

from __future__ import annotations

import json
import signal
import subprocess
import sys

from benchwright.results import ResultDocument
from benchwright.runner.engine import PhaseConfig, run_phase
from benchwright.runner.measure import decode_histogram
from benchwright.runner.workloads.ycsb.properties import load_properties
from tests.statuses import assert_honest


def _run(overrides: dict[str, str], **kw: object) -> ResultDocument:
    props = load_properties(["workloada"], overrides)
    config = PhaseConfig(workload="ycsb", phase="run", engine="null", properties=props, seed=1, **kw)  # type: ignore[arg-type]
    return run_phase(config)


def test_operation_count_is_exact_across_processes_and_threads() -> None:
    doc = _run({"operationcount": "5001"}, threads=5, processes=2)
    assert doc.operations_total == 5001
    assert doc.measurement.processes == 2 and doc.measurement.threads == 5
    mix = doc.operations["READ"].operations / doc.operations_total
    assert 0.45 < mix < 0.55
    merged = decode_histogram(doc.operations["READ"].histogram or "")
    assert merged.get_total_count() == doc.operations["READ"].operations
    assert sum(sum(i.operations.values()) for i in doc.intervals) == 5001
    assert doc.measurement.latency == "service_time"
    ResultDocument.parse(doc.model_dump_json())  # the document validates against its own schema


def test_target_rate_paces_and_reports_response_time() -> None:
    doc = _run({"operationcount": "60"}, threads=2, processes=1, target=200.0)
    assert doc.measurement.latency == "response_time"
    assert doc.measurement.target_ops_per_sec == 200.0
    # 60 operations at 200/s take at least ~0.29 s of schedule; far more than the null driver needs.
    assert doc.runtime_ms >= 250
    assert doc.operations["READ"].service_time_histogram is not None


def test_failed_operations_are_counted_per_status_and_flagged() -> None:
    doc = _run({"operationcount": "1000", "null.fail_every": "10"}, threads=1, processes=1)
    errors = sum(op.statuses.get("ERROR", 0) for op in doc.operations.values())
    assert errors == 100 == doc.failed_total  # all in -FAILED entries
    assert doc.operations_total == 900  # and none in the throughput
    assert_honest(doc)
    flags = {f.code: f for f in doc.validity}
    assert flags["error_rate"].severity == "invalid"


def test_max_execution_time_bounds_an_endless_run() -> None:
    doc = _run({"operationcount": "0", "maxexecutiontime": "1"}, threads=1, processes=1)
    assert 0.9 <= doc.runtime_ms / 1000 < 5
    assert doc.operations_total > 0


INTERRUPTED_CHILD = """
import sys
from benchwright.runner.engine import PhaseConfig, run_phase
from benchwright.runner.workloads.ycsb.properties import load_properties

def progress(elapsed, ops, rate):
    if ops:
        print("running", flush=True)

props = load_properties(["workloada"], {"operationcount": "0", "maxexecutiontime": "60"})
config = PhaseConfig(workload="ycsb", phase="run", engine="null", properties=props, threads=2, processes=2)
print(run_phase(config, progress).model_dump_json(), flush=True)
"""


def test_an_interrupt_stops_the_workers_and_keeps_a_flagged_partial_result() -> None:
    """Ctrl-C in the parent (SIGINT to it alone): the workers are told to stop, their reports are
    kept, and the document says it is partial."""
    child = subprocess.Popen(
        [sys.executable, "-c", INTERRUPTED_CHILD], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        assert child.stdout is not None
        assert child.stdout.readline().strip() == "running"  # the workers are measuring
        child.send_signal(signal.SIGINT)
        out, err = child.communicate(timeout=45)  # far below the 60 s the phase would otherwise run
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert child.returncode == 0, err
    doc = ResultDocument.parse(json.loads(out.strip().splitlines()[-1]))
    assert doc.aborted
    codes = {f.code for f in doc.validity}
    assert "interrupted" in codes and "worker_lost" not in codes  # both workers reported
    assert doc.operations_total > 0
    assert doc.runtime_ms < 45_000
