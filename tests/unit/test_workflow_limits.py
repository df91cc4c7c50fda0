"""stages/workflow_limits.py: the suite execution's largest state and history events, estimated before
anything is created, held to the suite ASL; `validate` refuses a benchmark over a limit, naming it."""

from __future__ import annotations

import itertools
import json
import time
from pathlib import Path
from typing import Any

import boto3
import pytest
import yaml
from moto import mock_aws

from benchwright.cli import main
from benchwright.errors import SpecError
from benchwright.spec import load_suite
from benchwright.stages.workflow_limits import (
    CELL_HEAD,
    CELL_TAIL,
    EVENTS_PER_EXECUTION,
    EVENTS_PER_ITERATION,
    EVENTS_PER_STATE,
    GROUP_HEAD,
    GROUP_TAIL,
    HISTORY_LIMIT_EVENTS,
    OPERATIONS_HEAD,
    OPERATIONS_POLL,
    PAYLOAD_LIMIT_BYTES,
    RUNNER_POLL,
    STATE_TYPES,
    TARGET_POLL,
    TOP_PATH,
    check_suite,
    estimate,
    events,
)

ROOT = Path(__file__).resolve().parents[2]
SUITE_ASL = json.loads((ROOT / "statemachines" / "suite.asl.json").read_text())
NIGHTLY = ROOT / "infra" / "nightly.yaml"


