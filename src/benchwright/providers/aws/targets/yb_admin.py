"""``yb-admin`` on a YugabyteDB node through SSM Run Command, one poll at a time (node_replace).

A tserver blacklist and the load move's progress are master RPCs that only ``yb-admin`` makes (the
master's HTTP API has neither), so the workflow asks a surviving node to run it: SendCommand with the
``AWS-RunShellScript`` document on that node (its instance profile carries
AmazonSSMManagedInstanceCore, infra/compute.py), then GetCommandInvocation on later polls.

Every command is bounded twice: SSM's own ``executionTimeout`` on the node, and here at most
``MAX_POLLS`` polls or ``COMMAND_TIMEOUT_S`` seconds from SendCommand; past either, or on any final
status other than Success, the operation fails naming the step (``OperationFailed``).
"""

from __future__ import annotations

import re
import shlex
from datetime import UTC, datetime
from typing import Any

from benchwright.providers.aws.common import aws_call, error_code
from benchwright.providers.aws.targets.operations import OperationFailed

DOCUMENT = "AWS-RunShellScript"
EXECUTION_TIMEOUT_S = 120  # on the node: yb-admin's own RPC timeout is 60 s
COMMAND_TIMEOUT_S = 600.0  # SendCommand until a final status (delivery to a busy agent included)
MAX_POLLS = 120
PENDING = frozenset({"Pending", "InProgress", "Delayed"})
# the invocation is not visible yet right after SendCommand (SSM is eventually consistent)
NOT_YET = frozenset({"InvocationDoesNotExist"})
PERCENT = re.compile(r"Percent complete\s*=\s*([0-9]+(?:\.[0-9]+)?)")


def commands(version: str, masters: list[str], *words: str) -> list[str]:
    """The shell lines: yb-admin of the node's install (templates/yugabytedb_3node.sh unpacks it in
    /opt/yugabyte-VERSION), every word quoted (addresses are data, never code)."""
    install = shlex.quote(f"/opt/yugabyte-{version}")
    line = ["./bin/yb-admin", "-master_addresses", ",".join(masters), *words]
    return [f"cd {install}", " ".join(shlex.quote(w) for w in line)]


def send(ssm: Any, instance_id: str, step: str, lines: list[str], run_id: str) -> dict[str, Any]:
    """SendCommand; the returned dict goes into the operation's progress until the command ends."""
    sent = aws_call(
        f"node_replace: {step}: ssm send_command on {instance_id}",
        ssm.send_command,
        InstanceIds=[instance_id],
        DocumentName=DOCUMENT,
        Comment=f"benchwright {run_id}: {step}"[:100],
        TimeoutSeconds=60,
        Parameters={"commands": lines, "executionTimeout": [str(EXECUTION_TIMEOUT_S)]},
    )
    return {
        "step": step,
        "command_id": str(sent["Command"]["CommandId"]),
        "instance": instance_id,
        "sent_at": datetime.now(UTC).isoformat(),
        "polls": 0,
    }


def poll(ssm: Any, command: dict[str, Any]) -> tuple[dict[str, Any], str | None]:
    """(the command's progress, its standard output once it succeeded, else None). A final status
    other than Success, or the bounds, raise ``OperationFailed`` naming the step."""
    from botocore.exceptions import ClientError

    command = {**command, "polls": int(command["polls"]) + 1}
    step = command["step"]
    waited = (datetime.now(UTC) - datetime.fromisoformat(command["sent_at"])).total_seconds()
    try:
        found = ssm.get_command_invocation(CommandId=command["command_id"], InstanceId=command["instance"])
    except ClientError as exc:
        if error_code(exc) not in NOT_YET:
            raise OperationFailed(f"node_replace: {step}: ssm get_command_invocation: {exc}") from exc
        found = {"Status": "Pending"}
    status = str(found.get("Status", ""))
    if status == "Success":
        return command, str(found.get("StandardOutputContent", ""))
    if status not in PENDING:
        said = str(found.get("StandardErrorContent") or found.get("StatusDetails") or "").strip()
        raise OperationFailed(
            f"node_replace: {step}: yb-admin on {command['instance']} ended {status}: {said[:300]}"
        )
    if command["polls"] >= MAX_POLLS or waited > COMMAND_TIMEOUT_S:
        raise OperationFailed(
            f"node_replace: {step}: yb-admin on {command['instance']} still {status} after "
            f"{command['polls']} polls, {waited:.0f} s"
        )
    return command, None


def load_move_percent(output: str) -> float:
    """``get_load_move_completion``'s "Percent complete = N" (a missing one is an error, never 100)."""
    found = PERCENT.search(output)
    if found is None:
        raise OperationFailed(
            f"node_replace: load move: no 'Percent complete' in yb-admin's output: {output.strip()[:200]!r}"
        )
    return float(found.group(1))
