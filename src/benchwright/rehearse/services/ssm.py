"""SSM Run Command inside the moto server: a command runs against the stand-in of the node it names.

moto 5.2.5 records SendCommand and answers every invocation ``Success`` with empty output: it runs
nothing. node_replace (providers/aws/targets/yb_admin.py) sends ``yb-admin`` lines to a YugabyteDB
node and reads the output, so this hook hands each command's lines to an executor and writes its
status and output into moto's invocations. The rehearsal's executor is ``YbAdmin``: the yb-admin
commands node_replace uses, on the state of the cluster the instance belongs to (its stand-in):

- ``change_blacklist ADD|REMOVE host:port``: the cluster's tserver blacklist;
- ``get_load_move_completion``: the next of the cluster's scripted percentages, else 100 (a
  PostgreSQL stand-in has no tablets, so nothing moves: the events say so).

Anything else, or an instance that is no YugabyteDB node, fails the invocation with yb-admin's kind of
message, so a command the stand-in does not know is never a silent success.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from benchwright.rehearse.hooks import Hooks

# (instance id, the command's shell lines) -> (status, standard output, standard error)
Executor = Callable[[str, list[str]], tuple[str, str, str]]


@dataclass
class Cluster:
    """What yb-admin would read from a cluster's masters."""

    blacklist: list[str] = field(default_factory=list)  # host:port of blacklisted tservers
    percents: list[float] = field(default_factory=list)  # the next load-move answers (then 100)
    said: list[str] = field(default_factory=list)  # every yb-admin command run, in order


def yb_admin_words(lines: list[str]) -> list[str] | None:
    """The words after ``-master_addresses X`` of the lines' yb-admin call, or None."""
    for line in lines:
        words = shlex.split(line)
        if words and words[0].endswith("bin/yb-admin"):
            rest = words[1:]
            if rest[:1] and rest[0].lstrip("-") == "master_addresses":
                rest = rest[2:]
            return rest
    return None


class YbAdmin:
    """The yb-admin commands node_replace sends, on the cluster of the instance (``cluster_of``)."""

    def __init__(self, cluster_of: Callable[[str], Cluster | None], said: Callable[[str], None]) -> None:
        self.cluster_of = cluster_of
        self.said = said

    def __call__(self, instance_id: str, lines: list[str]) -> tuple[str, str, str]:
        cluster = self.cluster_of(instance_id)
        words = yb_admin_words(lines)
        if cluster is None or words is None:
            return "Failed", "", f"{instance_id}: no yb-admin command for a YugabyteDB node in {lines!r}"
        cluster.said.append(" ".join(words))
        if words[:1] == ["change_blacklist"] and len(words) == 3 and words[1] in {"ADD", "REMOVE"}:
            if words[1] == "ADD" and words[2] not in cluster.blacklist:
                cluster.blacklist.append(words[2])
            elif words[1] == "REMOVE" and words[2] in cluster.blacklist:
                cluster.blacklist.remove(words[2])
            self.said(f"yb-admin on {instance_id}: change_blacklist {words[1]} {words[2]}")
            return "Success", "", ""
        if words == ["get_load_move_completion"]:
            percent = cluster.percents.pop(0) if cluster.percents else 100.0
            self.said(
                f"yb-admin on {instance_id}: get_load_move_completion {percent:g} % "
                "(a stand-in has no tablets: nothing moves)"
            )
            return "Success", f"Percent complete = {percent:g} : blacklist {cluster.blacklist}\n", ""
        return "Failed", "", f"yb-admin: the stand-in does not know {' '.join(words)!r}"


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
