"""A runner killed mid-phase (SIGKILL) keeps the intervals it had flushed, stored as what they are.

The review SIGKILLed a runner during its measured phase and the phase was lost: the runner wrote its
output only after each phase. Now it rewrites the output with the phase's intervals every
``FLUSH_S``. Here a real runner process (the runner's own entry point, the null driver: nothing but
the runner limits it, no server) is killed once its output holds 3 flushed intervals; the local
launcher then reads a failed runner and a ``run`` document that is aborted and invalid
(``runner_lost``), its operations counted from those intervals, and no latency it did not keep.
"""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

from benchwright.providers.base import Credentials
from benchwright.providers.local.runner import SubprocessLauncher
from benchwright.runner.plan import PhaseConfig, RunnerPlan

FLUSHED = 3


def flushed_intervals(path: Path) -> int:
    try:
        partial = json.loads(path.read_text()).get("partial") or {}
    except (OSError, ValueError):
        return 0
    return len(partial.get("intervals", []))


def test_a_sigkilled_runner_keeps_its_flushed_intervals_as_an_invalid_phase(tmp_path: Path) -> None:
    props = {
        "operationcount": "0",
        "recordcount": "1000",
        "fieldcount": "1",
        "readproportion": "1",
        "updateproportion": "0",
    }
    phase = PhaseConfig("ycsb", "run", "null", props, threads=1, processes=1, max_seconds=120, seed=3)
    plan = RunnerPlan(run_id="killed", cell_id="c1", repeat=0, phases=[phase])
    launcher = SubprocessLauncher(tmp_path)
    handle = launcher.launch(plan, Credentials(), None)  # type: ignore[arg-type]  # the null driver needs none
    result = Path(handle.result_pointer)
    deadline = time.monotonic() + 60
    while flushed_intervals(result) < FLUSHED:  # bounded: 60 s
        assert launcher.status(handle) == "running", Path(handle.log_pointer or "").read_text()
        assert time.monotonic() < deadline, "no intervals flushed within 60 s"
        time.sleep(0.05)  # polling the runner's own output file
    os.killpg(int(handle.id), signal.SIGKILL)  # the runner and its worker: nothing is written after this
    assert launcher.wait(handle, 30) == -signal.SIGKILL
    flushed = json.loads(result.read_text())
    assert flushed["exit_code"] is None  # no completion marker

    assert launcher.status(handle) == "failed"
    [doc] = launcher.results(handle)
    assert doc.phase == "run" and doc.aborted and not doc.valid
    [flag] = [f for f in doc.validity if f.code == "runner_lost"]
    assert flag.severity == "invalid" and "without finishing it" in flag.message
    intervals = flushed["partial"]["intervals"]
    assert len(doc.intervals) == len(intervals) >= FLUSHED
    kept = sum(sum(i["operations"].values()) for i in intervals)
    assert doc.operations_total == kept > 0  # every flushed operation, and nothing more
    assert doc.operations == {}  # no latency summary invented without a histogram
    assert doc.runtime_ms == intervals[-1]["t"] * 1000
