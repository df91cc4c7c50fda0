"""Step Functions' limits, estimated for a spec before anything is created (``validate``).

Two hard limits of a Standard workflow bound what one suite execution may carry:

- a state's input or output is at most 256 KiB (262,144 bytes);
- an execution's history holds at most 25,000 events.

A cloud benchmark runs as one execution of the suite workflow (statemachines/suite.asl.json; the
nightly schedule and the API start one per benchmark). The estimates below are estimates, made from:

- payload: the state ExpandMatrix builds (``stages.suite.expanded``, the same function, run now)
  plus the cells' results RunGroups adds to it (one ``{run_id, status}`` per cell): the largest state
  the execution carries. Measured as ``json.dumps`` writes it (with spaces: a slight overestimate).
- history events: the states each target group and each cell pass on the happy path (the paths
  below, held to the ASL by tests/unit/test_workflow_limits.py), times the events Step Functions
  records per state type; each poll loop counted at its estimated iterations: provisioning (the
  kind's ``facts.provision_s``) or the runner's phases (``spec.phase_seconds``) over the poll interval
  ExpandMatrix sets (the target's from the spec, each cell's from its own cell), and after the run an operation at ``OPERATION_S`` each. Retries and failure
  paths are not counted.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

from benchwright.errors import SpecError
from benchwright.spec import BenchmarkSpec, SuiteSpec, TargetSpec, expand_matrix, phase_seconds
from benchwright.spec.workload import PHASE_NAMES

PAYLOAD_LIMIT_BYTES = 262_144  # 256 KiB: a state's input or output (Step Functions quotas)
HISTORY_LIMIT_EVENTS = 25_000  # events in one execution's history (Step Functions quotas)
OPERATION_S = 600.0  # an operation after the run (reboot, failover, ...): assumed ten minutes

# History events a state records when it succeeds: a Task (a Lambda ARN as Resource) records
# Entered, Scheduled, Started, Succeeded, Exited; a Map records Entered, Started, Succeeded, Exited
# plus Started and Succeeded per iteration; the others Entered and Exited.
EVENTS_PER_STATE = {"Task": 5, "Map": 4, "Pass": 2, "Choice": 2, "Wait": 2, "Succeed": 2}
EVENTS_PER_ITERATION = 2
EVENTS_PER_EXECUTION = 2  # ExecutionStarted, ExecutionSucceeded

# The suite ASL's happy path, by level: each state's type, and the loops (a tuple repeated per poll)
STATE_TYPES = {
    "ExpandMatrix": "Task",
    "RunGroups": "Map",
    "SummarizeSuite": "Task",
    "SuiteOutcome?": "Choice",
    "SuiteSucceeded": "Succeed",
    "ProvisionTarget": "Task",
    "WaitForTarget": "Wait",
    "CheckTarget": "Task",
    "TargetReady?": "Choice",
    "RunCells": "Map",
    "Teardown": "Task",
    "GroupDone?": "Choice",
    "GroupMeasured": "Pass",
    "FirstCell?": "Choice",
    "StartClock": "Pass",
    "JoinTarget": "Pass",
    "ValidateSpec": "Task",
    "LaunchRunner": "Task",
    "WaitForRunner": "Wait",
    "CheckRunner": "Task",
    "RunnerDone?": "Choice",
    "CheckOperations": "Task",
    "OperationsDone?": "Choice",
    "WaitForOperations": "Wait",
    "CollectMetrics": "Task",
    "JudgeResults": "Task",
    "StoreResults": "Task",
    "PriceRun": "Task",
    "ReleaseCell": "Pass",
    "StopRunners": "Task",
    "FinishRun": "Task",
    "Outcome?": "Choice",
    "RunSucceeded": "Pass",
}
TOP_PATH = ("ExpandMatrix", "RunGroups", "SummarizeSuite", "SuiteOutcome?", "SuiteSucceeded")
GROUP_HEAD = ("ProvisionTarget",)
TARGET_POLL = ("WaitForTarget", "CheckTarget", "TargetReady?")
GROUP_TAIL = ("RunCells", "Teardown", "GroupDone?", "GroupMeasured")
CELL_HEAD = ("FirstCell?", "JoinTarget", "ValidateSpec", "LaunchRunner")  # later cells: + StartClock
RUNNER_POLL = ("WaitForRunner", "CheckRunner", "RunnerDone?")
OPERATIONS_HEAD = ("CheckOperations", "OperationsDone?")
OPERATIONS_POLL = ("WaitForOperations", "CheckOperations", "OperationsDone?")
CELL_TAIL = (
    "CollectMetrics",
    "JudgeResults",
    "StoreResults",
    "PriceRun",
    "ReleaseCell",
    "StopRunners",
    "FinishRun",
    "Outcome?",
    "RunSucceeded",
)


@dataclass(frozen=True)
class Estimate:
    """One benchmark's suite execution, estimated (see the module docstring)."""

    name: str
    cells: int
    groups: int
    payload_bytes: int  # RunGroups' output: the expanded state and the cells' results
    history_events: int
    expanded_bytes: int = 0  # ExpandMatrix's output alone (what stages.suite.expand holds to its budget)

    def describe(self) -> str:
        return (
            f"{self.name}: largest state ~{self.payload_bytes:,} bytes of {PAYLOAD_LIMIT_BYTES:,}; "
            f"~{self.history_events:,} history events of {HISTORY_LIMIT_EVENTS:,} "
            f"({self.cells} cell(s) in {self.groups} target group(s); estimated)"
        )


