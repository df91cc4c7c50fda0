"""The runner's progress reaches its orchestrator as JSON lines of one schema (``RunnerEvent``).

The real runner (a subprocess on the null engine) is run with progress on; every line it prints must
be an event, and the orchestrator turns each back into the line a person reads.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from benchwright.runner.entry import runner_argv
from benchwright.runner.progress import RunnerEvent


def test_an_event_survives_the_line_and_other_lines_are_not_events() -> None:
    event = RunnerEvent(event="progress", phase="run", elapsed_s=4.0, operations=1234, ops_per_s=308.5)
    assert RunnerEvent.parse_line(event.line()) == event
    assert json.loads(event.line())["schema"] == "benchwright.runner.progress/1"
    assert event.human() == "runner: phase run 4 s, 1,234 ops, 308 ops/s"
    for other in (
        "Traceback (most recent call last):",
        '{"a": 1}',
        "",
        '{"schema": "x", "event": "progress"}',
    ):
        assert RunnerEvent.parse_line(other) is None
    wrong = event.line().replace('"progress"', '"teleported"')
    assert RunnerEvent.parse_line(wrong) is None  # the schema is checked, not just the marker


def test_the_real_runner_prints_only_events_one_per_line(tmp_path: Path) -> None:
    props = {"recordcount": "50", "operationcount": "200", "workload": "workloada"}
    plan = {
        "run_id": "progress-1",
        "cell_id": "c0",
        "phases": [
            {"workload": "ycsb", "phase": "load", "engine": "null", "properties": props, "processes": 1},
            {"workload": "ycsb", "phase": "run", "engine": "null", "properties": props, "processes": 1,
             "measured": True},
        ],
    }  # fmt: skip
    (tmp_path / "plan.json").write_text(json.dumps(plan))
    argv = runner_argv(str(tmp_path / "plan.json"), str(tmp_path / "out.json"), python=sys.executable)
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120)

    assert done.returncode == 0, done.stderr[-2000:]
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    events = [RunnerEvent.parse_line(line) for line in lines]
    assert all(e is not None for e in events), lines
    kinds = [(e.event, e.phase) for e in events if e is not None and e.event != "progress"]
    assert kinds == [
        ("phase_started", "load"),
        ("phase_done", "load"),
        ("phase_started", "run"),
        ("phase_done", "run"),
    ]
    run_done = next(e for e in events if e is not None and e.event == "phase_done" and e.phase == "run")
    assert run_done.operations == 200 and run_done.human().startswith("runner: phase run done: 200 ops")
