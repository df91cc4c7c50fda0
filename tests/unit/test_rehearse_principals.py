"""The state machine signs as its own role in a rehearsal (rehearse/principals.py), and moto's IAM
evaluation holds it to that role's policy (rehearse/services/iam.py): a moto server, no containers.

A role that may invoke one Lambda only: the execution's first Task runs, the second is denied, the
execution fails, and the denial names the state machine as the principal. The same policy granting
both lets the execution succeed, so it is the role's policy that decides, not the interpreter."""

from __future__ import annotations

import io
import json
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest

from benchwright.rehearse.account import Account
from benchwright.rehearse.hooks import Hooks, configure_moto
from benchwright.rehearse.principals import assume_principal_roles
from benchwright.rehearse.principals import install as install_principals
from benchwright.rehearse.services import iam as iam_checks
from benchwright.rehearse.stack import ACCOUNT, REGION, Resolver

ROLE = "sm-role"
ROLE_ARN = f"arn:aws:iam::{ACCOUNT}:role/{ROLE}"


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Hooks, Any]]:
    from moto.server import ThreadedMotoServer

    from benchwright.providers.local.server_os import free_port

    for key in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):  # what the rehearsal itself signs with
        monkeypatch.setenv(key, "rehearsal")
    monkeypatch.delenv("AWS_SESSION_TOKEN", raising=False)
    configure_moto()
    port = free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    endpoint = f"http://127.0.0.1:{port}"
    account = Account(endpoint=endpoint, resolver=Resolver(template={}))
    hooks = Hooks(account=account, containers=None, image="", out_dir=tmp_path)  # type: ignore[arg-type]

    def client(service: str) -> Any:  # the rehearsal's own (unchecked) keys
        return boto3.client(
            service,
            region_name=REGION,
            endpoint_url=endpoint,
            aws_access_key_id="rehearsal",
            aws_secret_access_key="rehearsal",
        )

    try:
        iam_checks.install(hooks)
        install_principals(hooks)
        yield hooks, client
    finally:
        hooks.uninstall()
        server.stop()


def _functions(client: Any) -> tuple[str, str]:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("index.py", "def handler(event, context):\n    return event\n")
    arns = [
        client("lambda").create_function(
            FunctionName=name,
            Runtime="python3.12",
            Role=f"arn:aws:iam::{ACCOUNT}:role/fn",
            Handler="index.handler",
            Code={"ZipFile": buf.getvalue()},
        )["FunctionArn"]
        for name in ("first", "second")
    ]
    return arns[0], arns[1]


def _execute(client: Any, name: str, first: str, second: str) -> dict[str, Any]:
    definition = {
        "StartAt": "First",
        "States": {
            "First": {"Type": "Task", "Resource": first, "Next": "Second"},
            "Second": {"Type": "Task", "Resource": second, "End": True},
        },
    }
    sfn = client("stepfunctions")
    machine = sfn.create_state_machine(name=name, definition=json.dumps(definition), roleArn=ROLE_ARN)
    execution = sfn.start_execution(stateMachineArn=machine["stateMachineArn"], input="{}")
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:  # moto's interpreter runs in its own thread: poll, bounded
        found: dict[str, Any] = sfn.describe_execution(executionArn=execution["executionArn"])
        if found["status"] != "RUNNING":
            return found
        time.sleep(0.2)
    raise AssertionError("the execution did not end within 60 s")


def _allow(client: Any, actions: list[str], resources: list[str]) -> None:
    statement = {"Effect": "Allow", "Action": actions, "Resource": resources}
    client("iam").put_role_policy(
        RoleName=ROLE,
        PolicyName="invoke",
        PolicyDocument=json.dumps({"Version": "2012-10-17", "Statement": [statement]}),
    )


def test_the_state_machine_invokes_as_its_role_and_its_policy_decides(world: tuple[Hooks, Any]) -> None:
    """moto evaluates the action (lambda:InvokeFunction, which the Invoke call is authorized as), not
    the function ARN (moto gives Lambda calls no resource): tests/infra's test_iam_coverage holds the
    state machine roles' resources to the ASL's functions."""
    hooks, client = world
    trust = {
        "Statement": [
            {"Effect": "Allow", "Principal": {"Service": "states.amazonaws.com"}, "Action": "sts:AssumeRole"}
        ]
    }
    client("iam").create_role(RoleName=ROLE, AssumeRolePolicyDocument=json.dumps(trust))
    client("iam").create_role(RoleName="fn", AssumeRolePolicyDocument=json.dumps(trust))
    first, second = _functions(client)
    hooks.account.principals = {ROLE_ARN: "Benchmark state machine"}
    hooks.sessions.update(assume_principal_roles(hooks.account))
    who = f"Benchmark state machine ({ROLE})"

    _allow(client, ["lambda:GetFunction"], [first, second])  # everything but the invoke
    denied = _execute(client, "no-invoke", first, second)
    assert denied["status"] == "FAILED", denied
    assert [(d["principal"], d["action"]) for d in hooks.denials] == [(who, "lambda:InvokeFunction")]
    assert hooks.signed[who] == 1  # First's invoke, signed as the role and refused

    _allow(client, ["lambda:InvokeFunction"], [first, second])
    allowed = _execute(client, "invoke", first, second)
    assert allowed["status"] == "SUCCEEDED", allowed
    assert len(hooks.denials) == 1 and hooks.signed[who] == 3
