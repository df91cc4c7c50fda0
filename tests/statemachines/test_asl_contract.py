"""The ASL files held to their contract: valid JSON, the stage order, teardown on every path, named
retries only, placeholders that match functions.HANDLERS (what CDK substitutes)."""

from __future__ import annotations

import importlib
import json
import re
from pathlib import Path
from typing import Any

import pytest

import benchwright.errors as errors
from benchwright.stages import ASL_STATE_NAMES
from functions import HANDLERS, JANITOR_HANDLER

ROOT = Path(__file__).resolve().parents[2] / "statemachines"
BENCHMARK = json.loads((ROOT / "benchmark.asl.json").read_text())
SUITE = json.loads((ROOT / "suite.asl.json").read_text())
LOOP_TYPES = {"Wait", "Choice"}


def task_order(definition: dict[str, Any]) -> list[str]:
    """Task states from StartAt along Next/Choice.Default... the success path, loops skipped."""
    states, name, seen, order = definition["States"], definition["StartAt"], set(), []
    while name and name not in seen:
        seen.add(name)
        state = states[name]
        if state["Type"] == "Task":
            order.append(name)
        if state["Type"] == "Choice":
            # the loop's exit is the choice that does not go back to its Wait state
            name = next(c["Next"] for c in state["Choices"] if states[c["Next"]]["Type"] != "Wait")
            continue
        name = state.get("Next")
    return order


def test_files_are_jsonpath_definitions() -> None:
    for definition in (BENCHMARK, SUITE):
        assert definition["QueryLanguage"] == "JSONPath"
        assert definition["StartAt"] in definition["States"]


def test_task_states_follow_the_stage_order() -> None:
    assert task_order(BENCHMARK) == ASL_STATE_NAMES


def test_every_state_after_validation_catches_into_teardown() -> None:
    states = BENCHMARK["States"]
    for name in ASL_STATE_NAMES[1 : ASL_STATE_NAMES.index("Teardown")]:
        catchers = [c for c in states[name]["Catch"] if "States.ALL" in c["ErrorEquals"]]
        assert catchers and catchers[0]["Next"] == "Teardown", name
    assert states["Teardown"]["Next"] == "FinishRun"
    assert states["Teardown"]["Catch"][0]["Next"] == "FinishRun"  # a failed teardown is still finished
    assert states["FinishRun"]["Next"] == "Outcome?"
    assert states["FinishRun"]["Catch"][0]["Next"] == "RunFailed"
    outcomes = {c["StringEquals"]: c["Next"] for c in states["Outcome?"]["Choices"]}
    assert outcomes == {"failed": "RunFailed", "aborted": "RunFailed", "invalid": "RunInvalid"}
    # an invalid run ends the execution as a failure of its own name: never a plain success
    assert states["RunInvalid"]["Type"] == "Fail" and states["RunInvalid"]["Error"] == "RunInvalid"
    assert states["Outcome?"]["Default"] == "RunSucceeded"


def edges(state: dict[str, Any]) -> list[str]:
    """Every state this one can go to (Next, Default, Choices, Catch)."""
    out = [state[k] for k in ("Next", "Default") if k in state]
    out += [c["Next"] for c in state.get("Choices", [])] + [c["Next"] for c in state.get("Catch", [])]
    return out


SUITE_GROUP = SUITE["States"]["RunGroups"]["ItemProcessor"]
SUITE_CELL = SUITE_GROUP["States"]["RunCells"]["ItemProcessor"]


@pytest.mark.parametrize("definition", [BENCHMARK, SUITE_CELL], ids=["benchmark", "suite-cell"])
def test_finish_run_is_on_every_path_that_created_something(definition: dict[str, Any]) -> None:
    """The only way to an end (except InvalidSpec, where nothing exists) is through FinishRun."""
    states = definition["States"]
    ends = {n for n, s in states.items() if s["Type"] in ("Succeed", "Fail") or s.get("End")}
    for name, state in states.items():
        for target in edges(state):
            if target in ends and target != "InvalidSpec":
                assert name in ("FinishRun", "Outcome?"), f"{name} -> {target} skips FinishRun"
    assert all(t == "Outcome?" or t == "RunFailed" for t in edges(states["FinishRun"]))


def walk(node: Any, key: str) -> list[Any]:
    """Every value stored under ``key`` anywhere in the definition."""
    found: list[Any] = []
    if isinstance(node, dict):
        for k, v in node.items():
            if k == key:
                found.append(v)
            found.extend(walk(v, key))
    elif isinstance(node, list):
        for v in node:
            found.extend(walk(v, key))
    return found


