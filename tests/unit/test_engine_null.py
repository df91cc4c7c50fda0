"""The engine on the null driver: counts, mixes, merging across processes, pacing, errors."""

from __future__ import annotations

from benchwright.results import ResultDocument
from benchwright.runner.engine import PhaseConfig, run_phase
from benchwright.runner.measure import decode_histogram
from benchwright.runner.workloads.ycsb.properties import load_properties


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
    assert errors == 100
    flags = {f.code: f for f in doc.validity}
    assert flags["error_rate"].severity == "invalid"


def test_max_execution_time_bounds_an_endless_run() -> None:
    doc = _run({"operationcount": "0", "maxexecutiontime": "1"}, threads=1, processes=1)
    assert 0.9 <= doc.runtime_ms / 1000 < 5
    assert doc.operations_total > 0
