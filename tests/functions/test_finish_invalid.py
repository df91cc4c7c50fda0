"""FinishRun and SummarizeSuite, the real handlers against moto's S3: a run (or a suite) whose cells
include an invalid one ends ``invalid`` with the count and the reasons in its S3 record, its report and
its one Slack message; the invalid cell of a suite counts as finished, not failed."""

from __future__ import annotations

import json
from typing import Any

from benchwright.report.sample import make_run, noisy_series
from benchwright.results import ValidityFlag
from benchwright.runs import RunRecord
from tests.aws_world import World, rds_spec

RUN_ERRORS = "300 of 2000 operations failed (15.00%, policy allows 1.00%)"


def s3_store(world: World) -> Any:
    from benchwright.providers.aws.s3 import S3Artifacts
    from benchwright.providers.aws.store import S3ResultStore

    return S3ResultStore(S3Artifacts(world.clients, world.settings.results_bucket))


def record(run_id: str, spec: dict[str, Any], bad: set[str], suite: str | None = None) -> RunRecord:
    run = make_run(spec["name"], run_id, [(c, {"c": c}, noisy_series(1000, 30)) for c in ("a", "b")],
                   status="running", with_metrics=False)  # fmt: skip
    for cell in run.cells:
        if cell.cell_id in bad:
            cell.phases["run"].validity.append(
                ValidityFlag(code="error_rate", severity="invalid", message=RUN_ERRORS)
            )
    run.spec, run.suite_run_id = spec, suite
    return run


def state(run_id: str, spec: dict[str, Any], **more: Any) -> dict[str, Any]:
    return {"run_id": run_id, "spec_name": spec["name"], "spec": spec, "status": "running", **more}


def test_finish_run_ends_a_run_with_an_invalid_cell_invalid(world: World) -> None:
    spec = rds_spec("fin-inv")
    s3_store(world).save_run(record("fin-inv-1", spec, {"b"}))

    ok, out = world.invoke("FinishRun", state("fin-inv-1", spec))

    assert ok, out
    assert out["status"] == "invalid"  # what the ASL's Outcome? reads: RunInvalid
    stored = world.record("fin-inv-1")
    assert (
        stored["status"] == "invalid"
        and stored["error"] == f"invalid: 1 of 2 cells (b: run error_rate: {RUN_ERRORS})"
    )
    page = world.clients("s3").get_object(
        Bucket=world.settings.results_bucket, Key="runs/fin-inv-1/report.html"
    )
    assert b"badge invalid" in page["Body"].read()
    [post] = world.slack.posts
    assert post.body["text"].startswith("fin-inv fin-inv-1: invalid: 1 of 2 cells")
    assert "run error_rate" in json.dumps(post.body) and world.slack.refused == []


def test_summarize_suite_counts_an_invalid_cell_as_finished_and_ends_the_suite_invalid(world: World) -> None:
    spec = rds_spec("sum-inv")
    store = s3_store(world)
    store.save_run(record("sum-inv-000", spec, set(), suite="sum-inv"))
    cell = record("sum-inv-001", spec, {"a"}, suite="sum-inv")
    cell.cells = [c.model_copy(update={"cell_id": f"{c.cell_id}2"}) for c in cell.cells]
    store.save_run(cell)
    event = {
        "run_id": "sum-inv",
        "spec_name": "sum-inv",
        "spec": spec,
        "group_results": [{"cell_results": [{"run_id": "sum-inv-000", "status": "succeeded"},
                                            {"run_id": "sum-inv-001", "status": "invalid"}]}],
    }  # fmt: skip

    ok, out = world.invoke("SummarizeSuite", event)

    assert ok, out
    assert (out["status"], out["failed"], out["error"]) == ("invalid", 0, None)
    stored = world.record("sum-inv")
    assert stored["status"] == "invalid" and len(stored["cells"]) == 4
    assert stored["error"].startswith("invalid: 1 of 4 cells (a2: run error_rate")
    [post] = world.slack.posts
    assert post.body["text"].startswith("sum-inv sum-inv: invalid: 1 of 4 cells")