# Transient errors of the Lambda service itself (not of our code): AWS's advice is to retry them on
# every Lambda task. ``Lambda.AWSLambdaException`` is the older name some SDK paths still raise.
LAMBDA_SERVICE_ERRORS = {
    "Lambda.ServiceException",
    "Lambda.AWSLambdaException",
    "Lambda.SdkClientException",
    "Lambda.TooManyRequestsException",
}


def task_states(states: dict[str, Any], prefix: str = "") -> dict[str, dict[str, Any]]:
    """Every Task state, nested Map / Parallel states included, keyed by its path."""
    found: dict[str, dict[str, Any]] = {}
    for name, state in states.items():
        if state["Type"] == "Task":
            found[prefix + name] = state
        elif state["Type"] == "Map":
            inner = state.get("ItemProcessor") or state["Iterator"]
            found |= task_states(inner["States"], f"{prefix}{name}/")
        elif state["Type"] == "Parallel":
            for i, branch in enumerate(state["Branches"]):
                found |= task_states(branch["States"], f"{prefix}{name}[{i}]/")
    return found


def test_retries_name_only_retryable_errors_that_exist() -> None:
    rules = [
        rule for definition in (BENCHMARK, SUITE) for retry in walk(definition, "Retry") for rule in retry
    ]
    assert rules
    for rule in rules:
        for name in rule["ErrorEquals"]:
            ours = name.startswith("Retryable") and hasattr(errors, name)
            assert ours or name in LAMBDA_SERVICE_ERRORS, name
        assert rule["MaxAttempts"] <= 5 and rule["BackoffRate"] >= 1


@pytest.mark.parametrize("definition", ["benchmark.asl.json", "suite.asl.json"])
def test_every_task_retries_lambda_service_errors_with_backoff(definition: str) -> None:
    """Teardown included: a throttled or briefly failing Lambda service must not end a run (or skip
    its teardown). The Lambda rule comes first so no catch-all can shadow it."""
    tasks = task_states(json.loads((ROOT / definition).read_text())["States"])
    assert len(tasks) >= (11 if definition == "benchmark.asl.json" else 13)  # none skipped
    for name, state in tasks.items():
        rules = state.get("Retry") or []
        assert rules, f"{name} has no Retry"
        first = rules[0]
        assert set(first["ErrorEquals"]) == LAMBDA_SERVICE_ERRORS, name
        assert first["BackoffRate"] >= 2 and first["IntervalSeconds"] >= 1, name
        assert 3 <= first["MaxAttempts"] <= 5, name
        assert first.get("JitterStrategy") == "FULL", name


def test_catches_and_fail_states_use_real_error_names() -> None:
    for names in walk(walk(BENCHMARK, "Catch"), "ErrorEquals"):
        for item in names:
            assert item == "States.ALL" or hasattr(errors, item), item
    for names in walk(walk(BENCHMARK, "Retry"), "ErrorEquals"):
        for item in names:
            assert item in LAMBDA_SERVICE_ERRORS or hasattr(errors, item), item


def test_waits_take_their_seconds_from_the_input() -> None:
    waits = [s for s in BENCHMARK["States"].values() if s["Type"] == "Wait"]
    assert len(waits) == 3  # the target, the runner, the operations
    assert all(w["SecondsPath"] == "$.poll_seconds" for w in waits)


def test_placeholders_are_strings_and_match_the_handlers() -> None:
    found: set[str] = set()
    for path in ("benchmark.asl.json", "suite.asl.json"):
        text = (ROOT / path).read_text()
        assert not re.search(r":\s*\$\{", text), "placeholders must sit inside JSON strings"
        found |= set(re.findall(r"\$\{([A-Za-z0-9]+)\}", text))
    assert found == {f"{name}FunctionArn" for name in HANDLERS}


def test_the_suite_file_is_built_from_the_benchmark_states() -> None:
    """A change to benchmark.asl.json reaches the suite only through the builder: run
    ``python -m benchwright.stages.suite_asl`` after editing it."""
    from benchwright.stages.suite_asl import text

    assert (ROOT / "suite.asl.json").read_text() == text(ROOT)


