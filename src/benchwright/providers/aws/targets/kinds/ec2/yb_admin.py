"""``yb-admin`` on a YugabyteDB node through SSM Run Command, one poll at a time (node_replace).

A tserver blacklist and the load move's progress are master RPCs that only ``yb-admin`` makes (the
master's HTTP API has neither), so the workflow asks a surviving node to run it: SendCommand with the
``AWS-RunShellScript`` document on that node (its instance profile carries
AmazonSSMManagedInstanceCore, infra/compute.py), then GetCommandInvocation on later polls. A node
whose agent has not registered yet (InvalidInstanceId) is sent the command again at the next poll.

Every command is bounded twice: SSM's own ``executionTimeout`` on the node, and here at most
``MAX_POLLS`` polls or ``COMMAND_TIMEOUT_S`` seconds from SendCommand; past either, or on any final
status other than Success, the operation fails naming the step (``OperationFailed``).
"""

from __future__ import annotations

import re
import shlex
from datetime import UTC, datetime
from typing import Any

from benchwright.providers.aws.common import error_code, translate
from benchwright.providers.aws.targets.operations import OperationFailed

DOCUMENT = "AWS-RunShellScript"
EXECUTION_TIMEOUT_S = 120  # on the node: yb-admin's own RPC timeout is 60 s
COMMAND_TIMEOUT_S = 600.0  # SendCommand until a final status (delivery to a busy agent included)
MAX_POLLS = 120
PENDING = frozenset({"Pending", "InProgress", "Delayed"})
# the invocation is not visible yet right after SendCommand (SSM is eventually consistent)
NOT_YET = frozenset({"InvocationDoesNotExist"})
# SendCommand to a node whose SSM agent has not registered (yet): send again at the next poll
UNREGISTERED = frozenset({"InvalidInstanceId"})
PERCENT = re.compile(r"Percent complete\s*=\s*([0-9]+(?:\.[0-9]+)?)")


def commands(version: str, masters: list[str], *words: str) -> list[str]:
    """The shell lines: yb-admin of the node's install (templates/yugabytedb_3node.sh unpacks it in
    /opt/yugabyte-VERSION), every word quoted (addresses are data, never code)."""
    install = shlex.quote(f"/opt/yugabyte-{version}")
    line = ["./bin/yb-admin", "-master_addresses", ",".join(masters), *words]
    return [f"cd {install}", " ".join(shlex.quote(w) for w in line)]


def send(ssm: Any, instance_id: str, step: str, lines: list[str], run_id: str) -> dict[str, Any]:
    """SendCommand; the returned dict goes into the operation's progress until the command ends. A
    node whose SSM agent has not registered yet (InvalidInstanceId) is asked again at the next poll,
    within the same bounds."""
    command = {
        "step": step,
        "command_id": "",
        "instance": instance_id,
        "lines": lines,  # addresses and yb-admin words only: nothing secret
        "run_id": run_id,
        "sent_at": datetime.now(UTC).isoformat(),
        "polls": 0,
    }
    return _send(ssm, command)


def _send(ssm: Any, command: dict[str, Any]) -> dict[str, Any]:
    from botocore.exceptions import ClientError

    step, instance_id = command["step"], command["instance"]
    try:
        sent = ssm.send_command(
            InstanceIds=[instance_id],
            DocumentName=DOCUMENT,
            Comment=f"benchwright {command['run_id']}: {step}"[:100],
            TimeoutSeconds=60,
            Parameters={"commands": command["lines"], "executionTimeout": [str(EXECUTION_TIMEOUT_S)]},
        )
    except ClientError as exc:
        if error_code(exc) in UNREGISTERED:
            return {**command, "unsent": f"{error_code(exc)}: {exc}"[:300]}
        raise translate(exc, f"node_replace: {step}: ssm send_command on {instance_id}",
                        fatal=OperationFailed) from exc  # fmt: skip
    return {**command, "command_id": str(sent["Command"]["CommandId"]), "unsent": ""}


def poll(ssm: Any, command: dict[str, Any]) -> tuple[dict[str, Any], str | None]:
    """(the command's progress, its standard output once it succeeded, else None). A final status
    other than Success, or the bounds, raise ``OperationFailed`` naming the step."""
    from botocore.exceptions import ClientError

    command = {**command, "polls": int(command["polls"]) + 1}
    step = command["step"]
    waited = (datetime.now(UTC) - datetime.fromisoformat(command["sent_at"])).total_seconds()
    if not command["command_id"]:  # the agent was not registered: send again
        command = _send(ssm, command)
        found: dict[str, Any] = {"Status": "Pending", "StatusDetails": command["unsent"]}
        return _bounded(command, found, waited), None
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
    return _bounded(command, found, waited), None


def _bounded(command: dict[str, Any], found: dict[str, Any], waited: float) -> dict[str, Any]:
    """The command, unless it has been waited for too long (then the step fails, saying why)."""
    if command["polls"] >= MAX_POLLS or waited > COMMAND_TIMEOUT_S:
        why = f" ({command['unsent']})" if command.get("unsent") else ""
        raise OperationFailed(
            f"node_replace: {command['step']}: yb-admin on {command['instance']} still "
            f"{found.get('Status')} after {command['polls']} polls, {waited:.0f} s{why}"
        )
    return command


def load_move_percent(output: str) -> float:
    """``get_load_move_completion``'s "Percent complete = N" (a missing one is an error, never 100)."""
    found = PERCENT.search(output)
    if found is None:
        raise OperationFailed(
            f"node_replace: load move: no 'Percent complete' in yb-admin's output: {output.strip()[:200]!r}"
        )
    return float(found.group(1))
