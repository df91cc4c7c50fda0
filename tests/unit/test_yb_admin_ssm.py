"""yb-admin over SSM Run Command (providers/aws/targets/kinds/ec2/yb_admin.py): what moto cannot show.

moto's SendCommand accepts any instance and every invocation ends "Success" at once, so an agent that
has not registered yet (InvalidInstanceId), a command still in progress at its bounds and a failed
one are answered here by botocore's Stubber on a real SSM client (moto has no backend for them).
"""

from __future__ import annotations

from typing import Any

import pytest
from botocore.stub import Stubber

from benchwright.providers.aws.targets.kinds.ec2 import yb_admin
from benchwright.providers.aws.targets.operations import OperationFailed

LINES = yb_admin.commands(
    "2024.2.3.1", ["10.0.0.5:7100", "10.0.1.6:7100"], "change_blacklist", "ADD", "10.0.2.7:9100"
)


def _ssm() -> Any:
    import boto3

    return boto3.client("ssm", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x")


def _sent(command_id: str) -> dict[str, Any]:
    return {"Command": {"CommandId": _id(command_id)}}


def _id(short: str) -> str:
    """A command id as SSM shapes it (36 characters)."""
    return short.ljust(36, "0")


def test_the_lines_quote_every_word_and_run_the_installed_yb_admin() -> None:
    assert LINES == [
        "cd /opt/yugabyte-2024.2.3.1",
        "./bin/yb-admin -master_addresses 10.0.0.5:7100,10.0.1.6:7100 change_blacklist ADD 10.0.2.7:9100",
    ]
    hostile = yb_admin.commands("1; rm -rf /", ["$(id)"], "get_load_move_completion")
    assert hostile == [
        "cd '/opt/yugabyte-1; rm -rf /'",
        "./bin/yb-admin -master_addresses '$(id)' get_load_move_completion",
    ]


def test_an_unregistered_agent_is_asked_again_then_its_output_is_read() -> None:
    ssm = _ssm()
    with Stubber(ssm) as stub:
        stub.add_client_error("send_command", "InvalidInstanceId", "Instances not in a valid state")
        stub.add_response("send_command", _sent("c-1"))
        stub.add_client_error("get_command_invocation", "InvocationDoesNotExist", "not yet")
        stub.add_response("get_command_invocation", {"Status": "InProgress"})
        stub.add_response("get_command_invocation", {"Status": "Success", "StandardOutputContent": "done\n"})

        command = yb_admin.send(ssm, "i-1", "blacklist", LINES, "run-1")
        assert command["command_id"] == "" and command["unsent"].startswith("InvalidInstanceId")
        outputs = []
        for _ in range(4):
            command, output = yb_admin.poll(ssm, command)
            outputs.append(output)
        stub.assert_no_pending_responses()
    assert command["command_id"] == _id("c-1") and outputs == [None, None, None, "done\n"], outputs


def test_a_failed_command_fails_the_step_with_its_error() -> None:
    ssm = _ssm()
    with Stubber(ssm) as stub:
        stub.add_response("send_command", _sent("c-2"))
        stub.add_response(
            "get_command_invocation",
            {"Status": "Failed", "StandardErrorContent": "Error: Invalid argument: no such tserver"},
        )
        command = yb_admin.send(ssm, "i-1", "blacklist", LINES, "run-1")
        with pytest.raises(
            OperationFailed, match=r"^node_replace: blacklist: yb-admin on i-1 ended Failed: Error: Inv"
        ):
            yb_admin.poll(ssm, command)


def test_a_command_that_never_ends_is_bounded_by_its_polls(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(yb_admin, "MAX_POLLS", 3)
    ssm = _ssm()
    with Stubber(ssm) as stub:
        stub.add_response("send_command", _sent("c-3"))
        for _ in range(3):
            stub.add_response("get_command_invocation", {"Status": "InProgress"})
        command = yb_admin.send(ssm, "i-1", "load move", LINES, "run-1")
        for _ in range(2):
            command, output = yb_admin.poll(ssm, command)
            assert output is None
        with pytest.raises(
            OperationFailed, match=r"node_replace: load move: .* still InProgress after 3 polls"
        ):
            yb_admin.poll(ssm, command)


@pytest.mark.parametrize(
    ("output", "percent"),
    [("Percent complete = 100 : 0 remaining out of 12\n", 100.0), ("Percent complete = 66.6667", 66.6667)],
)
def test_the_load_move_percent_is_read_from_yb_admins_line(output: str, percent: float) -> None:
    assert yb_admin.load_move_percent(output) == percent


def test_an_output_without_a_percent_is_an_error_never_complete() -> None:
    with pytest.raises(OperationFailed, match="no 'Percent complete'"):
        yb_admin.load_move_percent("")
