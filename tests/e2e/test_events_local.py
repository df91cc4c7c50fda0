"""A failover during the measured phase: the outage is measured, and the run goes on through it.

Locally a failover kills the throwaway server (SIGKILL) and starts it again on the same data; the
runner's clients fail, reconnect and carry on. Each test runs a real spec end to end."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from benchwright.errors import SpecError
from benchwright.local import run_spec
from benchwright.providers.local import local_providers, open_local_store
from benchwright.runs import RunRecord
from benchwright.spec import parse_spec
from tests.statuses import assert_honest

pytestmark = [pytest.mark.servers, pytest.mark.slow]


def _spec(engine: str, workload: dict[str, Any], events: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "name": f"events-{engine}",
        "target": {"provider": "local", "engine": engine},
        "workload": workload,
        "events": events,
    }


def _ycsb(seconds: float = 12.0) -> dict[str, Any]:
    return {
        "name": "ycsb",
        "properties": {"recordcount": 200, "fieldlength": 20, "readproportion": 0.9, "updateproportion": 0.1},
        "phases": {"load": {"threads": 2}, "run": {"threads": 2, "duration_s": seconds}},
    }


def _run(tmp_path: Path, data: dict[str, Any]) -> RunRecord:
    store = open_local_store(tmp_path / "store.sqlite")
    outcome = run_spec(
        parse_spec(data),
        tmp_path / "out",
        lambda out, _spec: local_providers(out, store=store),
        console=Console(file=open(tmp_path / "console.txt", "w"), width=160),  # noqa: SIM115
    )
    return outcome.record


def _check_outage(record: RunRecord) -> None:
    assert record.status == "succeeded", record.error
    cell = record.cells[0]
    run = cell.measured
    assert run is not None and run.availability is not None
    (event,) = run.availability.events
    # issued on the first 0.2 s poll at or after at_s (3 s); the upper bound leaves a loaded machine
    # 4 s for that poll and still catches an event issued late (the run lasts 12 s)
    assert event.action == "failover" and 2.0 <= event.issued_s <= 3.0 + 4.0
    # the clients saw the outage: failures, then every affected client succeeded again
    assert event.errors > 0 and event.clients_affected >= 1
    assert event.unavailable_s is not None and 0 < event.unavailable_s < 15
    assert event.first_failure_s is not None and event.first_failure_s >= event.issued_s - 0.5
    assert event.recovered_s is not None and event.recovered_s > event.first_failure_s
    # the run went on: operations succeeded after the recovery, at a real rate
    later = [i for i in run.intervals if i.t - 1 >= event.recovered_s and i.t <= run.runtime_ms / 1000]
    assert later and sum(i.operations.get("READ", 0) for i in later) > 0
    assert event.before is not None and event.before.throughput > 0
    assert event.after is not None and event.after.throughput > 0
    # every failure is inside the outage, so the error flags are info and the cell stays valid
    errors = sum(o.statuses.get("ERROR", 0) for o in run.operations.values())
    assert errors == event.errors == run.failed_total  # all in the -FAILED entries
    assert_honest(run)  # and none of them in the throughput, overall or in any interval
    outage = [i for i in run.intervals if i.errors]
    assert outage and sum(i.errors for i in outage) == event.errors
    assert all(f.severity != "invalid" for f in cell.validity), cell.validity


@pytest.mark.parametrize("model", ["threads", "auto"])
def test_postgres_failover_is_measured_and_the_run_goes_on(tmp_path: Path, model: str) -> None:
    workload = _ycsb()
    workload["properties"]["client.model"] = model
    record = _run(tmp_path, _spec("postgres", workload, [{"at_s": 3, "action": "failover"}]))
    _check_outage(record)
    run = record.cells[0].measured
    assert run is not None
    assert ("event loop" in run.measurement.method) == (model == "auto"), run.measurement.method


@pytest.mark.parametrize("model", ["threads", "auto"])
def test_redis_failover_is_measured_and_the_run_goes_on(tmp_path: Path, model: str) -> None:
    workload = _ycsb()
    workload["properties"]["client.model"] = model  # a thread per client, or the event loop
    record = _run(tmp_path, _spec("redis", workload, [{"at_s": 3, "action": "failover"}]))
    _check_outage(record)
    run = record.cells[0].measured
    assert run is not None
    assert ("event loop" in run.measurement.method) == (model == "auto"), run.measurement.method
    # Redis saved its data before the kill: reads after the restart still find the records
    assert run.operations["READ"].statuses.get("NOT_FOUND", 0) == 0


def test_scale_is_refused_locally_naming_the_field() -> None:
    with pytest.raises(SpecError) as err:
        parse_spec(_spec("redis", _ycsb(), [{"at_s": 3, "action": "scale", "to": {"node_type": "x"}}]))
    assert err.value.field == "events[0].action" and "locally" in err.value.detail


def test_an_event_after_the_run_phase_is_refused_naming_at_s() -> None:
    with pytest.raises(SpecError) as err:
        parse_spec(_spec("redis", _ycsb(4), [{"at_s": 5, "action": "reboot"}]))
    assert err.value.field == "events[0].at_s"


def test_an_endpoint_is_not_ours_to_restart() -> None:
    data = _spec("redis", _ycsb(), [{"at_s": 1, "action": "failover"}])
    data["target"] = {"provider": "endpoint", "engine": "redis", "hosts": ["127.0.0.1:6379"]}
    with pytest.raises(SpecError) as err:
        parse_spec(data)
    assert err.value.field == "events[0].action" and "not ours" in err.value.detail
