"""The suite state machine: a Map over the target groups of the expanded matrix; each group provisions
once, runs its cells (the benchmark states inline) on the shared target and loads, tears down once."""

from __future__ import annotations

import json
from typing import Any

import pytest

from benchwright.errors import RunnerFailed
from tests.aws_world import World, rds_spec, yugabyte_spec

# Executions here run real runners one after another (up to eight in a test): a minute or two on a quiet
# machine, several on a loaded one. The project's 300 s per test would fail them for being slow; this
# only bounds a hang (World.execute stops an execution after 600 s).
pytestmark = pytest.mark.timeout(1200)


def matrix_spec() -> dict[str, Any]:
    spec = rds_spec("rds-matrix")
    spec["matrix"] = {"workload.phases.run.threads": [2, 4], "target.storage.type": ["gp3", "gp2"]}
    return spec


def test_suite_runs_every_cell_and_merges_them_into_one_record(world: World) -> None:
    result = world.execute("suite", {"spec": matrix_spec(), "run_id": "suite-1", "poll_seconds": 0})

    assert result["status"] == "SUCCEEDED", result["cause"]
    statuses = {c["run_id"]: c["status"] for c in result["output"]["cell_results"]}
    assert statuses == {f"suite-1-{i:03d}": "succeeded" for i in range(4)}
    for run_id in statuses:
        assert world.leftovers(run_id) == []
    body = world.clients("s3").get_object(
        Bucket=world.settings.results_bucket, Key="runs/suite-1/record.json"
    )
    record = json.loads(body["Body"].read())
    assert sorted(c["cell_id"] for c in record["cells"]) == sorted(
        f"threads={t},type={s}" for t in (2, 4) for s in ("gp3", "gp2")
    )
    assert record["status"] == "succeeded"
    assert record["report"] == f"s3://{world.settings.results_bucket}/runs/suite-1/report.html"
    assert record["verdict"]["kind"] == "no_history"
    # one message for the suite run, with every cell in it; no message per cell
    assert len(world.slack.posts) == 1 and world.slack.refused == []
    message = json.dumps(world.slack.posts[0].body)
    assert "suite-1" in message and all(
        f"threads={t},type={s}" in message for t in (2, 4) for s in ("gp3", "gp2")
    )
    # the cells' own records are closed but are not history: the next suite run compares with suite-1
    cell = json.loads(
        world.clients("s3")
        .get_object(Bucket=world.settings.results_bucket, Key="runs/suite-1-000/record.json")["Body"]
        .read()
    )
    assert cell["status"] == "succeeded" and cell["suite_run_id"] == "suite-1" and cell["report"] is None
    history = world.clients("s3").list_objects_v2(
        Bucket=world.settings.results_bucket, Prefix="history/rds-matrix/"
    )
    assert [k["Key"].rsplit("_", 1)[-1] for k in history["Contents"]] == ["suite-1"]


def test_a_second_suite_run_gets_a_verdict_against_the_first(world: World) -> None:
    spec = matrix_spec()
    spec["name"] = "rds-matrix-twice"
    for run_id in ("twice-1", "twice-2"):
        result = world.execute("suite", {"spec": spec, "run_id": run_id, "poll_seconds": 0})
        assert result["status"] == "SUCCEEDED", result["cause"]
    body = world.clients("s3").get_object(
        Bucket=world.settings.results_bucket, Key="runs/twice-2/record.json"
    )
    verdict = json.loads(body["Body"].read())["verdict"]
    # compared with twice-1 (and not with its cells): one earlier run has no between-run variance
    assert verdict["kind"] != "no_history"
    assert len(world.slack.posts) == 2
    assert f"verdict {verdict['kind'].replace('_', ' ')}" in world.slack.posts[1].body["text"]


def summarized(result: dict[str, Any]) -> dict[str, Any]:
    """SummarizeSuite's output, from the execution history (a failed execution has no output)."""
    exits = [
        e["stateExitedEventDetails"]
        for e in result["events"]
        if e.get("stateExitedEventDetails", {}).get("name") == "SummarizeSuite"
    ]
    assert len(exits) == 1, [e["type"] for e in result["events"]]
    return dict(json.loads(exits[0]["output"]))


def test_a_failing_cell_is_torn_down_and_the_other_cells_still_run(world: World) -> None:
    def fail_second(event: dict[str, Any]) -> None:
        if event["run_id"].endswith("-001"):
            raise RunnerFailed("task exited 137")

    world.faults["CheckRunner"] = fail_second

    result = world.execute("suite", {"spec": matrix_spec(), "run_id": "suite-2", "poll_seconds": 0})

    # as locally: a suite with a failed cell is a failed run, and its other cells' results are kept
    assert result["status"] == "FAILED" and result["error"] == "SuiteFailed", result
    record = cell_record(world, "suite-2")
    assert record["status"] == "failed" and record["error"].startswith("1 cell(s) failed (of 4): suite-2-001")
    assert len(record["cells"]) == 4  # every cell stays in the record, the failed one with its error
    statuses = {c["run_id"]: c["status"] for c in summarized(result)["cell_results"]}
    assert statuses["suite-2-001"] == "failed"
    assert [s for r, s in statuses.items() if r != "suite-2-001"] == ["succeeded"] * 3
    for run_id in statuses:
        assert world.leftovers(run_id) == []
    assert len(world.slack.posts) == 1  # one message for the suite, naming the failed cell
    assert "suite-2-001: failed" in json.dumps(world.slack.posts[0].body)


