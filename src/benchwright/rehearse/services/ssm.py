"""SSM Run Command inside the moto server: a command runs against the stand-in of the node it names.

moto 5.2.5 records SendCommand and answers every invocation ``Success`` with empty output: it runs
nothing. node_replace (providers/aws/targets/kinds/ec2/yb_admin.py) sends ``yb-admin`` lines to a YugabyteDB
node and reads the output, so this hook hands each command's lines to an executor and writes its
status and output into moto's invocations. The rehearsal's executor is ``rehearse.yb_admin.YbAdmin``
on the state of the cluster the instance belongs to (its stand-in's ``yb_admin``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from benchwright.rehearse.yb_admin import Cluster, Executor, YbAdmin

if TYPE_CHECKING:
    from benchwright.rehearse.hooks import Hooks

__all__ = ["install", "patch_send_command"]


def patch_send_command(patch: Callable[[Any, str, Any], None], executor: Executor) -> None:
    """SendCommand runs its ``commands`` through ``executor`` for each instance it was sent to."""
    from moto.ssm.models import SimpleSystemManagerBackend

    send = SimpleSystemManagerBackend.__dict__["send_command"]

    def patched(backend: Any, *args: Any, **kwargs: Any) -> Any:
        asked = set(kwargs.get("instance_ids") or [])  # before moto extends that very list
        command = send(backend, *args, **kwargs)
        lines = [str(line) for line in (command.parameters or {}).get("commands", [])]
        for invocation in command.invocations:
            if asked and invocation["InstanceId"] not in asked:
                continue  # moto adds every instance when no Targets are given
            status, out, err = executor(str(invocation["InstanceId"]), lines)
            invocation.update(
                Status=status,
                StatusDetails=status,
                StandardOutputContent=out,
                StandardErrorContent=err,
                ResponseCode=0 if status == "Success" else 1,
            )
        return command

    patch(SimpleSystemManagerBackend, "send_command", patched)


def install(hooks: Hooks) -> None:
    """yb-admin on the stand-in of the node's cluster (services/ec2.py: ``hooks.target_nodes``)."""

    def cluster_of(instance_id: str) -> Cluster | None:
        key = hooks.target_nodes.get(instance_id)
        server = hooks.standins.get(key) if key else None
        found = getattr(server, "yb_admin", None)
        return found if isinstance(found, Cluster) else None

    patch_send_command(hooks.patch, YbAdmin(cluster_of, hooks.events.append))
