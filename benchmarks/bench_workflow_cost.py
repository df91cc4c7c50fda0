"""State transitions and Lambda + Step Functions cost of one benchmark run, from the ASL itself.

Walks statemachines/benchmark.asl.json along the success path (every state entered is one billed
transition in a Standard workflow), adds three transitions per extra poll of either wait loop
(Wait + Check + Choice), and prices it with the cost model in benchwright.providers.aws.pricing.
It also shows the poll interval ExpandMatrix picks for each seed experiment, and what that costs.

    .venv/bin/python benchmarks/bench_workflow_cost.py
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import yaml

from benchwright.providers.aws.pricing import SFN_PER_TRANSITION, workflow_cost
from benchwright.spec import PROVISION_S, expand_matrix, parse_spec, phase_seconds
from benchwright.stages.suite import POLL_BUDGET, poll_seconds_for

ROOT = Path(__file__).resolve().parents[1]
LIMIT_TRANSITIONS = 60
LIMIT_USD = 0.01


def happy_path(definition: dict[str, Any]) -> list[str]:
    states, name, path = definition["States"], definition["StartAt"], []
    while name:
        path.append(name)
        state = states[name]
        if state["Type"] == "Choice":
            exits = [c["Next"] for c in state["Choices"] if states[c["Next"]]["Type"] != "Wait"]
            name = exits[0] if exits else state.get("Default")
            if states[name]["Type"] == "Fail":
                name = state.get("Default")
            continue
        name = None if state["Type"] in ("Succeed", "Fail") or state.get("End") else state.get("Next")
    return path


def main() -> None:
    definition = json.loads((ROOT / "statemachines" / "benchmark.asl.json").read_text())
    path = happy_path(definition)
    base = len(path)
    tasks = sum(1 for n in path if definition["States"][n]["Type"] == "Task")
    print(f"happy path: {base} states entered, {tasks} Lambda invocations")
    print("  " + " -> ".join(path))
    print(
        f"each extra poll of a wait loop: +3 transitions, +1 Lambda invocation; budget {POLL_BUDGET} polls\n"
    )
    print(f"{'extra polls':>11} {'transitions':>11} {'lambdas':>7} {'cost USD':>10}  within limits")
    for polls in (0, 2, 6, 10, 14, 20):
        transitions = base + 3 * polls
        cost = workflow_cost(transitions, tasks + polls)
        ok = transitions <= LIMIT_TRANSITIONS and cost <= LIMIT_USD
        print(f"{polls:>11} {transitions:>11} {tasks + polls:>7} {cost:>10.5f}  {'yes' if ok else 'NO'}")
    print(
        f"\n(Step Functions ${SFN_PER_TRANSITION * 1000:.3f} per 1,000 transitions; Lambda 256 MB, 1.5 s each)\n"
    )
    print(f"{'seed experiment cell':<42} {'poll s':>6} {'polls':>5} {'transitions':>11} {'cost USD':>9}")
    for spec_file in sorted((ROOT / "examples").glob("*.aws.yaml")):
        data = yaml.safe_load(spec_file.read_text())
        for raw in data.get("benchmarks", [data]):
            spec = expand_matrix(parse_spec(raw))[0].spec
            poll = poll_seconds_for(spec)
            waited = PROVISION_S[spec.target.provider] + sum(
                phase_seconds(spec, p) for p in ("load", "warmup", "run")
            )
            polls = math.ceil(waited / poll)
            transitions = base + 3 * polls
            cost = workflow_cost(transitions, tasks + polls)
            print(f"{spec.name:<42} {poll:>6} {polls:>5} {transitions:>11} {cost:>9.5f}")


if __name__ == "__main__":
    main()
