"""Fan-out: N runner processes of one plan release their measured phase at the plan's ``start_at``.

Two `benchwright runner` subprocesses (the real local launcher, the null engine: no server needed) get
the same plan with a ``start_at`` a few seconds ahead. Each must report its measured phase as started
no earlier than that instant; the phase before it is not held back. Synchronisation is the runners'
own wait: the test only waits for the processes to exit.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from benchwright.providers.base import Credentials
from benchwright.providers.local.runner import SubprocessLauncher
from benchwright.results import ResultDocument
from benchwright.runner.main import LATE_START_TOLERANCE_S
from benchwright.runner.plan import PhaseConfig, RunnerPlan

AHEAD_S = 5.0  # covers two interpreter start-ups on a busy 2-core machine


def plan(index: int, start_at: float) -> RunnerPlan:
    props = {"recordcount": "50", "operationcount": "200", "readproportion": "0.5", "updateproportion": "0.5"}
    return RunnerPlan(
        run_id="fanout-test",
        cell_id="default",
        runner_index=index,
        runner_count=2,
        phases=[
            PhaseConfig(workload="ycsb", phase="load", engine="null", properties=props, processes=1),
            PhaseConfig(
                workload="ycsb",
                phase="run",
                engine="null",
                properties=props,
                processes=1,
                measured=True,
                start_at=start_at,
            ),
        ],
    )


def test_two_runners_release_the_measured_phase_at_start_at(tmp_path: Path) -> None:
    launcher = SubprocessLauncher(tmp_path)
    start_at = time.time() + AHEAD_S
    instant = datetime.fromtimestamp(start_at, UTC)  # at the documents' resolution (microseconds)
    handles = [
        launcher.launch(plan(i, start_at), Credentials(), None)  # type: ignore[arg-type]
        for i in range(2)
    ]
    for h in handles:
        assert launcher.wait(h, timeout=120) == 0, launcher.failure(h)

    for h in handles:
        docs: list[ResultDocument] = launcher.results(h)
        assert [d.phase for d in docs] == ["load", "run"]
        load, run = docs
        assert run.operations_total == 200
        # started_at is the release instant: max(workers ready, start_at). Never before the shared instant.
        lateness = (run.started_at - instant).total_seconds()
        assert lateness >= 0
        # A runner up after the instant releases at once; it is flagged only beyond the tolerance, so a
        # slow start-up within the tolerance is neither flagged nor released at the instant.
        late = [f for f in run.validity if f.code == "late_start"]
        assert bool(late) == (run.started_at.timestamp() - start_at > LATE_START_TOLERANCE_S), late
        if load.ended_at <= instant - timedelta(seconds=LATE_START_TOLERANCE_S):
            # up well before the instant (a null-engine phase sets up in milliseconds after the load
            # phase): it released its workers exactly at the shared instant
            assert lateness == 0, lateness
        if lateness == 0:  # only the measured phase waits: the load phase ran as soon as the runner was up
            assert load.started_at < instant
        # the start the workflow times events from is the measured clock's zero, not the moment the
        # runner began setting the phase up (seconds earlier here: it waited for start_at)
        output = launcher.output(h)
        assert output is not None and output.started["run"] == run.started_at
        assert output.started["load"] == load.started_at
