"""The API's status of an invalid run: the workflow's own Outcome? states (statemachines/*.asl.json)
end an invalid run in RunInvalid / SuiteInvalid, and the API says INVALID for it: never SUCCEEDED, and
not a plain FAILED either. moto runs the real Choice and Fail states."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import boto3
import pytest

import functions.api_routes as api
from benchwright.api.backend import CloudBackend
from tests.api_events import REGION, ROOT, call, event

ENDS = ("Outcome?", "RunFailed", "RunInvalid", "RunSucceeded")
SUITE_ENDS = ("SuiteOutcome?", "SuiteFailed", "SuiteInvalid", "SuiteSucceeded")


def ends_of(file: str, names: tuple[str, ...]) -> str:
    """The final states of a workflow file, started at its outcome Choice."""
    states = json.loads((ROOT / "statemachines" / file).read_text())["States"]
    return json.dumps({"StartAt": names[0], "States": {n: states[n] for n in names}})


@pytest.fixture
def machines(aws_credentials: None) -> Iterator[CloudBackend]:
    from moto import mock_aws

    with mock_aws(config={"stepfunctions": {"execute_state_machine": True}}):  # type: ignore[arg-type]
        sfn = boto3.client("stepfunctions", region_name=REGION)
        role = "arn:aws:iam::123456789012:role/sfn"
        bench = sfn.create_state_machine(
            name="bench", definition=ends_of("benchmark.asl.json", ENDS), roleArn=role
        )["stateMachineArn"]
        suite = sfn.create_state_machine(
            name="suite", definition=ends_of("suite.asl.json", SUITE_ENDS), roleArn=role
        )["stateMachineArn"]
        boto3.client("s3", region_name=REGION).create_bucket(Bucket="results")
        backend = CloudBackend(benchmark_arn=bench, suite_arn=suite, bucket="results", region=REGION)
        api.set_backend(backend)
        try:
            yield backend
        finally:
            api.set_backend(None)


def finish(backend: CloudBackend, kind: str, run_id: str, status: str) -> dict[str, Any]:
    """An execution that reached its outcome Choice with FinishRun's ``status``; waits for its end."""
    sfn = backend.client("stepfunctions")
    arn = sfn.start_execution(
        stateMachineArn=backend.machine(kind),
        name=run_id,
        input=json.dumps({"run_id": run_id, "status": status}),
    )["executionArn"]
    for _ in range(400):  # moto's interpreter thread: bounded polling, not a guess
        described = sfn.describe_execution(executionArn=arn)
        if described["status"] != "RUNNING":
            return dict(described)
        time.sleep(0.05)
    raise AssertionError(f"{run_id} still running")


def test_an_invalid_run_and_suite_are_invalid_in_the_api_not_succeeded(machines: CloudBackend) -> None:
    assert finish(machines, "benchmark", "run-ok", "succeeded")["status"] == "SUCCEEDED"
    ended = finish(machines, "benchmark", "run-bad", "invalid")
    assert (ended["status"], ended.get("error")) == ("FAILED", "RunInvalid")
    suite = finish(machines, "suite", "suite-bad", "invalid")
    assert (suite["status"], suite.get("error")) == ("FAILED", "SuiteInvalid")
    assert finish(machines, "benchmark", "run-broken", "failed")["error"] == "RunFailed"

    statuses = {}
    for run_id in ("run-ok", "run-bad", "suite-bad", "run-broken"):
        code, body = call(event("GET", f"/runs/{run_id}"))
        assert code == 200, body
        statuses[run_id] = body["status"]
    assert statuses == {
        "run-ok": "SUCCEEDED",
        "run-bad": "INVALID",
        "suite-bad": "INVALID",
        "run-broken": "FAILED",
    }

    code, body = call(event("GET", "/runs", query={"status": "INVALID"}))
    assert code == 200 and sorted(r["run_id"] for r in body["runs"]) == ["run-bad", "suite-bad"]
    code, body = call(event("GET", "/runs", query={"status": "FAILED"}))
    assert code == 200 and [r["run_id"] for r in body["runs"]] == ["run-broken"]
    code, body = call(event("GET", "/runs"))
    assert {r["run_id"]: r["status"] for r in body["runs"]} == statuses


def test_a_record_that_says_invalid_is_invalid_whatever_the_execution_ended_as(
    machines: CloudBackend,
) -> None:
    """An execution of an older definition (no RunInvalid state) succeeded; its record says invalid."""
    finish(machines, "benchmark", "run-old", "succeeded")
    record = {"run_id": "run-old", "spec_name": "n", "status": "invalid", "started_at": "2026-01-01T00:00:00Z",
              "error": "invalid: 1 of 1 cell (c1: run error_rate: 9 of 10 operations failed)"}  # fmt: skip
    boto3.client("s3", region_name=REGION).put_object(
        Bucket="results", Key="runs/run-old/record.json", Body=json.dumps(record)
    )
    code, body = call(event("GET", "/runs/run-old"))
    assert code == 200 and body["status"] == "INVALID" and body["error"].startswith("invalid: 1 of 1 cell")
