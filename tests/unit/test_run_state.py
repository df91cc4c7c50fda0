"""The run state (benchwright.stages): its spec is the validated model in the process and travels as
what was written, so the next Lambda reads back the same spec; the finish state needs no spec."""

from __future__ import annotations

import json
from typing import Any

import pytest

from benchwright.spec import BenchmarkSpec, enabled_phases, parse_spec, spec_dict
from benchwright.stages import FinishState, RunState

REDIS_BENCH = {  # a workload without a load phase: a written-out default load would be refused
    "name": "rb",
    "target": {"provider": "local", "engine": "redis"},
    "workload": {"name": "redis-bench", "properties": {"tests": "get"}},
}
RDS = {
    "name": "cloud",
    "target": {
        "provider": "rds",
        "engine": "postgres",
        "engine_version": "16.4",
        "instance_class": "db.m6i.large",
        "storage": {"type": "gp3", "size_gb": 100},
    },
    "runner": {"platform": "fargate"},
    "workload": {"name": "ycsb", "files": ["workloada"]},
    "validity": {"min_effect": 0.1},
}


def through_the_asl(state: RunState) -> dict[str, Any]:
    """The state as the next Lambda receives it: JSON text."""
    data: dict[str, Any] = json.loads(json.dumps(state.model_dump(mode="json")))
    return data


@pytest.mark.parametrize("data", [REDIS_BENCH, RDS], ids=["no-load-phase", "rds"])
def test_the_spec_travels_as_written_and_reads_back_the_same(data: dict[str, Any]) -> None:
    spec = parse_spec(data)
    state = RunState(run_id="r", spec_name=spec.name, spec=spec)

    sent = through_the_asl(state)
    back = RunState.model_validate(sent)

    assert sent["spec"] == spec_dict(spec)  # what was written, defaults left out
    assert isinstance(back.spec, BenchmarkSpec) and back.spec == spec
    assert enabled_phases(back.spec) == enabled_phases(spec)
    assert spec_dict(back.spec) == spec_dict(spec)  # and again, stage after stage


def test_a_copy_in_the_process_keeps_the_model_itself() -> None:
    spec = parse_spec(RDS)
    state = RunState(run_id="r", spec_name="cloud", spec=spec)
    assert state.advance("provision_target", target={"id": "db"}).spec is spec
    assert RunState.model_validate(state.model_dump()).spec == spec


def test_a_finish_state_may_have_no_spec_and_says_so_in_json() -> None:
    state = FinishState(run_id="r", spec_name="run", status="aborted", error="execution aborted")
    sent = json.loads(json.dumps(state.model_dump(mode="json")))
    assert sent["spec"] is None and sent["status"] == "aborted"
    assert FinishState.model_validate(sent) == state
    with_spec = FinishState(run_id="r", spec_name="cloud", spec=RDS)  # type: ignore[arg-type]
    assert with_spec.spec is not None and with_spec.spec.validity.min_effect == 0.1
