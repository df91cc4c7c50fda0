"""statemachines/suite.asl.json, built from statemachines/benchmark.asl.json's states.

The suite runs the benchmark's own states, rearranged so that cells share what they can
(benchwright.sharing): ``RunGroups`` maps over the target groups ExpandMatrix made; each group
provisions once (ProvisionTarget, the Wait/CheckTarget loop, on ``$.target``), runs its cells one
after another (``RunCells``, MaxConcurrency 1: the datasets' loads and runs must not overlap on one
target), and tears down once (Teardown on ``$.target``), also when provisioning or a cell fails. A
cell joins the group's target handle (``JoinTarget``; a later cell's clock starts when it does, so
its price is its own time), walks ValidateSpec .. PriceRun, stops its runners (``StopRunners``: the
Teardown stage with the target handle removed, so the shared target stays) and finishes its record.

Built, not hand-kept: a change to a benchmark state (a retry, a poll loop) reaches the suite through
``python -m benchwright.stages.suite_asl``; tests/statemachines check the file is up to date.
"""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[3] / "statemachines"
GROUP_STATES = ("ProvisionTarget", "WaitForTarget", "CheckTarget", "TargetReady?")
CELL_STATES = (
    "ValidateSpec",
    "InvalidSpec",
    "LaunchRunner",
    "WaitForRunner",
    "CheckRunner",
    "RunnerDone?",
    "CheckOperations",
    "OperationsDone?",
    "WaitForOperations",
    "CollectMetrics",
    "JudgeResults",
    "StoreResults",
    "PriceRun",
    "FinishRun",
    "Outcome?",
    "RunFailed",
    "RunInvalid",
    "RunSucceeded",
)
GROUP_CONCURRENCY = 4
# A cell's end is a value, not the execution's end: a failed cell does not stop the others.
CELL_ENDS: dict[str, dict[str, Any]] = {
    "InvalidSpec": {"run_id.$": "$.run_id", "status": "failed", "error.$": "$.caught.Error"},
    "RunFailed": {"run_id.$": "$.run_id", "status": "failed"},
    "RunInvalid": {"run_id.$": "$.run_id", "status": "invalid"},  # measured, but a flag rejects a result
    "RunSucceeded": {"run_id.$": "$.run_id", "status": "succeeded"},
}


def _retarget(node: Any, old: str, new: str) -> Any:
    """Every ``Next`` (catches and choices included) that names ``old`` names ``new`` instead."""
    if isinstance(node, dict):
        return {
            k: (new if k in ("Next", "Default") and v == old else _retarget(v, old, new))
            for k, v in node.items()
        }
    if isinstance(node, list):
        return [_retarget(v, old, new) for v in node]
    return node


def _on_target(state: dict[str, Any]) -> dict[str, Any]:
    """A benchmark state made to act on the group's ``$.target`` run state."""
    state = copy.deepcopy(state)
    if state["Type"] == "Task":
        state.update(InputPath="$.target", ResultPath="$.target")
    elif state["Type"] == "Wait":
        state["SecondsPath"] = "$.target.poll_seconds"
    elif state["Type"] == "Choice":
        for choice in state["Choices"]:
            choice["Variable"] = choice["Variable"].replace("$.", "$.target.", 1)
    return state


def _cell_states(states: dict[str, Any]) -> dict[str, Any]:
    cell: dict[str, Any] = {
        "FirstCell?": {
            "Type": "Choice",
            "Comment": "the group's first cell keeps the clock ExpandMatrix set (it pays for provisioning)",
            "Choices": [{"Variable": "$.index", "NumericEquals": 0, "Next": "JoinTarget"}],
            "Default": "StartClock",
        },
        "StartClock": {
            "Type": "Pass",
            "Comment": "a later cell's time (and price) starts when it does",
            "Parameters": {
                "cell.$": "$.cell",
                "with": {
                    "target.$": "$.with.target",
                    "target_status": "ready",
                    "created_at.$": "$$.State.EnteredTime",
                },
            },
            "Next": "JoinTarget",
        },
        "JoinTarget": {
            "Type": "Pass",
            "Comment": "the cell's run state with the group's target handle: it is ready, nothing to create",
            "Parameters": {"state.$": "States.JsonMerge($.cell, $.with, false)"},
            "OutputPath": "$.state",
            "Next": "ValidateSpec",
        },
    }
    for name in CELL_STATES:
        if name in CELL_ENDS:
            cell[name] = {"Type": "Pass", "Parameters": CELL_ENDS[name], "End": True}
            continue
        cell[name] = _retarget(copy.deepcopy(states[name]), "Teardown", "ReleaseCell")
    cell["ValidateSpec"]["Next"] = "LaunchRunner"
    cell["ValidateSpec"]["Comment"] = (
        "stage validate_spec: the cell's concrete spec, on the group's ready target"
    )
    cell["PriceRun"]["Next"] = "ReleaseCell"
    cell["ReleaseCell"] = {
        "Type": "Pass",
        "Comment": "drop the target handle from the cell's state: the group tears the shared target down",
        "Result": {},
        "ResultPath": "$.target",
        "Next": "StopRunners",
    }
    stop = _retarget(copy.deepcopy(states["Teardown"]), "Teardown", "ReleaseCell")
    stop["Comment"] = (
        "stage teardown without a target: stops the cell's runners still going; FinishRun follows"
    )
    cell["StopRunners"] = stop
    return {"StartAt": "FirstCell?", "States": cell}


