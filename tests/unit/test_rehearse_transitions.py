"""rehearse/transitions.py: the transitions a rehearsal counts, and the projection without its Wait cap."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from benchwright.rehearse.transitions import POLL_LOOP_STATES, as_written, count, wait_paths

ROOT = Path(__file__).resolve().parents[2]
ASL = sorted((ROOT / "statemachines").glob("*.asl.json"))
PATHS = wait_paths(ASL)


def entered(kind: str, name: str, state_input: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "type": f"{kind}StateEntered",
        "stateEnteredEventDetails": {"name": name, "input": json.dumps(state_input or {})},
    }


def cell(run_id: str, polls: int, poll_seconds: float) -> list[dict[str, Any]]:
    """A benchmark execution's runner loop: LaunchRunner, then `polls` x (Wait, CheckRunner, Choice)."""
    state = {"run_id": run_id, "cell_id": "default", "repeat": 0, "poll_seconds": poll_seconds}
    events = [entered("Task", "LaunchRunner", state)]
    for _ in range(polls):
        events += [
            entered("Wait", "WaitForRunner", state),
            entered("Task", "CheckRunner", state),
            entered("Choice", "RunnerDone?", state),
        ]
    return [*events, {"type": "TaskStateExited"}]


def test_count_is_one_transition_per_state_entered() -> None:
    assert count(cell("r1", polls=4, poll_seconds=151)) == 1 + 4 * 3


def test_capped_polls_of_one_loop_fold_into_the_polls_aws_would_make() -> None:
    # four 5 s Waits of a 151 s poll: 20 s of waiting, one poll on AWS, three polls (9 states) fewer
    events = cell("r1", polls=4, poll_seconds=151)
    assert as_written(events, 5.0, PATHS) == count(events) - 3 * POLL_LOOP_STATES


def test_waits_shorter_than_the_cap_and_no_cap_change_nothing() -> None:
    events = cell("r1", polls=4, poll_seconds=3)
    assert as_written(events, 5.0, PATHS) == count(events)
    assert as_written(cell("r1", polls=4, poll_seconds=151), None, PATHS) == count(cell("r1", 4, 151))


def test_each_loop_keeps_its_own_poll_and_long_loops_keep_several() -> None:
    # two cells in one execution (a suite's Map): each loop keeps at least one poll
    events = cell("r1", polls=2, poll_seconds=100) + cell("r2", polls=30, poll_seconds=10)
    # r1: 2 x 5/100 -> 1 poll (1 fewer); r2: 30 x 5/10 = 15 polls (15 fewer)
    assert as_written(events, 5.0, PATHS) == count(events) - (1 + 15) * POLL_LOOP_STATES


def test_a_suite_groups_provisioning_wait_reads_its_seconds_under_target() -> None:
    group = {"target": {"run_id": "g1", "cell_id": "group-0", "repeat": 0, "poll_seconds": 60}}
    events = [entered("Wait", "WaitForTarget", group) for _ in range(6)]
    assert sorted(PATHS["WaitForTarget"]) == ["$.poll_seconds", "$.target.poll_seconds"]
    # 6 x 5/60 = 0.5 -> one poll on AWS: five fewer
    assert as_written(events, 5.0, PATHS) == count(events) - 5 * POLL_LOOP_STATES
    # the benchmark machine's own WaitForTarget (same name, seconds at the top) folds the same way
    cell_state = {
        "run_id": "r1",
        "cell_id": "default",
        "repeat": 0,
        "poll_seconds": 60,
        "target": {"host": "h"},
    }
    single = [entered("Wait", "WaitForTarget", cell_state) for _ in range(6)]
    assert as_written(single, 5.0, PATHS) == count(single) - 5 * POLL_LOOP_STATES


def _loops(states: dict[str, Any]) -> list[tuple[str, list[str]]]:
    found = []
    for name, state in states.items():
        if state["Type"] == "Wait":
            check = states[state["Next"]]
            choice = states[check["Next"]]
            found.append((name, [check["Type"], choice["Type"], choice["Default"]]))
        for key in ("Iterator", "ItemProcessor"):
            if key in state:
                found += _loops(state[key]["States"])
    return found


@pytest.mark.parametrize("asl", ASL, ids=lambda p: p.name)
def test_every_wait_of_the_workflow_is_a_poll_loop_of_three_states(asl: Path) -> None:
    loops = _loops(json.loads(asl.read_text())["States"])
    assert loops, f"{asl.name} has no Wait state"
    for name, (check, choice, back) in loops:
        assert (check, choice, back) == ("Task", "Choice", name), name
    assert POLL_LOOP_STATES == 3
