"""``node_replace`` on a self-managed YugabyteDB cluster (EC2 ``yugabytedb-3node``), one step per poll.

What a YugabyteDB user times as "replacing a node", in experiment 1's order (add a node at a new
address, blacklist the old, wait for the load move, terminate, remove):

1. The rows of every user table are counted through the first node (the target's endpoint). A new
   network interface in the victim's subnet (so its AZ; a new private address) and RunInstances on it,
   with the node's user-data in replacement mode (ec2.MASTER_JOIN: its empty master joins the quorum,
   then the replaced node's master leaves it; its tserver registers as a new tserver). The victim is
   the cluster's LAST node and keeps running. A ClientToken makes a retried step return the same
   instance.
2. Once it runs, the probe connects to the NEW node's YSQL port and counts every user table's rows;
   equal to the count before, the replacement serves (a different count fails the operation).
3. ``yb-admin change_blacklist ADD <victim>:9100`` on node 1 through SSM Run Command (yb_admin.py),
   then ``get_load_move_completion`` until it reports 100 %: the victim's tablets are re-replicated.
   The operation's clock stops there.
4. TerminateInstances on the victim, and once it is terminated ``change_blacklist REMOVE``.

Steps: ``launch_s`` (the start until the replacement runs), ``ready_s`` (running until the probe answers
through it), ``blacklist_s`` (the blacklist command), ``rereplicate_s`` (until the load move reports
100 %): these four split ``seconds``. ``serving_s`` is the time from the start until the replacement
served; ``terminate_s`` (after the clock) the victim's termination. Each poll is late by up to one
``poll_seconds``. Every wait is bounded: the operation's deadline (``TIMEOUT_S``), each SSM command's
polls and seconds (yb_admin.py), the load move's polls (``LOAD_MOVE_POLLS``); a timeout names the
step it waited for (``progress["waiting_for"]``).

The replacement takes the victim's place in the handle (``instances``, ``ips``, ``enis``: teardown
terminates and deletes them); the victim goes to ``replaced`` (its CloudWatch series of the measured
phase stay in the report) and its interface to ``replaced_enis``. Everything is tagged like every
resource of the run, and teardown also looks for instances and interfaces by tag in case the step that
made them was lost.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from benchwright.providers.aws import probe
from benchwright.providers.aws.common import aws_call, is_not_found, tag_list, translate
from benchwright.providers.aws.names import RUN_ID_TAG
from benchwright.providers.aws.targets.kinds.ec2 import yb_admin
from benchwright.providers.aws.targets.operations import OperationFailed
from benchwright.providers.base import probe_or_none
from benchwright.spec.yugabytedb import YSQL_DATABASE, YSQL_USER

if TYPE_CHECKING:
    from benchwright.providers.aws.targets.kinds.ec2.target import Ec2Target

GONE = {"shutting-down", "terminated", "stopping", "stopped"}
# A node boots, downloads YugabyteDB and joins in minutes; the load move copies the victim's tablets
# (experiment 1's data: minutes to tens of minutes). After two hours it will not finish (the stage's
# default deadline, four hours, is for restores of large databases; the cluster bills meanwhile).
TIMEOUT_S = 2 * 3600.0
LOAD_MOVE_POLLS = 1000  # get_load_move_completion calls, one per poll: a bound besides the deadline
TSERVER_PORT = 9100  # templates/yugabytedb_3node.sh: --rpc_bind_addresses=$NODE_IP:9100


def _now() -> datetime:
    return datetime.now(UTC)


def _since(progress: dict[str, Any], key: str, now: datetime) -> float:
    return round((now - datetime.fromisoformat(progress[key])).total_seconds(), 3)


def _ids(handle: dict[str, str], key: str) -> list[str]:
    return [i for i in handle.get(key, "").split(",") if i]


def _swap(handle: dict[str, str], key: str, old: str, new: str) -> None:
    handle[key] = ",".join(new if i == old else i for i in _ids(handle, key))


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
        if phase == "launching":
            return self._wait_running(progress), None
        if phase == "joining":
            return self._probe(progress), None
        if phase == "blacklisting":
            return self._blacklisted(progress), None
        if phase == "moving":
            return self._load_move(progress), None
        if phase == "terminating":
            return self._terminated(progress), None
        return self._unblacklisted(progress)

    # ------------------------------------------------------------------ the steps
    def _start(self, progress: dict[str, Any]) -> dict[str, Any]:
        """Count the rows, then a new interface in the victim's subnet and the replacement on it."""
        handle = self.target.handle
        instances, ips, enis = _ids(handle, "instances"), _ids(handle, "ips"), _ids(handle, "enis")
        if len(instances) < 2 or not (len(instances) == len(ips) == len(enis)):
            raise OperationFailed(
                f"{self.target.name}: the handle lists no cluster of nodes to replace one of"
            )
        index = len(instances) - 1  # node 1 is the endpoint (and runs yb-admin): the last one goes
        rows = self.rows(ips[0])
        now = _now()
        old = aws_call(
            "ec2 describe_network_interfaces",
            self.ec2.describe_network_interfaces,
            NetworkInterfaceIds=[enis[index]],
        )["NetworkInterfaces"][0]
        tags = tag_list(self.target.tags() | {"Name": self.target.name})
        eni = aws_call(
            "node_replace: ec2 create_network_interface",
            self.ec2.create_network_interface,
            SubnetId=str(old["SubnetId"]),
            Groups=list(self.target.config.security_group_ids),
            Description=f"benchwright {self.target.run_id}",
            TagSpecifications=[{"ResourceType": "network-interface", "Tags": tags}],
        )["NetworkInterface"]
        progress = {
            **progress,
            "name": "node_replace",
            "started_at": now.isoformat(),
            "deadline": (now + timedelta(seconds=TIMEOUT_S)).isoformat(),  # stages/operations.py
            "rows_before": rows,
            "index": index,
            "victim": instances[index],
            "victim_eni": enis[index],
            "ip": ips[index],
            "eni": str(eni["NetworkInterfaceId"]),
            "new_ip": str(eni["PrivateIpAddress"]),
            "az": str(old["AvailabilityZone"]),
        }
        return self._launch(progress)

    def _launch(self, progress: dict[str, Any]) -> dict[str, Any]:
        """RunInstances on the new interface; the replacement takes the victim's place in the handle."""
        handle = self.target.handle
        index = int(progress["index"])
        user_data = self.target.replacement_user_data(index, progress["new_ip"])
        args = self.target.node_launch_args(user_data, progress["eni"], progress["az"])
        token = f"bw-{self.target.run_id}-{progress['victim']}"[-64:]  # a retried step: the same instance
        reservation = aws_call(f"node_replace: RunInstances on {progress['eni']}", self.ec2.run_instances,
                               ClientToken=token, **args)  # fmt: skip
        replacement = str(reservation["Instances"][0]["InstanceId"])
        _swap(handle, "instances", progress["victim"], replacement)
        _swap(handle, "ips", progress["ip"], progress["new_ip"])
        _swap(handle, "enis", progress["victim_eni"], progress["eni"])
        handle["replaced"] = ",".join([*_ids(handle, "replaced"), progress["victim"]])
        handle["replaced_enis"] = ",".join([*_ids(handle, "replaced_enis"), progress["victim_eni"]])
        handle["replaced_ips"] = ",".join([*_ids(handle, "replaced_ips"), progress["ip"]])
        return {**progress, "phase": "launching", "replacement": replacement,
                "waiting_for": f"the replacement {replacement} to run"}  # fmt: skip

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

    def _wait_running(self, progress: dict[str, Any]) -> dict[str, Any]:
        state = self._state(progress["replacement"])
        if state in GONE:
            raise OperationFailed(f"node_replace: the replacement {progress['replacement']} is {state}")
        if state != "running":
            return progress
        return {**progress, "phase": "joining", "running_at": _now().isoformat(),
                "waiting_for": f"YSQL through the replacement at {progress['new_ip']}"}  # fmt: skip

    def _probe(self, progress: dict[str, Any]) -> dict[str, Any]:
        """The replacement serves once its YSQL counts the rows counted before; then the blacklist."""
        port = self.target.default_port
        address = progress["new_ip"]
        rows = probe_or_none(progress, lambda: self.rows(address), f"{address}:{port}")
        if rows is None:  # not joined or not serving yet: the next poll probes again
            return progress
        before = int(progress["rows_before"])
        if rows != before:
            raise OperationFailed(
                f"node_replace: the probe through the new node counted {rows:,} rows, {before:,} before"
            )
        blacklist = self._admin("blacklist", "change_blacklist", "ADD", f"{progress['ip']}:{TSERVER_PORT}")
        return {**progress, "phase": "blacklisting", "serving_at": _now().isoformat(), "rows": rows,
                "ssm": blacklist, "waiting_for": f"yb-admin change_blacklist ADD {progress['ip']}"}  # fmt: skip

    def _blacklisted(self, progress: dict[str, Any]) -> dict[str, Any]:
        command, output = yb_admin.poll(self.ssm, progress["ssm"])
        if output is None:
            return {**progress, "ssm": command}
        now = _now()
        return {**progress, "phase": "moving", "blacklisted_at": now.isoformat(), "load_polls": 1,
                "ssm": self._admin("load move", "get_load_move_completion"),
                "waiting_for": "the load move off the blacklisted tserver (get_load_move_completion)"}  # fmt: skip

    def _load_move(self, progress: dict[str, Any]) -> dict[str, Any]:
        """One get_load_move_completion per poll until 100 %: then the clock stops and the victim goes."""
        command, output = yb_admin.poll(self.ssm, progress["ssm"])
        if output is None:
            return {**progress, "ssm": command}
        percent = yb_admin.load_move_percent(output)
        polls = int(progress["load_polls"])
        if percent < 100.0:
            if polls >= LOAD_MOVE_POLLS:
                raise OperationFailed(
                    f"node_replace: load move: still {percent:g} % after {polls} get_load_move_completion"
                )
            return {**progress, "load_percent": percent, "load_polls": polls + 1,
                    "ssm": self._admin("load move", "get_load_move_completion"),
                    "waiting_for": f"the load move ({percent:g} % at the last poll)"}  # fmt: skip
        now = _now()
        aws_call(f"ec2 terminate_instances {progress['victim']}", self.ec2.terminate_instances,
                 InstanceIds=[progress["victim"]])  # fmt: skip
        return {**progress, "phase": "terminating", "load_percent": percent, "rereplicated_at": now.isoformat(),
                "ssm": None, "waiting_for": f"the replaced node {progress['victim']} to terminate"}  # fmt: skip

    def _terminated(self, progress: dict[str, Any]) -> dict[str, Any]:
        if self._state(progress["victim"]) != "terminated":
            return progress
        masters = self._masters(with_victim=False)
        remove = self._admin(
            "unblacklist", "change_blacklist", "REMOVE", f"{progress['ip']}:{TSERVER_PORT}", masters=masters
        )
        return {**progress, "phase": "unblacklisting", "terminated_at": _now().isoformat(), "ssm": remove,
                "waiting_for": f"yb-admin change_blacklist REMOVE {progress['ip']}"}  # fmt: skip

    def _unblacklisted(self, progress: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any] | None]:
        command, output = yb_admin.poll(self.ssm, progress["ssm"])
        if output is None:
            return {**progress, "ssm": command}, None
        return progress, self._entry(progress)

    def _entry(self, progress: dict[str, Any]) -> dict[str, Any]:
        def between(a: str, b: str) -> float:
            return _since({a: progress[a]}, a, datetime.fromisoformat(progress[b]))

        port = self.target.default_port
        nodes = len(_ids(self.target.handle, "instances"))
        seconds = between("started_at", "rereplicated_at")
        serving = between("started_at", "serving_at")
        return {
            "name": "node_replace",
            "started_at": progress["started_at"],
            "seconds": seconds,  # until the load move reported 100 %: re-replication complete
            "steps": {
                "launch_s": between("started_at", "running_at"),
                "ready_s": between("running_at", "serving_at"),
                "blacklist_s": between("serving_at", "blacklisted_at"),
                "rereplicate_s": between("blacklisted_at", "rereplicated_at"),
                "serving_s": serving,
                "terminate_s": between("rereplicated_at", "terminated_at"),
            },
            "ok": True,
            "detail": (
                f"RunInstances {progress['replacement']} on a new interface {progress['eni']} "
                f"({progress['new_ip']}, {progress['az']}) for node {int(progress['index']) + 1} of {nodes} "
                f"({progress['victim']}, {progress['ip']}; node 1 is the endpoint); probe through the new "
                f"node at {progress['new_ip']}:{port}: {int(progress['rows']):,} rows in the user tables, "
                f"as before; serving after {serving:g} s; yb-admin change_blacklist ADD "
                f"{progress['ip']}:{TSERVER_PORT}; load move {progress['load_percent']:g} % after "
                f"{int(progress['load_polls'])} polls: re-replicated after {seconds:g} s; then "
                f"TerminateInstances {progress['victim']} and change_blacklist REMOVE"
            ),
        }

    # ------------------------------------------------------------------ yb-admin and the probe
    @property
    def ssm(self) -> Any:
        return self.target.clients("ssm")

    def _masters(self, with_victim: bool = True) -> list[str]:
        """The masters yb-admin asks: the handle's nodes (the replacement in the victim's place), and
        the victim's master while it may still lead (the replacement's user-data moves it)."""
        ips = _ids(self.target.handle, "ips")
        victims = [p for p in _ids(self.target.handle, "replaced_ips") if with_victim]
        return [f"{ip}:7100" for ip in [*ips, *victims]]

    def _admin(self, step: str, *words: str, masters: list[str] | None = None) -> dict[str, Any]:
        """SendCommand of one yb-admin command on node 1 (a master that stays)."""
        node = _ids(self.target.handle, "instances")[0]
        lines = yb_admin.commands(self.target.spec.yugabytedb_version, masters or self._masters(), *words)
        return yb_admin.send(self.ssm, node, step, lines, self.target.run_id)

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


def launched_interfaces(target: Ec2Target) -> list[str]:
    """This run's target interfaces (by tag): a replacement's, when the step that made it was lost."""
    ec2 = target.clients("ec2")
    filters = [
        {"Name": f"tag:{RUN_ID_TAG}", "Values": [target.run_id]},
        {"Name": "tag:Name", "Values": [target.name]},
    ]
    found = aws_call("ec2 describe_network_interfaces", ec2.describe_network_interfaces, Filters=filters)
    return [str(e["NetworkInterfaceId"]) for e in found["NetworkInterfaces"]]