def test_an_invalid_suite_spec_fails_before_anything_is_created(world: World) -> None:
    spec = matrix_spec()
    spec["matrix"] = {"target.storage.type": ["gp3", "floppy"]}

    result = world.execute("suite", {"spec": spec, "run_id": "suite-3", "poll_seconds": 0})

    assert result["status"] == "FAILED"
    assert result["error"] == "SpecError"
    assert world.calls == ["ExpandMatrix"]


def cell_record(world: World, run_id: str) -> dict[str, Any]:
    key = f"runs/{run_id}/record.json"
    body = world.clients("s3").get_object(Bucket=world.settings.results_bucket, Key=key)["Body"]
    return dict(json.loads(body.read()))


def test_each_target_group_provisions_once_and_its_cells_share_the_load(world: World) -> None:
    result = world.execute("suite", {"spec": matrix_spec(), "run_id": "shared-1", "poll_seconds": 0})

    assert result["status"] == "SUCCEEDED", result["cause"]
    # storage type makes two targets; threads is a run setting: two cells on each, one load each
    assert world.calls.count("ProvisionTarget") == 2 and world.calls.count("LaunchRunner") == 4
    cells = {r: cell_record(world, r)["cells"][0] for r in (f"shared-1-{i:03d}" for i in range(4))}
    loaded = sorted(c["cell_id"] for c in cells.values() if "load" in c["phases"])
    assert loaded == ["threads=2,type=gp2", "threads=2,type=gp3"]
    for cell in cells.values():  # each group's target is new: its load found an empty database
        if "load" in cell["phases"]:
            assert cell["phases"]["load"]["operations"]["INSERT"]["statuses"] == {"OK": 1000}, cell["cell_id"]
    later = cells["shared-1-002"]  # threads=4 on gp3: ran on the data threads=2 loaded
    assert "load" not in later["phases"] and later["phases"]["run"]["operations_total"] > 0
    assert later["shared"]["loaded_by"] == "threads=2,type=gp3 #1" and later["shared"]["runs_before"] == 1
    assert later["shared"]["provisioned_by"] == "threads=2,type=gp3 #1"
    for run_id in cells:
        assert world.leftovers(run_id) == []


def test_a_group_whose_target_fails_is_torn_down_and_the_other_group_runs(world: World) -> None:
    def fail_gp2(event: dict[str, Any]) -> None:
        if event["run_id"].endswith("-001"):  # the gp2 group's target (its first cell's run id)
            raise RuntimeError("the instance failed to create")

    world.faults["CheckTarget"] = fail_gp2
    result = world.execute("suite", {"spec": matrix_spec(), "run_id": "shared-2", "poll_seconds": 0})

    assert result["status"] == "FAILED" and result["error"] == "SuiteFailed", result
    statuses = {c["run_id"]: c["status"] for c in summarized(result)["cell_results"]}
    assert statuses == {
        "shared-2-000": "succeeded",
        "shared-2-002": "succeeded",
        "shared-2-001": "failed",
        "shared-2-003": "failed",
    }
    # each group's target once, and the runners of the 2 cells that ran
    assert world.calls.count("Teardown") == 2 + 2
    for run_id in statuses:
        assert world.leftovers(run_id) == []
    assert len(world.slack.posts) == 1 and "shared-2-003: failed" in json.dumps(world.slack.posts[0].body)


def test_a_suite_with_an_invalid_cell_ends_in_suite_invalid_and_keeps_every_result(world: World) -> None:
    """One cell's run phase had 5 % failed operations: that cell ends invalid (not failed: it finished),
    the other succeeds, and the suite run is invalid (SuiteInvalid, never SUCCEEDED) with the count and
    the reason, one message and nothing left behind."""
    spec = yugabyte_spec("yb-matrix")
    spec["matrix"] = {"workload.phases.run.threads": [2, 4]}
    world.recorded_errors["threads=4"] = 0.05

    result = world.execute("suite", {"spec": spec, "run_id": "suite-inv", "poll_seconds": 0})

    assert (result["status"], result["error"]) == ("FAILED", "SuiteInvalid"), (result["cause"], world.calls)
    statuses = {c["run_id"]: c["status"] for c in summarized(result)["cell_results"]}
    assert statuses == {"suite-inv-000": "succeeded", "suite-inv-001": "invalid"}
    assert summarized(result)["failed"] == 0
    record = cell_record(world, "suite-inv")
    assert record["status"] == "invalid" and len(record["cells"]) == 2
    assert record["error"].startswith("invalid: 1 of 2 cells (threads=4: run error_rate: 100 of 2000")
    assert cell_record(world, "suite-inv-001")["status"] == "invalid"
    for run_id in statuses:
        assert world.leftovers(run_id) == []
    assert len(world.slack.posts) == 1 and world.slack.refused == []
    assert world.slack.posts[0].body["text"].startswith("yb-matrix suite-inv: invalid: 1 of 2 cells")
