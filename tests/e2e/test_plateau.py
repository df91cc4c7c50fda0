"""--stop-at-plateau ends a concurrency sweep once two steps in a row add no throughput."""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.console import Console

from benchwright.experiments.plateau import PlateauWatch
from benchwright.local import run_spec
from benchwright.providers.local import local_providers, open_local_store
from benchwright.spec import parse_spec


def test_the_watch_stops_a_sweep_after_two_flat_steps_per_group() -> None:
    watch = PlateauWatch("workload.phases.run.threads", 0.05)
    a = {"workload.phases.run.threads": 1, "x": "a"}
    assert watch.observe(a, [100.0]) is None
    assert watch.observe({**a, "workload.phases.run.threads": 2}, [190.0]) is None
    assert watch.observe({**a, "workload.phases.run.threads": 4}, [195.0]) is None  # one flat step
    said = watch.observe({**a, "workload.phases.run.threads": 8}, [200.0])
    assert said is not None and "plateaued" in said
    assert watch.skips({**a, "workload.phases.run.threads": 16})
    assert not watch.skips({"workload.phases.run.threads": 16, "x": "b"})  # another sweep goes on


@pytest.mark.servers
@pytest.mark.slow
def test_a_paced_sweep_stops_at_its_plateau(tmp_path: Path) -> None:
    # a fixed target rate: more clients cannot add throughput, so the sweep is flat from the start
    spec = parse_spec(
        {
            "name": "plateau",
            "target": {"provider": "local", "engine": "redis"},
            "workload": {
                "name": "ycsb",
                "properties": {"recordcount": 100, "fieldlength": 10},
                "phases": {"load": {"threads": 1}, "run": {"duration_s": 2, "target_rate": 300}},
            },
            "matrix": {"workload.phases.run.threads": [1, 2, 4, 8, 16]},
        }
    )
    store = open_local_store(tmp_path / "store.sqlite")
    outcome = run_spec(
        spec,
        tmp_path / "out",
        lambda out, _spec: local_providers(out, store=store),
        console=Console(file=open(tmp_path / "console.txt", "w")),  # noqa: SIM115
        stop_at_plateau=True,
    )
    assert outcome.record.status == "succeeded", outcome.record.error
    assert [c.parameters["workload.phases.run.threads"] for c in outcome.record.cells] == [1, 2, 4]
    assert any("plateaued" in w for w in outcome.warnings)
