"""``node_replace`` on a self-managed YugabyteDB cluster (EC2 ``yugabytedb-3node``), one step per poll.

What a YugabyteDB user times as "replacing a node" after losing a VM (experiment 1 did it by hand):

1. TerminateInstances on the cluster's LAST node. The first node is the target's endpoint (the
   readiness probe's address); the runner's URL lists all three nodes, but the runner has finished
   when operations run. The rows of every user table are counted through the first node just before.
2. Once the instance is terminated and its network interface is free again, RunInstances on that same
   interface (so the same private address and AZ: every node's master and tserver addresses stay
   valid) with the node's user-data in replacement mode (ec2.master_join: its master starts outside the
   quorum, the terminated node's master is removed and the new one added, as YugabyteDB's "Replace a
   failed YB-Master" does; its tserver registers as a new tserver). A ClientToken makes a retried step
   return the same instance.
3. Once it runs, the probe connects to the NEW node's YSQL port and counts every user table's rows; it
   ends when that count equals the count before step 1 (a different count fails it).

Steps: ``terminate_s`` (the terminate call until the interface is free), ``launch_s`` (the RunInstances
call until "running"), ``ready_s`` (running until the probe answers through the new node). The total is
from the terminate call, late by up to one ``poll_seconds``. Not in it: the re-replication of the lost
node's tablets onto the new tserver (YugabyteDB starts it after ``follower_unavailable_considered_failed_sec``,
15 minutes by default); the probe's reads are served by the tablet leaders through the new node's YSQL.

The replacement takes the terminated instance's place in the handle's ``instances`` (teardown terminates
it; the victim goes to ``replaced``, whose CloudWatch series of the measured phase stay in the report);
it is tagged like every resource of the run (the janitor finds it by tag), and teardown also looks for
it by tag in case the step that launched it was lost.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from benchwright.providers.aws import probe
from benchwright.providers.aws.common import ENI_IN_USE, aws_call, error_code, is_not_found, translate
from benchwright.providers.aws.names import RUN_ID_TAG
from benchwright.providers.aws.targets.operations import OperationFailed
from benchwright.providers.base import probe_or_none
from benchwright.spec.yugabytedb import YSQL_DATABASE, YSQL_USER

if TYPE_CHECKING:
    from benchwright.providers.aws.targets.ec2 import Ec2Target

GONE = {"shutting-down", "terminated", "stopping", "stopped"}
# A node boots, downloads YugabyteDB and joins in minutes: after an hour it will not (the stage's
# default deadline, four hours, is for restores of large databases; the cluster bills meanwhile).
TIMEOUT_S = 3600.0


def _now() -> datetime:
    return datetime.now(UTC)


def _since(progress: dict[str, Any], key: str, now: datetime) -> float:
    return round((now - datetime.fromisoformat(progress[key])).total_seconds(), 3)


def _ids(handle: dict[str, str], key: str) -> list[str]:
    return [i for i in handle.get(key, "").split(",") if i]


class NodeReplace:
    """The node_replace operation of one ``yugabytedb-3node`` target."""

    def __init__(self, target: Ec2Target) -> None:
        self.target = target
        self.ec2 = target.clients("ec2")

    def step(self, name: str, progress: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any] | None]:
        if name != "node_replace" or self.target.template != "yugabytedb-3node":
            raise OperationFailed(f"{name} is not an operation of an ec2 {self.target.template} target")
        phase = progress.get("phase") or "start"
        if phase == "start":
            return self._start(progress), None
        if phase == "terminating":
            return self._launch_when_free(progress), None
        if phase == "launching":
            return self._wait_running(progress), None
        return self._probe(progress)

    # ------------------------------------------------------------------ the steps
    def _start(self, progress: dict[str, Any]) -> dict[str, Any]:
        handle = self.target.handle
        instances, ips, enis = _ids(handle, "instances"), _ids(handle, "ips"), _ids(handle, "enis")
        if len(instances) < 2 or not (len(instances) == len(ips) == len(enis)):
            raise OperationFailed(
                f"{self.target.name}: the handle lists no cluster of nodes to replace one of"
            )
        index = len(instances) - 1  # node 1 is the endpoint: the last one goes
        rows = self.rows(ips[0])
        now = _now()
        started = now.isoformat()
        aws_call(f"ec2 terminate_instances {instances[index]}", self.ec2.terminate_instances,
                 InstanceIds=[instances[index]])  # fmt: skip
        return {
            **progress,
            "name": "node_replace",
            "phase": "terminating",
            "started_at": started,
            "deadline": (now + timedelta(seconds=TIMEOUT_S)).isoformat(),  # stages/operations.py
            "rows_before": rows,
            "index": index,
            "victim": instances[index],
            "eni": enis[index],
            "ip": ips[index],
        }

    def _state(self, instance_id: str) -> str:
        """The instance's state; "pending" while a new instance is not visible yet (EC2's eventual
        consistency right after RunInstances)."""
        from botocore.exceptions import ClientError

        try:
            found = self.ec2.describe_instances(InstanceIds=[instance_id])["Reservations"]
        except ClientError as exc:
            if is_not_found(exc):
                return "pending"
            raise translate(exc, f"ec2 describe_instances {instance_id}", fatal=OperationFailed) from exc
        return str(found[0]["Instances"][0]["State"]["Name"]) if found else "pending"

    def _launch_when_free(self, progress: dict[str, Any]) -> dict[str, Any]:
        """RunInstances on the terminated node's interface, once AWS lets it go."""
        from botocore.exceptions import ClientError

        if self._state(progress["victim"]) != "terminated":
            return progress
        eni = aws_call(
            "ec2 describe_network_interfaces",
            self.ec2.describe_network_interfaces,
            NetworkInterfaceIds=[progress["eni"]],
        )["NetworkInterfaces"][0]
        now = _now()
        user_data = self.target.node_user_data(int(progress["index"]), replace=True)
        args = self.target.node_launch_args(user_data, progress["eni"], str(eni["AvailabilityZone"]))
        token = f"bw-{self.target.run_id}-{progress['victim']}"[-64:]  # a retried step: the same instance
        try:
            reservation = self.ec2.run_instances(ClientToken=token, **args)
        except ClientError as exc:  # still attached to the terminated instance: the next poll tries again
            if error_code(exc) in ENI_IN_USE:
                return progress
            raise translate(
                exc, f"node_replace: RunInstances on {progress['eni']}", fatal=OperationFailed
            ) from exc
        replacement = str(reservation["Instances"][0]["InstanceId"])
        self._record(progress["victim"], replacement)
        return {
            **progress,
            "phase": "launching",
            "replacement": replacement,
            "az": str(eni["AvailabilityZone"]),
            "terminate_s": _since(progress, "started_at", now),
            "launch_called_at": now.isoformat(),
        }

    def _record(self, victim: str, replacement: str) -> None:
        """The replacement takes the victim's place in the handle (teardown terminates it)."""
        handle = self.target.handle
        handle["instances"] = ",".join(replacement if i == victim else i for i in _ids(handle, "instances"))
        handle["replaced"] = ",".join([*_ids(handle, "replaced"), victim])

    def _wait_running(self, progress: dict[str, Any]) -> dict[str, Any]:
        state = self._state(progress["replacement"])
        if state in GONE:
            raise OperationFailed(f"node_replace: the replacement {progress['replacement']} is {state}")
        if state != "running":
            return progress
        now = _now()
        return {
            **progress,
            "phase": "joining",
            "launch_s": _since(progress, "launch_called_at", now),
            "running_at": now.isoformat(),
        }

    def _probe(self, progress: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any] | None]:
        port = self.target.default_port
        rows = probe_or_none(progress, lambda: self.rows(progress["ip"]), f"{progress['ip']}:{port}")
        if rows is None:  # not joined or not serving yet: the next poll probes again
            return progress, None
        now = _now()
        before = int(progress["rows_before"])
        if rows != before:
            raise OperationFailed(
                f"node_replace: the probe through the new node counted {rows:,} rows, {before:,} before"
            )
        nodes = len(_ids(self.target.handle, "instances"))
        return progress, {
            "name": "node_replace",
            "started_at": progress["started_at"],
            "seconds": _since(progress, "started_at", now),
            "steps": {
                "terminate_s": float(progress["terminate_s"]),
                "launch_s": float(progress["launch_s"]),
                "ready_s": _since(progress, "running_at", now),
            },
            "ok": True,
            "detail": (
                f"TerminateInstances {progress['victim']} (node {int(progress['index']) + 1} of {nodes}, "
                f"{progress['ip']}, {progress.get('az', '')}; node 1 is the endpoint), RunInstances "
                f"{progress['replacement']} on its interface {progress['eni']}; probe through the new node "
                f"at {progress['ip']}:{port}: {rows:,} rows in the user tables, as before"
            ),
        }

    # ------------------------------------------------------------------ probe
    def rows(self, host: str) -> int:
        """Every user table's rows through one node's YSQL (role and database ``yugabyte``, which a
        fresh cluster has without a password, as the runner's URL uses them)."""
        timeout = self.target.config.probe_timeout_s
        return probe.postgres_rows(host, self.target.default_port, YSQL_USER, "", YSQL_DATABASE, timeout)


def launched_replacements(target: Ec2Target) -> list[str]:
    """Instances of this run's target that are not terminated (by tag): what teardown terminates
    besides the handle's, in case the step that launched a replacement did not return."""
    ec2 = target.clients("ec2")
    filters = [
        {"Name": f"tag:{RUN_ID_TAG}", "Values": [target.run_id]},
        {"Name": "tag:Name", "Values": [target.name]},
        {"Name": "instance-state-name", "Values": ["pending", "running", "stopping", "stopped"]},
    ]
    found = aws_call("ec2 describe_instances", ec2.describe_instances, Filters=filters)["Reservations"]
    return [str(i["InstanceId"]) for r in found for i in r["Instances"]]
