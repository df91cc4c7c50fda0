"""EventBridge for the rehearsal: Step Functions "Execution Status Change" events delivered to the
stack's own rules (moto's interpreter emits none). A run aborted from outside or timed out is torn
down only if the stack has a rule that does it; here that rule runs, with its real target."""

from __future__ import annotations

import json
import time
import uuid
from datetime import UTC, datetime
from typing import Any

from benchwright.rehearse.account import Account
from benchwright.rehearse.stack import ACCOUNT, resources_of

DETAIL_TYPE = "Step Functions Execution Status Change"


def status_event(execution: dict[str, Any]) -> dict[str, Any]:
    """The event AWS sends when an execution ends (fields as documented for aws.states)."""

    def millis(value: Any) -> int | None:
        return int(value.timestamp() * 1000) if isinstance(value, datetime) else None

    return {
        "version": "0",
        "id": str(uuid.uuid4()),
        "detail-type": DETAIL_TYPE,
        "source": "aws.states",
        "account": ACCOUNT,
        "time": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "region": execution["executionArn"].split(":")[3],
        "resources": [execution["executionArn"]],
        "detail": {
            "executionArn": execution["executionArn"],
            "stateMachineArn": execution["stateMachineArn"],
            "name": execution.get("name"),
            "status": execution["status"],
            "startDate": millis(execution.get("startDate")),
            "stopDate": millis(execution.get("stopDate")),
            "input": execution.get("input"),
            "output": execution.get("output"),
        },
    }


def matches(pattern: Any, event: Any) -> bool:
    """EventBridge's matching for the forms a stack uses: lists of values, nested objects."""
    if isinstance(pattern, dict):
        if not isinstance(event, dict):
            return False
        return all(key in event and matches(value, event[key]) for key, value in pattern.items())
    if isinstance(pattern, list):
        return any(
            matches(option, event) if isinstance(option, dict) else option == event for option in pattern
        )
    return bool(pattern == event)


def deliver(account: Account, template: dict[str, Any], event: dict[str, Any]) -> list[str]:
    """Send ``event`` to every enabled rule of the template that matches; what was delivered where."""
    delivered = []
    for logical, rule in resources_of(template, "AWS::Events::Rule").items():
        props = account.resolver.resolve(rule.get("Properties", {}))
        if props.get("State", "ENABLED") != "ENABLED" or not matches(props.get("EventPattern", {}), event):
            continue
        for target in props.get("Targets", []):
            arn = str(target.get("Arn", ""))
            payload = target.get("Input") or json.dumps(event)
            if ":lambda:" in arn:
                response = account.client("lambda").invoke(
                    FunctionName=arn.rsplit(":", 1)[-1], Payload=str(payload).encode()
                )
                ok = not response.get("FunctionError")
                delivered.append(
                    f"{logical} -> {arn.rsplit(':', 1)[-1]} ({'ok' if ok else 'function error'})"
                )
            elif ":states:" in arn:
                account.client("stepfunctions").start_execution(
                    stateMachineArn=arn, name=f"event-{int(time.time())}", input=str(payload)
                )
                delivered.append(f"{logical} -> {arn.rsplit(':', 1)[-1]}")
    return delivered
