"""An execution stopped from outside (console, API) or timed out never reaches its Catch ->
Teardown. The EventBridge rule's handler (functions/abort_teardown.py) is run here on a real
execution of statemachines/benchmark.asl.json in moto, stopped while its target exists."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from tests.aws_world import FakeContext, World, rds_spec, run_input


def status_event(execution: dict[str, Any], status: str) -> dict[str, Any]:
    """The event EventBridge delivers for a Step Functions status change (fields as AWS sends them)."""
    return {
        "version": "0",
        "source": "aws.states",
        "detail-type": "Step Functions Execution Status Change",
        "detail": {
            "executionArn": execution["executionArn"],
            "stateMachineArn": execution["stateMachineArn"],
            "name": execution["name"],
            "status": status,
            "startDate": 1,
            "stopDate": 2,
            "input": execution["input"],
            "inputDetails": {"included": True},
            "output": None,
            "error": execution.get("error"),
            "cause": execution.get("cause"),
        },
    }


def until(check: Any, what: str, timeout_s: float = 60.0) -> None:
    """Poll moto's interpreter thread for a condition (bounded), not sleep on a guess."""
    deadline = time.monotonic() + timeout_s
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


@pytest.mark.parametrize("status", ["ABORTED", "TIMED_OUT"])
def test_a_stopped_execution_is_torn_down_and_recorded_as_aborted(world: World, status: str) -> None:
    from functions.abort_teardown import handler

    run_id = f"abort-{status.lower().replace('_', '-')}"
    world.ready_after = 10**6  # the target never accepts connections: the run waits in its loop
    sfn = world.clients("stepfunctions")
    payload = dict(run_input(rds_spec(), run_id), poll_seconds=1)
    arn = sfn.start_execution(
        stateMachineArn=world.sfn_arns["benchmark"], name=run_id, input=json.dumps(payload)
    )["executionArn"]
    until(lambda: world.probe_calls > 0, "the first readiness probe")
    assert "rds-instance" in [r.kind for r in world.leftovers(run_id)]
    sfn.stop_execution(executionArn=arn, error="Cancelled", cause="stopped in the console")
    until(lambda: sfn.describe_execution(executionArn=arn)["status"] != "RUNNING", "the stop")
    execution = sfn.describe_execution(executionArn=arn)
    assert execution["status"] == "ABORTED"

    result = handler(status_event(execution, status), FakeContext())

    assert result["run_id"] == run_id and result["status"] == "aborted"
    assert world.leftovers(run_id) == []
    record = world.record(run_id)
    assert record["status"] == "aborted" and status.replace("_", " ").lower() in record["error"]
    assert "Teardown" not in world.calls  # the workflow's own Teardown never ran: the rule did it
    # a second delivery (EventBridge retries; the API's cancel also tears down) changes nothing
    again = handler(status_event(execution, status), FakeContext())
    assert again["deleted"] == [] and world.record(run_id)["status"] == "aborted"


def test_a_nightly_suite_timed_out_is_found_by_its_execution_name(world: World) -> None:
    """The schedule starts the suite with no run id: ExpandMatrix names the run after the execution,
    so the cells' resources carry ``<execution name>-NNN`` and the rule's handler finds them."""
    from functions.abort_teardown import handler

    name = "0f6c2a9e-5d1b-4c1e-9f2a-nightly"  # Scheduler picks execution names; none is a run id
    world.ready_after = 10**6
    sfn = world.clients("stepfunctions")
    spec = rds_spec("nightly-abort")
    arn = sfn.start_execution(
        stateMachineArn=world.sfn_arns["suite"],
        name=name,
        input=json.dumps({"spec": spec, "trigger": "schedule", "poll_seconds": 1}),
    )["executionArn"]
    until(lambda: world.probe_calls > 0, "the cell's first readiness probe")
    assert "rds-instance" in [r.kind for r in world.leftovers(f"{name}-000")]
    sfn.stop_execution(executionArn=arn)
    until(lambda: sfn.describe_execution(executionArn=arn)["status"] != "RUNNING", "the stop")

    result = handler(status_event(sfn.describe_execution(executionArn=arn), "TIMED_OUT"), FakeContext())

    assert result["run_id"] == name
    assert world.leftovers(f"{name}-000") == []
    assert world.record(name)["status"] == "aborted"
    assert world.record(f"{name}-000")["status"] == "aborted"


def test_other_status_changes_are_ignored(world: World) -> None:
    from functions.abort_teardown import handler

    event = status_event(
        {"executionArn": "arn:x", "stateMachineArn": "arn:y", "name": "n", "input": "{}"}, "SUCCEEDED"
    )
    assert handler(event, FakeContext()) == {"skipped": "SUCCEEDED"}
