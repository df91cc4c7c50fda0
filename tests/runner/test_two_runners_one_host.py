"""Two real runners of two runs measuring on one host at once: both measured phases are flagged
``concurrent_benchmark`` (invalid), naming the other run. The null driver (no server): each runner
measures until it is asked to stop (SIGINT keeps its partial phase), and each is stopped only once
both have begun measuring, so they overlap however slowly the host starts them."""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path

import pytest

from benchwright.providers.base import Credentials, RunnerHandle
from benchwright.providers.local.runner import SubprocessLauncher
from benchwright.runner.host_lock import LOCK_DIR_ENV
from benchwright.runner.plan import PhaseConfig, RunnerPlan


def measuring(handle: RunnerHandle) -> bool:
    """The runner has flushed an interval of its measured phase: it is measuring."""
    try:
        partial = json.loads(Path(handle.result_pointer).read_text()).get("partial") or {}
    except (OSError, ValueError):
        return False
    return bool(partial.get("intervals"))


def test_two_runs_measuring_on_one_host_are_both_flagged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(LOCK_DIR_ENV, str(tmp_path / "locks"))  # the two runners' own meeting place
    props = {"operationcount": "0", "recordcount": "100", "fieldcount": "1", "readproportion": "1",
             "updateproportion": "0"}  # fmt: skip
    launcher = SubprocessLauncher(tmp_path / "out")
    handles = []
    for run_id in ("first", "second"):
        launcher.work_dir = tmp_path / run_id  # each run's own directory, as each run's --out is
        phase = PhaseConfig("ycsb", "run", "null", props, threads=1, processes=1, max_seconds=120, seed=1)
        plan = RunnerPlan(run_id=run_id, cell_id="c1", repeat=0, phases=[phase])
        handles.append(launcher.launch(plan, Credentials(), None))  # type: ignore[arg-type]  # null: no target
    deadline = time.monotonic() + 90
    while not all(measuring(h) for h in handles):  # bounded: 90 s
        assert all(launcher.status(h) == "running" for h in handles)
        assert time.monotonic() < deadline, "the runners never both measured"
        time.sleep(0.05)  # polling the runners' own output files
    for handle in reversed(handles):
        launcher._proc(handle).send_signal(signal.SIGINT)  # type: ignore[union-attr]
        assert launcher.wait(handle, 60) is not None
    for handle, other in zip(handles, ("second", "first"), strict=True):
        log = Path(handle.log_pointer or "").read_text()
        [doc] = [d for d in launcher.results(handle) if d.phase == "run"] or [log]  # type: ignore[list-item]
        [flag] = [f for f in doc.validity if f.code == "concurrent_benchmark"] or [log]  # type: ignore[list-item]
        assert flag.severity == "invalid" and f"run {other} cell c1" in flag.message
