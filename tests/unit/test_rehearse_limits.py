"""rehearse/limits.py: the largest state payload, the history's events and each Lambda's longest
invocation, measured from a history moto's Step Functions interpreter recorded (the shape the
rehearsal reads), and printed as one line of the rehearsal's summary."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import boto3
import pytest
from moto import mock_aws
from rich.console import Console

from benchwright.rehearse.limits import describe, lambda_durations, largest_payload, measure
from benchwright.rehearse.run import Outcome
from benchwright.rehearse.summary import print_outcome

PAD = "x" * 5000
ASL = {
    "StartAt": "Small",
    "States": {
        "Small": {"Type": "Pass", "Result": {"n": 1}, "ResultPath": "$.small", "Next": "Big"},
        "Big": {"Type": "Pass", "Result": {"pad": PAD}, "ResultPath": "$.big", "Next": "Drop"},
        "Drop": {"Type": "Pass", "Result": {"done": True}, "End": True},
    },
}


@pytest.fixture(name="history")
def executed_history(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """The events of one execution of ``ASL``, run by moto's interpreter (bounded wait)."""
    for key in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        monkeypatch.setenv(key, "testing")
    monkeypatch.delenv("AWS_ENDPOINT_URL", raising=False)
    with mock_aws(config={"stepfunctions": {"execute_state_machine": True}}):
        sfn = boto3.client("stepfunctions", region_name="us-east-1")
        arn = sfn.create_state_machine(
            name="limits", definition=json.dumps(ASL), roleArn="arn:aws:iam::123456789012:role/sfn"
        )["stateMachineArn"]
        execution = sfn.start_execution(stateMachineArn=arn, input=json.dumps({"a": 1}))["executionArn"]
        deadline = time.monotonic() + 30
        while sfn.describe_execution(executionArn=execution)["status"] == "RUNNING":
            assert time.monotonic() < deadline, "the execution did not end"
            time.sleep(0.05)  # moto's interpreter runs in a thread; polled until it ends
        events: list[dict[str, Any]] = sfn.get_execution_history(executionArn=execution)["events"]
    return json.loads(json.dumps(events, default=str))  # as execution.json keeps them


def test_the_largest_payload_and_its_state_from_a_real_history(history: list[dict[str, Any]]) -> None:
    size, state = largest_payload(history)
    big = json.dumps({"a": 1, "small": {"n": 1}, "big": {"pad": PAD}}, separators=(",", ":"))
    assert (size, state) == (len(big.encode()), "Big")
    limits = measure([{"execution_arn": "arn:x", "events": history}], [], {})
    assert limits["history_events_max"] == len(history) == 8  # started, 3 x entered/exited, succeeded
    assert limits["payload_bytes_max"] == size
    assert limits["within_limits"] is True


def test_a_task_events_payload_is_named_by_the_state_it_belongs_to() -> None:
    # a Lambda task's events point back (previousEventId) to their TaskStateEntered
    history = [
        {
            "id": 1,
            "previousEventId": 0,
            "type": "ExecutionStarted",
            "executionStartedEventDetails": {"input": "{}"},
        },
        {
            "id": 2,
            "previousEventId": 1,
            "type": "TaskStateEntered",
            "stateEnteredEventDetails": {"name": "ExpandMatrix", "input": "{}"},
        },
        {
            "id": 3,
            "previousEventId": 2,
            "type": "LambdaFunctionScheduled",
            "lambdaFunctionScheduledEventDetails": {"input": "{}"},
        },
        {"id": 4, "previousEventId": 3, "type": "LambdaFunctionStarted"},
        {
            "id": 5,
            "previousEventId": 4,
            "type": "LambdaFunctionSucceeded",
            "lambdaFunctionSucceededEventDetails": {"output": json.dumps({"groups": ["é" * 100]})},
        },
    ]
    size, state = largest_payload(history)
    assert state == "ExpandMatrix"
    assert size == len(json.dumps({"groups": ["é" * 100]}).encode())  # bytes, not characters
    assert largest_payload(history[:1]) == (2, "(execution)")


def test_lambda_durations_against_their_timeouts() -> None:
    rows = lambda_durations([("f", 1.0), ("f", 2.5), ("g", 0.1)], {"f": 3.0, "g": 10.0})
    assert rows == [
        {"function": "f", "invocations": 2, "max_s": 2.5, "timeout_s": 3.0, "share_of_timeout": 0.8333},
        {"function": "g", "invocations": 1, "max_s": 0.1, "timeout_s": 10.0, "share_of_timeout": 0.01},
    ]
    within = measure([], [("f", 2.5)], {"f": 3.0})
    assert within["within_limits"] is True
    assert within["lambda_worst"]["function"] == "f"
    past = measure([], [("f", 2.5), ("f", 3.0)], {"f": 3.0})  # a handler killed at its timeout
    assert past["within_limits"] is False


def test_the_rehearsal_summary_prints_the_limits_line(tmp_path: Path, history: list[dict[str, Any]]) -> None:
    limits = measure([{"execution_arn": "arn:x", "events": history}], [("bw-api", 0.4)], {"bw-api": 29.0})
    (tmp_path / "execution.json").write_text(
        json.dumps(
            {"cost_usd": {"step_functions": 0.0, "lambda": 0.0}, "lambda_invocations": 1, "limits": limits}
        )
    )
    outcome = Outcome(
        out_dir=tmp_path,
        records=[],
        executions=[],
        resources_after={},
        slack=[],
        transitions_per_cell=0.0,
        lambda_seconds=0.4,
        wall_seconds=1.0,
        limits=limits,
    )
    console = Console(record=True, width=400)
    print_outcome(outcome, console)
    text = console.export_text()
    assert describe(limits) in text
    assert f"largest state payload {limits['payload_bytes_max']:,} bytes of 262,144 (Big)" in text
    assert "history 8 events of 25,000" in text
    assert "Lambda longest 0.40 s of 29 s timeout (bw-api)" in text