def events(states: tuple[str, ...]) -> int:
    return sum(EVENTS_PER_STATE[STATE_TYPES[name]] for name in states)


def polls(seconds: float, poll_s: float) -> int:
    """Iterations of a poll loop: a Wait, then a check, until the work of ``seconds`` is done."""
    return max(1, math.ceil(seconds / max(poll_s, 1.0)))


def cell_events(spec: BenchmarkSpec, poll_s: float, first: bool) -> int:
    """One cell of a group: its Map iteration and the states it passes."""
    runner_s = sum(phase_seconds(spec, phase) for phase in PHASE_NAMES)
    n = EVENTS_PER_ITERATION + events(CELL_HEAD) + events(CELL_TAIL)
    n += 0 if first else events(("StartClock",))
    n += polls(runner_s, poll_s) * events(RUNNER_POLL)
    if spec.operations:
        n += events(OPERATIONS_HEAD) + polls(OPERATION_S * len(spec.operations), poll_s) * events(
            OPERATIONS_POLL
        )
    return n


def group_events(target: TargetSpec, poll_s: float) -> int:
    """One target group, without its cells (each counts its own RunCells iteration): its RunGroups
    iteration, provisioning polls, RunCells and teardown."""
    n = EVENTS_PER_ITERATION + events(GROUP_HEAD) + events(GROUP_TAIL)
    return n + polls(target.facts.provision_s, poll_s) * events(TARGET_POLL)


def estimate(spec: BenchmarkSpec) -> Estimate:
    """``spec`` as one suite execution: its largest state and its history events."""
    from benchwright.runs import new_run_id
    from benchwright.sharing import plan, without_load
    from benchwright.stages.suite import expanded, poll_seconds_for

    run_id = new_run_id()
    # the spec as its largest sender writes it: every field (the API takes what a client sends, and
    # `benchwright submit` and the rehearsal send the full model; the nightly schedule omits defaults)
    state = expanded({"spec": spec.model_dump(mode="json"), "run_id": run_id})
    results = [
        {"cell_results": [{"run_id": c["run_id"], "status": "succeeded"} for c in g["cells"]]}
        for g in state["groups"]
    ]
    payload = len(json.dumps({**state, "group_results": results}).encode())
    poll_s = poll_seconds_for(spec)
    groups = plan([(c, r) for c in expand_matrix(spec) for r in range(spec.repeats)])
    total = EVENTS_PER_EXECUTION + events(TOP_PATH)
    cells = 0
    for group in groups:
        total += group_events(group.items[0].cell.spec.target, poll_s)
        first = True
        for dataset in group.datasets:
            for n, item in enumerate(dataset.items):
                cell_spec = item.cell.spec
                if dataset.loads and n > 0:
                    cell_spec = without_load(cell_spec)
                total += cell_events(cell_spec, poll_seconds_for(item.cell.spec), first)  # its own poll
                first = False
                cells += 1
    return Estimate(spec.name, cells, len(groups), payload, total, len(json.dumps(state).encode()))


def check_suite(suite: SuiteSpec) -> list[Estimate]:
    """Each cloud benchmark's estimate; a SpecError naming ``benchmarks[i]`` for one over a limit
    (a local benchmark runs no workflow: it is skipped)."""
    from benchwright.stages.suite import MAX_STATE_BYTES

    out: list[Estimate] = []
    for i, bench in enumerate(suite.benchmarks):
        if bench.is_local:
            continue
        found = estimate(bench)
        where = f"benchmarks[{i}] ({bench.name})"
        if found.payload_bytes > PAYLOAD_LIMIT_BYTES:
            raise SpecError(
                where,
                f"its suite execution would carry a state of ~{found.payload_bytes:,} bytes (estimated), "
                f"over Step Functions' limit of {PAYLOAD_LIMIT_BYTES:,} bytes (256 KiB); split the matrix",
            )
        if found.expanded_bytes > MAX_STATE_BYTES:
            raise SpecError(
                where,
                f"its expanded cells take {found.expanded_bytes:,} bytes, over the "
                f"{MAX_STATE_BYTES:,}-byte budget ExpandMatrix allows (256 KiB less room for results); "
                "split the matrix",
            )
        if found.history_events > HISTORY_LIMIT_EVENTS:
            raise SpecError(
                where,
                f"its suite execution would record ~{found.history_events:,} history events (estimated), "
                f"over Step Functions' limit of {HISTORY_LIMIT_EVENTS:,}; split the matrix",
            )
        out.append(found)
    return out


def as_dict(found: Estimate) -> dict[str, Any]:
    return {
        "name": found.name,
        "cells": found.cells,
        "groups": found.groups,
        "payload_bytes": found.payload_bytes,
        "payload_limit_bytes": PAYLOAD_LIMIT_BYTES,
        "history_events": found.history_events,
        "history_limit_events": HISTORY_LIMIT_EVENTS,
        "estimated": True,
    }
