"""Issue 14, items 1, 5 and 6 through the API: ownership, nesting, request tags, bounded fan-out,
and a workload file never read (nor echoed) by the Lambda."""

from __future__ import annotations

import copy
import json
import socket

import pytest

from benchwright.api.backend import CloudBackend
from tests.api_events import call, event, quickstart, started, suite

BOB = "arn:aws:sts::123456789012:assumed-role/bob-role/bob"
ADMIN = "arn:aws:sts::123456789012:assumed-role/bench-admin/ops"


def as_caller(evt: dict, arn: str) -> dict:
    evt["requestContext"]["identity"]["userArn"] = arn
    return evt


def test_another_identity_cannot_read_or_cancel_a_run(cloud: CloudBackend) -> None:
    run_id = started(call(event("POST", "/runs", {"spec": quickstart()}))[1])
    for method, path in (
        ("GET", f"/runs/{run_id}"),
        ("GET", f"/runs/{run_id}/report"),
        ("GET", f"/runs/{run_id}/record"),
        ("POST", f"/runs/{run_id}/cancel"),
    ):
        status, body = call(as_caller(event(method, path), BOB))
        assert status == 403 and body["error"] == "forbidden", (method, path, body)
    assert cloud.describe(run_id)[1]["status"] != "ABORTED"  # the cancel did nothing
    status, body = call(as_caller(event("GET", "/runs"), BOB))
    assert status == 200 and run_id not in {r["run_id"] for r in body["runs"]}
    status, _ = call(event("GET", f"/runs/{run_id}"))  # the submitter still can
    assert status == 200


def test_an_admin_role_sees_every_run(cloud: CloudBackend, monkeypatch: pytest.MonkeyPatch) -> None:
    from benchwright.providers.aws.config import ApiSettings

    monkeypatch.setenv(ApiSettings.env_name("api_admins"), "bench-admin")
    run_id = started(call(event("POST", "/runs", {"spec": quickstart()}))[1])
    status, _ = call(as_caller(event("GET", f"/runs/{run_id}"), ADMIN))
    assert status == 200
    status, body = call(as_caller(event("GET", "/runs"), ADMIN))
    assert run_id in {r["run_id"] for r in body["runs"]}


@pytest.mark.parametrize("depth", [100, 100_000])
def test_deeply_nested_json_is_a_400_not_a_500(cloud: CloudBackend, depth: int) -> None:
    body = '{"spec": ' + "[" * depth + "]" * depth + "}"
    status, out = call(event("POST", "/runs", body))
    assert status == 400 and out["error"] == "too_deep"


def test_request_tags_are_validated_for_matrix_specs_too(cloud: CloudBackend) -> None:
    spec = quickstart()
    spec["matrix"] = {"workload.phases.run.threads": [1, 2]}
    status, body = call(event("POST", "/runs", {"spec": spec, "tags": {"bad key!": "x"}}))
    assert status == 400 and body["error"] == "invalid_spec" and body["field"] == "tags"


def test_a_suite_post_cannot_start_hundreds_of_executions(cloud: CloudBackend) -> None:
    data = suite()
    one = data["benchmarks"][0]
    data["benchmarks"] = [dict(copy.deepcopy(one), name=f"b{i}") for i in range(300)]
    status, body = call(event("POST", "/runs", {"suite": data}))
    assert status == 400 and "at most 20" in body["message"]
    sfn = cloud.client("stepfunctions")
    assert sfn.list_executions(stateMachineArn=cloud.benchmark_arn)["executions"] == []
    assert sfn.list_executions(stateMachineArn=cloud.suite_arn)["executions"] == []


def test_over_64_cells_is_refused_at_submit_not_at_expand_matrix(cloud: CloudBackend) -> None:
    spec = quickstart()
    spec["matrix"] = {"workload.phases.run.threads": list(range(1, 70))}
    status, body = call(event("POST", "/runs", {"spec": spec}))
    assert status == 400 and "more than 64" in body["message"]


@pytest.mark.parametrize("path", ["/etc/hostname", "/proc/self/environ", "/dev/zero"])
def test_a_workload_file_is_never_read_by_the_api(cloud: CloudBackend, path: str) -> None:
    spec = quickstart()
    spec["workload"]["files"] = [path]
    status, body = call(event("POST", "/runs", {"spec": spec}))
    assert status == 400 and body["field"] == "workload.files[0]"
    text = json.dumps(body)
    assert socket.gethostname() not in text and "AWS_SECRET_ACCESS_KEY" not in text


def test_a_password_in_a_spec_is_refused_by_the_api(cloud: CloudBackend) -> None:
    spec = quickstart()
    spec["workload"].setdefault("properties", {})["redis.password"] = "hunter2"
    status, body = call(event("POST", "/runs", {"spec": spec}))
    assert status == 400 and "password_env" in body["message"] and "hunter2" not in json.dumps(body)


def test_a_scheduled_run_is_readable_by_any_caller_and_cancelled_only_by_an_admin(
    cloud: CloudBackend,
) -> None:
    run_id = "run-20260101-000000-abcdef"  # started by the schedule: no submitter recorded
    cloud.start("benchmark", run_id, {"run_id": run_id})
    status, _ = call(as_caller(event("GET", f"/runs/{run_id}"), BOB))
    assert status == 200
    status, body = call(as_caller(event("POST", f"/runs/{run_id}/cancel"), BOB))
    assert status == 403 and body["error"] == "forbidden"
