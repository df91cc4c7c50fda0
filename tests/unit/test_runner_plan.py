"""runner/plan.py: one phase model from the stages' plan, through its JSON, to the engine."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from benchwright.runner.engine import run_phase
from benchwright.runner.plan import PhaseConfig, RunnerPlan
from benchwright.spec import parse_spec
from benchwright.stages.plan import build_plan

PROPS = {"recordcount": "40", "operationcount": "300", "readproportion": "0.5", "updateproportion": "0.5"}


def test_the_engine_runs_a_phase_as_it_comes_out_of_the_plans_json() -> None:
    plan = RunnerPlan(
        run_id="r1",
        cell_id="c1",
        phases=[
            PhaseConfig(workload="ycsb", phase="load", engine="null", properties=PROPS, processes=1),
            PhaseConfig(workload="ycsb", phase="warmup", engine="null", properties=PROPS, processes=1, seed=3),
            PhaseConfig(workload="ycsb", phase="run", engine="null", properties=PROPS, threads=2, processes=1,
                        seed=3, measured=True),
        ],
    )  # fmt: skip
    travelled = RunnerPlan.model_validate_json(plan.model_dump_json())
    assert travelled == plan
    load, warmup, run = (run_phase(phase) for phase in travelled.phases)
    assert (load.phase, warmup.phase, run.phase) == ("load", "warmup", "run")
    assert set(load.operations) == {"INSERT"} and load.operations_total == 40
    # a warm-up runs the run phase's operations, under its own name
    assert set(warmup.operations) == set(run.operations) == {"READ", "UPDATE"}
    assert warmup.operations_total == run.operations_total == 300
    assert run.measurement.threads == 2


def test_the_stages_plan_phases_the_engine_takes_with_the_specs_settings() -> None:
    spec = parse_spec(
        {
            "name": "p",
            "target": {"provider": "local", "engine": "redis"},
            "workload": {
                "name": "ycsb",
                "files": ["workloadc"],
                "properties": {"recordcount": 100},
                "phases": {"run": {"threads": 3, "target_rate": 500, "duration_s": 5}},
            },
            "runner": {"processes": 2},
        }
    )
    plan = build_plan(spec, "r", "c", {"redis.host": "127.0.0.1"}, seed=9)
    run = plan.phases[-1]
    assert isinstance(run, PhaseConfig)
    assert (run.phase, run.threads, run.processes, run.target, run.max_seconds, run.seed) == (
        "run", 3, 2, 500.0, 5.0, 9,
    )  # fmt: skip
    assert run.measured and run.start_at is None
    assert run.properties["redis.host"] == "127.0.0.1" and run.properties["threadcount"] == "3"


def test_a_phase_the_engine_could_not_run_is_refused_in_the_plan() -> None:
    with pytest.raises(ValidationError, match="phase"):
        PhaseConfig(workload="ycsb", phase="cleanup", engine="null")  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match="recordcount"):
        PhaseConfig("ycsb", "run", "null", {"recordcount": 40})  # type: ignore[dict-item]
    with pytest.raises(ValidationError, match="start_at"):
        PhaseConfig(workload="ycsb", phase="run", engine="null", start_at=0)
    with pytest.raises(ValidationError, match="run_id"):
        PhaseConfig(workload="ycsb", phase="run", engine="null", run_id="r")  # type: ignore[call-arg]
