"""State transitions of a rehearsed execution: as counted, and as the same run would bill on AWS.

A rehearsal caps each Wait at ``wait_cap_s`` (stand-ins are ready in seconds; the poll interval is
sized for AWS), so a long phase is polled more often than AWS would poll it, and every extra poll is
a Wait, a check Task and a Choice. ``as_written`` takes those extra polls out again: each capped Wait
counts as ``capped / written`` of a poll, and a poll loop (one Wait state of one cell) keeps at least
one poll. It is a projection from the measured history, said as such wherever it is shown.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

# Wait -> check Task -> Choice -> Wait: the states one more poll enters (a test holds the ASL to it)
POLL_LOOP_STATES = 3


def count(events: Iterable[Mapping[str, Any]]) -> int:
    """State transitions as Step Functions bills them: one per state entered."""
    return sum(1 for e in events if str(e.get("type", "")).endswith("StateEntered"))


def cell_iteration(event: Mapping[str, Any]) -> bool:
    """A suite's cell (RunCells), not its target group (RunGroups: several cells each)."""
    details = event.get("mapIterationStartedEventDetails") or {}
    return event.get("type") == "MapIterationStarted" and details.get("name") != "RunGroups"


def wait_paths(asl_files: Iterable[Path]) -> dict[str, list[str]]:
    """Each Wait state's name -> its SecondsPaths, from the state machine definitions (nested too; the
    suite's group Wait shares a name with the benchmark's, so a name may have several)."""
    paths: dict[str, list[str]] = defaultdict(list)

    def walk(states: Mapping[str, Any]) -> None:
        for name, state in states.items():
            if state.get("Type") == "Wait" and "SecondsPath" in state:
                paths[name].append(str(state["SecondsPath"]))
            for branch in state.get("Branches", []):
                walk(branch["States"])
            for key in ("Iterator", "ItemProcessor"):
                if key in state:
                    walk(state[key]["States"])

    for path in asl_files:
        walk(json.loads(path.read_text())["States"])
    return dict(paths)


def _resolve(document: Any, path: str) -> Any:
    """A plain ``$.a.b`` path, the only form the workflow's Wait states use."""
    value = document
    for part in path.removeprefix("$.").split("."):
        if not isinstance(value, Mapping):
            return None
        value = value.get(part)
    return value


def _loop_of(name: str, path: str, state_input: Mapping[str, Any]) -> tuple[str, ...]:
    """Which poll loop a Wait belongs to: the state, and the run state it polls for (the object that
    holds the wait's seconds: the cell's state, or a suite group's provisioning state)."""
    holder = _resolve(state_input, path.rsplit(".", 1)[0]) if path.count(".") > 1 else state_input
    if not isinstance(holder, Mapping):
        holder = state_input
    return (name, *(str(holder.get(k)) for k in ("run_id", "cell_id", "repeat")))


def _seconds(name: str, state_input: Mapping[str, Any], paths: Mapping[str, list[str]]) -> tuple[str, Any]:
    """The wait's written seconds and the path they were found at (the first that resolves)."""
    for path in paths.get(name, []):
        value = _resolve(state_input, path)
        if isinstance(value, int | float) and not isinstance(value, bool):
            return path, value
    return "$", None


def as_written(
    events: Iterable[Mapping[str, Any]], wait_cap_s: float | None, paths: Mapping[str, list[str]]
) -> int:
    """The transitions of ``events`` had every Wait lasted as written (see the module docstring)."""
    events = list(events)
    measured = count(events)
    if not wait_cap_s:
        return measured
    polls: dict[tuple[str, ...], list[float]] = defaultdict(list)
    for event in events:
        if event.get("type") != "WaitStateEntered":
            continue
        details = event.get("stateEnteredEventDetails") or {}
        name = str(details.get("name", ""))
        try:
            state_input = json.loads(details.get("input") or "{}")
        except json.JSONDecodeError:
            continue
        path, written = _seconds(name, state_input, paths)
        loop = polls[_loop_of(name, path, state_input)]
        if written is not None and written > 0:
            loop.append(min(float(written), wait_cap_s) / float(written))
        else:
            loop.append(1.0)  # a Wait of unknown length counts as a whole poll
    extra = 0
    for fractions in polls.values():
        on_aws = max(1, math.ceil(sum(fractions) - 1e-9))
        extra += len(fractions) - on_aws
    return measured - POLL_LOOP_STATES * extra