def _states(states: dict[str, Any], out: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    for name, state in states.items():
        out[name] = state
        for key in ("Iterator", "ItemProcessor"):
            if key in state:
                _states(state[key]["States"], out)
    return out


ASL = _states(SUITE_ASL["States"], {})


def _next(name: str) -> set[str]:
    state = ASL[name]
    found = {state[k] for k in ("Next", "Default") if k in state}
    return found | {c["Next"] for c in state.get("Choices", [])}


def test_the_paths_are_the_asls_states_with_their_types() -> None:
    for name, kind in STATE_TYPES.items():
        assert ASL[name]["Type"] == kind, name
    assert set(STATE_TYPES.values()) <= set(EVENTS_PER_STATE)


@pytest.mark.parametrize(
    "path",
    [
        TOP_PATH,
        (*GROUP_HEAD, *TARGET_POLL, *GROUP_TAIL),
        ("FirstCell?", "StartClock", "JoinTarget"),  # a later cell's clock
        (*CELL_HEAD, *RUNNER_POLL, *CELL_TAIL),
        (*RUNNER_POLL, *OPERATIONS_HEAD, *OPERATIONS_POLL[:1]),
        (*OPERATIONS_POLL, "CollectMetrics"),
    ],
)
def test_each_path_follows_the_asls_transitions(path: tuple[str, ...]) -> None:
    for a, b in itertools.pairwise(path):
        assert b in _next(a), f"{a} -> {b}"


@pytest.mark.parametrize("loop", [TARGET_POLL, RUNNER_POLL, OPERATIONS_POLL])
def test_each_poll_loop_closes_in_the_asl(loop: tuple[str, ...]) -> None:
    assert loop[0] in _next(loop[-1])


def executed_events(asl: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The event types of one execution of ``asl`` by moto's Step Functions interpreter."""
    for key in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        monkeypatch.setenv(key, "testing")
    monkeypatch.delenv("AWS_ENDPOINT_URL", raising=False)
    with mock_aws(config={"stepfunctions": {"execute_state_machine": True}}):
        sfn = boto3.client("stepfunctions", region_name="us-east-1")
        machine = sfn.create_state_machine(
            name="kinds", definition=json.dumps(asl), roleArn="arn:aws:iam::123456789012:role/sfn"
        )["stateMachineArn"]
        arn = sfn.start_execution(stateMachineArn=machine, input=json.dumps({"a": 1}))["executionArn"]
        deadline = time.monotonic() + 30
        while (status := sfn.describe_execution(executionArn=arn)["status"]) == "RUNNING":
            assert time.monotonic() < deadline, "the execution did not end"
            time.sleep(0.05)  # moto's interpreter runs in a thread; polled until it ends
        assert status == "SUCCEEDED"
        return [e["type"] for e in sfn.get_execution_history(executionArn=arn)["events"]]


def test_events_per_state_type_as_an_interpreter_records_them(monkeypatch: pytest.MonkeyPatch) -> None:
    """Pass, Choice, Wait, a Map of three iterations and Succeed: the table's counts (a Task's five are
    Entered, Scheduled, Started, Succeeded, Exited: Lambda is not run here)."""
    asl = {
        "StartAt": "P",
        "States": {
            "P": {"Type": "Pass", "Result": [1, 2, 3], "ResultPath": "$.items", "Next": "C"},
            "C": {
                "Type": "Choice",
                "Choices": [{"Variable": "$.a", "NumericEquals": 1, "Next": "W"}],
                "Default": "W",
            },
            "W": {"Type": "Wait", "Seconds": 0, "Next": "M"},
            "M": {
                "Type": "Map",
                "ItemsPath": "$.items",
                "ItemProcessor": {"StartAt": "I", "States": {"I": {"Type": "Pass", "End": True}}},
                "ResultPath": "$.r",
                "Next": "S",
            },
            "S": {"Type": "Succeed"},
        },
    }
    kinds = executed_events(asl, monkeypatch)
    per = EVENTS_PER_STATE
    iterations = 3 * (EVENTS_PER_ITERATION + per["Pass"])
    expected = (
        EVENTS_PER_EXECUTION
        + per["Pass"]
        + per["Choice"]
        + per["Wait"]
        + per["Map"]
        + iterations
        + per["Succeed"]
    )
    assert len(kinds) == expected == 26
    assert kinds.count("MapIterationStarted") == kinds.count("MapIterationSucceeded") == 3


def suite_file(tmp_path: Path, **bench: Any) -> Path:
    base = yaml.safe_load(NIGHTLY.read_text())["benchmarks"][0]
    path = tmp_path / "suite.yaml"
    path.write_text(yaml.safe_dump({"suite": "generated", "benchmarks": [{**base, **bench}]}))
    return path


def test_one_cell_counts_by_hand(tmp_path: Path) -> None:
    spec = yaml.safe_load(NIGHTLY.read_text())["benchmarks"][0]
    spec["workload"]["phases"] = {"run": {"threads": 4, "duration_s": 300}}
    spec["workload"]["properties"] = {"recordcount": 1000}
    path = tmp_path / "one.yaml"
    path.write_text(yaml.safe_dump(spec))
    found = estimate(load_suite(path).benchmarks[0])
    # cell: 900 provisioning + 300 run + 600 teardown + 3 = 1803 s -> poll ceil(1803/14) = 129 s;
    # provisioning 900/129 -> 7 polls, the run 300/129 -> 3 polls, 9 events each (Wait, Task, Choice).
    # execution 2 + top 5+4+5+2+2; group: its RunGroups iteration 2 + ProvisionTarget 5 + RunCells 4
    # + Teardown 5 + 2 + 2; cell: its RunCells iteration 2 + 2+2+5+5 + 4x5+2+5+5+2+2
    assert found.history_events == 20 + 20 + 52 + 9 * (7 + 3) == 182
    assert (found.cells, found.groups) == (1, 1)
    assert 1000 < found.payload_bytes < 10_000


def test_the_nightly_suite_fits_both_limits() -> None:
    found = check_suite(load_suite(NIGHTLY))
    assert [f.name for f in found] == ["nightly-rds-postgres-ycsb-a", "nightly-elasticache-redis-ycsb-a"]
    for f in found:
        assert 0 < f.payload_bytes < PAYLOAD_LIMIT_BYTES
        assert 0 < f.history_events < HISTORY_LIMIT_EVENTS


def test_a_matrix_whose_state_is_over_256_kib_is_refused_naming_the_benchmark(tmp_path: Path) -> None:
    base = yaml.safe_load(NIGHTLY.read_text())["benchmarks"][0]
    padded = {**base["workload"]["properties"], **{f"bw.pad{i:03d}": "x" * 64 for i in range(40)}}
    path = suite_file(
        tmp_path,
        workload={**base["workload"], "properties": padded},
        matrix={"workload.phases.run.threads": list(range(1, 65))},
    )
    found = estimate(load_suite(path).benchmarks[0])
    assert found.payload_bytes > PAYLOAD_LIMIT_BYTES
    with pytest.raises(SpecError) as err:
        check_suite(load_suite(path))
    assert err.value.field == "benchmarks[0] (nightly-rds-postgres-ycsb-a)"
    assert f"~{found.payload_bytes:,} bytes" in str(err.value)
    assert "262,144" in str(err.value)


def test_a_matrix_whose_history_is_over_25000_events_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # 64 cells of two hours each; with each cell polled at its own interval they fit (the next test),
    # so the poll interval is pinned at the 15 s floor here, as one interval for a matrix would be
    from benchwright.stages import suite as suite_stage

    monkeypatch.setattr(suite_stage, "poll_seconds_for", lambda spec, polls=14: suite_stage.MIN_POLL_S)
    path = suite_file(
        tmp_path, matrix={"workload.phases.run.duration_s": list(range(7200, 7200 + 64 * 60, 60))}
    )
    found = estimate(load_suite(path).benchmarks[0])
    assert found.payload_bytes < 200_000
    assert found.history_events > HISTORY_LIMIT_EVENTS
    with pytest.raises(SpecError) as err:
        check_suite(load_suite(path))
    assert err.value.field.startswith("benchmarks[0]")
    assert f"~{found.history_events:,} history events" in str(err.value)
    assert "25,000" in str(err.value)


def test_each_cell_polls_at_its_own_interval(tmp_path: Path) -> None:
    """A matrix whose cells run for five minutes and for two hours: each cell's poll interval comes
    from its own duration (ExpandMatrix and the estimate agree), so the long cells stay within the
    poll budget and the whole fits far under the history limit (one interval for the matrix, the
    base spec's, gave ~42,600 events here)."""
    from benchwright.spec import cell_seconds, expand_matrix
    from benchwright.stages.suite import POLL_BUDGET, expanded, poll_seconds_for

    path = suite_file(
        tmp_path, matrix={"workload.phases.run.duration_s": [300, *range(7200, 7200 + 63 * 60, 60)]}
    )
    spec = load_suite(path).benchmarks[0]
    state = expanded({"spec": spec.model_dump(mode="json", exclude_defaults=True), "run_id": "r"})
    polls = {c["cell_id"]: c["poll_seconds"] for g in state["groups"] for c in g["cells"]}
    for cell in expand_matrix(spec):
        assert polls[cell.cell_id] == poll_seconds_for(cell.spec)
        assert cell_seconds(cell.spec) / polls[cell.cell_id] <= POLL_BUDGET
    assert len(set(polls.values())) > 1  # the 300 s cell polls more often than the two-hour ones
    assert {g["target"]["poll_seconds"] for g in state["groups"]} == {poll_seconds_for(spec)}
    found = estimate(spec)
    assert found.cells == 64 and found.history_events < 12_000, found


def test_a_fitting_matrix_passes_and_local_benchmarks_are_not_estimated(tmp_path: Path) -> None:
    path = suite_file(tmp_path, matrix={"workload.phases.run.threads": [4, 8, 16, 32]})
    (found,) = check_suite(load_suite(path))
    assert found.cells == 4
    assert found.history_events < HISTORY_LIMIT_EVENTS
    assert check_suite(load_suite(ROOT / "examples" / "quickstart.yaml")) == []


def test_validate_refuses_it_with_exit_2_and_prints_the_estimate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = yaml.safe_load(NIGHTLY.read_text())["benchmarks"][0]
    padded = {**base["workload"]["properties"], **{f"bw.pad{i:03d}": "x" * 64 for i in range(40)}}
    big = suite_file(
        tmp_path,
        workload={**base["workload"], "properties": padded},
        matrix={"workload.phases.run.threads": list(range(1, 65))},
    )
    assert (
        main(
            [
                "validate",
                str(big),
                "--prices",
                str(ROOT / "tests" / "data" / "pricing"),
                "--max-run-hours",
                "400",
            ]
        )
        == 2
    )
    assert "over Step Functions' limit of 262,144 bytes" in capsys.readouterr().err
    small = tmp_path / "small"
    small.mkdir()
    fits = suite_file(small)
    assert main(["validate", str(fits), "--prices", str(ROOT / "tests" / "data" / "pricing")]) == 0
    assert "history events of 25,000" in capsys.readouterr().out


def test_the_paths_reproduce_a_rehearsed_suite_history() -> None:
    """A two-cell suite rehearsed through moto (tests/data/rehearsal_suite_history.json: each event's
    type and state): with the poll loops at the counts it made, the paths give its event count."""
    recorded = json.loads((ROOT / "tests" / "data" / "rehearsal_suite_history.json").read_text())
    entered = [name for _, name in recorded["events"] if name]
    groups, cells = entered.count("ProvisionTarget"), entered.count("JoinTarget")
    assert (recorded["status"], groups, cells) == ("SUCCEEDED", 1, 2)
    by_paths = (
        EVENTS_PER_EXECUTION
        + events(TOP_PATH)
        + groups * (EVENTS_PER_ITERATION + events(GROUP_HEAD) + events(GROUP_TAIL))
        + entered.count("WaitForTarget") * events(TARGET_POLL)
        + cells * (EVENTS_PER_ITERATION + events(CELL_HEAD) + events(CELL_TAIL))
        + entered.count("StartClock") * events(("StartClock",))
        + entered.count("WaitForRunner") * events(RUNNER_POLL)
    )
    assert by_paths == len(recorded["events"]) == 173
