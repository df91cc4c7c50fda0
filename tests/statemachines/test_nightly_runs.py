"""A nightly suite as the schedule starts it (no run id in the input, an execution name the scheduler
picks): its run id is the execution name, so the API's GET /runs/{id} finds both the execution and
the record; and the suite's cost (the run's and the nightly-for-a-month figure) is the sum of its
cells', also after SummarizeSuite runs a second time (a Lambda retry)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

import functions.api_routes as api
from benchwright.api.backend import CloudBackend
from tests.api_events import Context, event
from tests.aws_world import REGION, World, rds_spec


@pytest.fixture
def backend(world: World) -> Iterator[CloudBackend]:
    cloud = CloudBackend(
        benchmark_arn=world.sfn_arns["benchmark"],
        suite_arn=world.sfn_arns["suite"],
        bucket=world.settings.results_bucket,
        region=REGION,
    )
    api.set_backend(cloud)
    yield cloud
    api.set_backend(None)


def get(path: str) -> tuple[int, dict[str, Any]]:
    out = api.handle(event("GET", path), Context())
    return out["statusCode"], json.loads(out["body"])


def test_a_nightly_suite_is_found_by_the_api_under_its_execution_name(
    world: World, backend: CloudBackend
) -> None:
    spec = rds_spec("nightly-pg")
    spec["matrix"] = {"workload.phases.run.threads": [2, 4]}
    # what infra/workflow.py's schedule sends: the spec and the trigger, no run id
    result = world.execute("suite", {"spec": spec, "trigger": "schedule", "poll_seconds": 0})
    assert result["status"] == "SUCCEEDED", result["cause"]
    run_id = f"x{world.executions}"  # the execution's name (World.execute names them x<n>)
    assert result["output"]["run_id"] == run_id

    status, body = get(f"/runs/{run_id}")

    assert status == 200, body
    assert body["run_id"] == run_id and body["kind"] == "suite" and body["spec_name"] == "nightly-pg"
    cells = world.record(run_id)["cells"]
    assert len(cells) == 2
    monthly = [c["cost"]["monthly_nightly"] for c in cells]
    totals = [c["cost"]["total"] for c in cells]
    assert body["cost"]["monthly_nightly"] == pytest.approx(sum(monthly), rel=1e-6)
    assert body["cost"]["total"] == pytest.approx(sum(totals), rel=1e-6)
    assert body["cost"]["monthly_nightly"] > max(monthly)  # not the last cell's

    ok, again = world.invoke("SummarizeSuite", {**result["output"], "spec_name": "nightly-pg"})
    assert ok, again
    assert world.record(run_id)["cost"]["total"] == pytest.approx(sum(totals), rel=1e-6)