def test_suite_cells_run_the_benchmark_states_inline() -> None:
    inline = SUITE_CELL["States"]
    for name, state in BENCHMARK["States"].items():
        if name in ("ProvisionTarget", "WaitForTarget", "CheckTarget", "TargetReady?", "Teardown"):
            assert name not in inline, f"{name} is the group's, once per target"
        elif state["Type"] in ("Fail", "Succeed"):
            assert inline[name]["Type"] == "Pass"  # a failed cell ends as a value; the others go on
        elif name == "ValidateSpec":
            assert inline[name]["Resource"] == state["Resource"] and inline[name]["Next"] == "LaunchRunner"
        else:  # the same state, its way to teardown going to the cell's release instead
            text = json.dumps(state).replace('"Teardown"', '"ReleaseCell"')
            assert inline[name] == json.loads(text), name


def test_each_target_group_provisions_once_runs_its_cells_in_turn_and_always_tears_down() -> None:
    groups = SUITE["States"]["RunGroups"]
    assert groups["ItemsPath"] == "$.groups" and groups["MaxConcurrency"] >= 1
    states = SUITE_GROUP["States"]
    assert (
        SUITE_GROUP["StartAt"] == "ProvisionTarget"
        and states["TargetReady?"]["Choices"][0]["Next"] == "RunCells"
    )
    assert states["RunCells"]["MaxConcurrency"] == 1  # one target: loads and runs must not overlap
    assert [t["Resource"] for t in task_states(states).values()].count("${ProvisionTargetFunctionArn}") == 1
    # every way out of provisioning and the cells goes through the group's Teardown
    for name in ("ProvisionTarget", "CheckTarget", "RunCells"):
        assert {c["Next"] for c in states[name]["Catch"]} == {"Teardown"}, name
    assert states["RunCells"]["Next"] == "Teardown"
    assert states["Teardown"]["InputPath"] == "$.target" and states["Teardown"]["Next"] == "GroupDone?"
    assert states["Teardown"]["Catch"][0]["Next"] == "GroupDone?"
    ends = {n for n, s in states.items() if s.get("End")}
    assert ends == {"GroupMeasured", "GroupFailed"}
    assert all(n in ("GroupDone?",) for n, s in states.items() if set(edges(s)) & ends)
    # a cell never deletes the shared target: its teardown runs without the target handle
    cell = SUITE_CELL["States"]
    assert cell["ReleaseCell"]["ResultPath"] == "$.target" and cell["ReleaseCell"]["Result"] == {}
    assert cell["ReleaseCell"]["Next"] == "StopRunners" and cell["StopRunners"]["Next"] == "FinishRun"


@pytest.mark.parametrize("target", [*HANDLERS.values(), JANITOR_HANDLER])
def test_every_handler_imports(target: str) -> None:
    module, func = target.rsplit(".", 1)
    assert callable(getattr(importlib.import_module(module), func))


def test_asl_validator_accepts_both_files() -> None:
    """npm asl-validator (installed by the deploy tooling) catches graph errors JSON checks miss."""
    import shutil
    import subprocess

    tool = Path(__file__).resolve().parents[2] / "node_modules" / ".bin" / "asl-validator"
    if not tool.exists() or shutil.which("node") is None:
        pytest.skip("asl-validator is not installed (npm ci)")
    out = subprocess.run(
        [
            str(tool),
            "--json-path",
            str(ROOT / "benchmark.asl.json"),
            "--json-path",
            str(ROOT / "suite.asl.json"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert out.returncode == 0, out.stdout + out.stderr


def test_the_local_orchestrator_walks_the_suite_group_and_cell_tasks_in_order() -> None:
    """local.py's table mirrors the suite ASL: the group's tasks around the RunCells Map, the cell's
    tasks inside it, in the same order (FinishRun ends each cell on AWS; locally the run's end)."""
    from benchwright.local import CELL_WALK, GROUP_CLOSE, GROUP_OPEN
    from benchwright.stages import STAGE_ORDER

    def pascal(stage: str) -> str:
        return "".join(word.capitalize() for word in stage.split("_"))

    group = SUITE["States"]["RunGroups"]["ItemProcessor"]["States"]
    cell = group["RunCells"]["ItemProcessor"]["States"]
    group_tasks = [name for name, state in group.items() if state["Type"] == "Task"]
    cell_tasks = [name for name, state in cell.items() if state["Type"] == "Task"]
    assert group_tasks == [pascal(s) for s in (*GROUP_OPEN, GROUP_CLOSE)]
    assert [t for t in cell_tasks if t not in ("FinishRun", "StopRunners")] == [pascal(s) for s in CELL_WALK]
    assert sorted((*GROUP_OPEN, *CELL_WALK, GROUP_CLOSE, "finish_run")) == sorted(STAGE_ORDER)