def _group_states(states: dict[str, Any]) -> dict[str, Any]:
    group = {name: _retarget(_on_target(states[name]), "LaunchRunner", "RunCells") for name in GROUP_STATES}
    group["RunCells"] = {
        "Type": "Map",
        "Comment": "the group's cells one after another on its target (a dataset's first cell loads, the "
        "others run on its data); a failed cell does not stop the others",
        "ItemsPath": "$.cells",
        "ItemSelector": {
            "cell.$": "$$.Map.Item.Value",
            "index.$": "$$.Map.Item.Index",
            "with": {"target.$": "$.target.target", "target_status": "ready"},
        },
        "MaxConcurrency": 1,
        "ResultPath": "$.cell_results",
        "ItemProcessor": {"ProcessorConfig": {"Mode": "INLINE"}, **_cell_states(states)},
        "Catch": [{"ErrorEquals": ["States.ALL"], "ResultPath": "$.caught", "Next": "Teardown"}],
        "Next": "Teardown",
    }
    teardown = _on_target(states["Teardown"])
    teardown["Comment"] = "stage teardown of the group's target, once, on every path"
    teardown["ResultPath"] = "$.teardown"
    teardown = _retarget(teardown, "FinishRun", "GroupDone?")
    teardown["Catch"][0]["ResultPath"] = "$.teardown_caught"
    group["Teardown"] = teardown
    group["GroupDone?"] = {
        "Type": "Choice",
        "Choices": [{"Variable": "$.cell_results", "IsPresent": True, "Next": "GroupMeasured"}],
        "Default": "GroupFailed",
    }
    group["GroupMeasured"] = {"Type": "Pass", "Parameters": {"cell_results.$": "$.cell_results"}, "End": True}
    group["GroupFailed"] = {
        "Type": "Pass",
        "Comment": "no target (or no cell could run): every cell of the group failed with the group's error",
        "Parameters": {"failed.$": "$.cells[*].run_id", "caught.$": "$.caught"},
        "End": True,
    }
    return {"StartAt": "ProvisionTarget", "States": group}


def build(benchmark: dict[str, Any], suite: dict[str, Any]) -> dict[str, Any]:
    """The suite definition: ``suite``'s ExpandMatrix, InvalidSuite and SummarizeSuite around RunGroups."""
    states = benchmark["States"]
    top = suite["States"]
    summarize = copy.deepcopy(top["SummarizeSuite"])
    summarize.pop("End", None)
    summarize["Next"] = "SuiteOutcome?"
    summarize["Parameters"] = {
        "run_id.$": "$.run_id",
        "spec_name.$": "$.spec_name",
        "group_results.$": "$.group_results",
        "spec.$": "$.suite_spec",
    }
    return {
        "Comment": "Benchwright suite: the expanded matrix of a spec in target groups; each group provisions "
        "once, runs its cells on the shared target and loads, and tears down once (built from "
        "benchmark.asl.json by benchwright.stages.suite_asl)",
        "QueryLanguage": "JSONPath",
        "StartAt": "ExpandMatrix",
        "States": {
            "ExpandMatrix": _retarget(top["ExpandMatrix"], "RunCells", "RunGroups"),
            "InvalidSuite": top["InvalidSuite"],
            "RunGroups": {
                "Type": "Map",
                "Comment": "one iteration per target group (moto cannot run startExecution.sync); a failed "
                "group does not stop the others",
                "ItemsPath": "$.groups",
                "MaxConcurrency": GROUP_CONCURRENCY,
                "ResultPath": "$.group_results",
                "ItemProcessor": {"ProcessorConfig": {"Mode": "INLINE"}, **_group_states(states)},
                "Next": "SummarizeSuite",
            },
            "SummarizeSuite": summarize,
            # As a local run: a suite with a failed cell is a failed run (the other cells' results are
            # kept), so the failed-executions alarm sees a nightly that partly failed; one with an
            # invalid cell is invalid (SuiteInvalid), never a plain success, and the alarm sees it too.
            "SuiteOutcome?": {
                "Type": "Choice",
                "Choices": [
                    *(
                        {"Variable": "$.status", "StringEquals": status, "Next": "SuiteFailed"}
                        for status in ("failed", "aborted")
                    ),
                    {"Variable": "$.status", "StringEquals": "invalid", "Next": "SuiteInvalid"},
                ],
                "Default": "SuiteSucceeded",
            },
            "SuiteFailed": {
                "Type": "Fail",
                "Error": "SuiteFailed",
                "Comment": "a cell failed (the summary names it); every group has torn down",
            },
            "SuiteInvalid": {
                "Type": "Fail",
                "Error": "SuiteInvalid",
                "Cause": "the suite finished, but a cell is invalid: its record (status invalid) says "
                "how many and why",
                "Comment": "results, report and message are stored; every group has torn down",
            },
            "SuiteSucceeded": {"Type": "Succeed"},
        },
    }


def text(root: Path = ROOT) -> str:
    benchmark = json.loads((root / "benchmark.asl.json").read_text())
    suite = json.loads((root / "suite.asl.json").read_text())
    return json.dumps(build(benchmark, suite), indent=2) + "\n"


if __name__ == "__main__":  # python -m benchwright.stages.suite_asl: rewrite statemachines/suite.asl.json
    (ROOT / "suite.asl.json").write_text(text())
    sys.exit(0)
