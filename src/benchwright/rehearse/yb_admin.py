"""What ``yb-admin`` reads and changes on a rehearsed YugabyteDB cluster, and the executor of
node_replace's yb-admin commands on it (services/ssm.py hands it Run Command's lines):

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
