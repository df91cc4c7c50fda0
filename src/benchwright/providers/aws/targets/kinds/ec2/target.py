"""Self-managed databases on EC2, started by user-data templates (providers/aws/targets/kinds/ec2/templates/).

``yugabytedb-3node``: three nodes, one per AZ, replication factor 3 (or 1). The master addresses must be in
every node's user-data before boot, so we first create one network interface per AZ (which fixes the
private IPs), then launch each instance on its interface. ``redis-protocol``: one Redis-protocol
server (redis, valkey, keydb, or ARDB built from source as in experiment 4).
"""

from __future__ import annotations

import ipaddress
import shlex
from collections.abc import Mapping, Sequence
from importlib import resources
from string import Template
from typing import Any

from benchwright.errors import ProvisioningFailed, SpecError
from benchwright.providers.aws.common import (
    aws_call,
    tag_list,
)
from benchwright.providers.aws.deletion import delete_eni_later_ok, named, terminate_instances
from benchwright.providers.aws.targets.base import AwsTarget, ServiceStatus, redis_connection
from benchwright.providers.aws.targets.kinds.ec2.node_replace import NodeReplace, launched_replacements
from benchwright.providers.aws.targets.kinds.ec2.spec import Ec2Target as Ec2Spec
from benchwright.spec.yugabytedb import YSQL_DATABASE, YSQL_USER, yugabytedb_build

TEMPLATES = {  # template -> (user-data file, port); the spec owns the node counts
    "yugabytedb-3node": ("yugabytedb_3node.sh", 5433),
    "redis-protocol": ("redis_protocol.sh", 6379),
}
# What a template's user-data downloads from outside AWS at boot (YugabyteDB's release tarball, a
# git clone): impossible in a stage without a route to the internet (network.egress: endpoints).
NEEDS_INTERNET = {"yugabytedb-3node": "downloads.yugabyte.com", "keydb": "github.com", "ardb": "github.com"}
REDIS_FLAGS = "--port $PORT --bind 0.0.0.0 --protected-mode no --dir $DATA"
# server -> (packages, install commands, start command); $PORT and $DATA are set by the template.
SERVERS = {
    "redis": ("redis6", "", f"redis6-server {REDIS_FLAGS}"),
    "valkey": ("valkey", "", f"valkey-server {REDIS_FLAGS}"),
    "keydb": (
        "gcc gcc-c++ make git",
        "git clone --depth 1 https://github.com/Snapchat/KeyDB /opt/keydb && make -C /opt/keydb -j$(nproc)",
        f"/opt/keydb/src/keydb-server {REDIS_FLAGS}",
    ),
    "ardb": (
        "gcc gcc-c++ make git",
        "git clone --depth 1 https://github.com/yinqiwen/ardb /opt/ardb\n"
        "(cd /opt/ardb && storage_engine=lmdb make -j$(nproc))\n"
        "sed -i -e 's/^server\\[0\\].listen .*/server[0].listen 0.0.0.0:'$PORT'/' "
        "-e 's#^home .*#home '$DATA'#' "
        "/opt/ardb/ardb.conf",
        "/opt/ardb/src/ardb-server /opt/ardb/ardb.conf",
    ),
}


CODE_SLOTS = frozenset({"packages", "install_commands", "start_command", "master_join"})


def render_user_data(
    template: str, values: Mapping[str, str | Sequence[str]], code: Mapping[str, str] | None = None
) -> str:
    """Fill a template. ``values`` are data: each is shell-quoted (a list becomes quoted words of a bash
    array), so no value, whatever it holds, runs as code. ``code`` fills the few code slots
    (``CODE_SLOTS``), only ever from this module's constants. A missing placeholder is an error naming
    it (never a silent blank)."""
    text = (
        resources.files("benchwright.providers.aws.targets.kinds.ec2.templates")
        .joinpath(TEMPLATES[template][0])
        .read_text()
    )
    code = dict(code or {})
    if set(code) - CODE_SLOTS or set(values) & CODE_SLOTS:
        raise ValueError(f"only {', '.join(sorted(CODE_SLOTS))} take code; everything else is a value")
    filled: dict[str, str] = dict(code)
    for key, value in values.items():
        if isinstance(value, str):
            filled[key] = shlex.quote(value)
        else:
            filled[key] = " ".join(shlex.quote(str(word)) for word in value)
    try:
        return Template(text).substitute(filled)
    except KeyError as exc:
        raise SpecError(f"target.template_values.{exc.args[0]}", f"missing for template {template}") from exc


def _address(ip: str) -> str:
    """A node's private address from AWS, checked all the same (it reaches the user-data)."""
    try:
        return str(ipaddress.ip_address(ip))
    except ValueError:
        raise ProvisioningFailed(f"ec2 target: {ip[:60]!r} is not an IP address") from None


class Ec2Target(AwsTarget[Ec2Spec]):
    kind = "ec2"

    @property
    def template(self) -> str:
        return self.spec.template

    @property
    def default_port(self) -> int:  # type: ignore[override]
        return TEMPLATES[self.template][1]

    def _subnets(self, count: int) -> list[dict[str, Any]]:
        """``count`` subnets in distinct AZs (or the named AZ for a single node)."""
        ec2 = self.clients("ec2")
        if not self.config.subnet_ids:
            raise ProvisioningFailed("ec2 target: no subnets configured (BENCHWRIGHT_SUBNET_IDS)")
        subnets = aws_call("ec2 describe_subnets", ec2.describe_subnets, SubnetIds=self.config.subnet_ids)[
            "Subnets"
        ]
        wanted = self.spec.availability_zones or []
        chosen: list[dict[str, Any]] = []
        seen: set[str] = set()
        for az in wanted:
            match = [s for s in subnets if s["AvailabilityZone"] == az]
            if not match:
                raise SpecError("target.availability_zones", f"no configured subnet in {az}")
            chosen.append(match[0])
            seen.add(az)
        for subnet in sorted(subnets, key=lambda s: s["AvailabilityZone"]):
            if len(chosen) >= count:
                break
            if subnet["AvailabilityZone"] not in seen:
                chosen.append(subnet)
                seen.add(subnet["AvailabilityZone"])
        if len(chosen) < count:
            raise ProvisioningFailed(
                f"ec2 target {self.template}: needs {count} AZs, subnets cover {len(chosen)}"
            )
        return chosen[:count]

    def _block_devices(self) -> list[dict[str, Any]]:
        volume = self.spec.volume
        if volume is None:
            return []
        ebs: dict[str, Any] = {
            "VolumeSize": volume.size_gb,
            "VolumeType": volume.type,
            "DeleteOnTermination": True,
        }
        if volume.iops:
            ebs["Iops"] = volume.iops
        if volume.throughput_mbps:
            ebs["Throughput"] = volume.throughput_mbps  # MiB/s, gp3 only (the spec refuses it elsewhere)
        return [{"DeviceName": "/dev/sdf", "Ebs": ebs}]

    def _template_values(
        self, ips: list[str], index: int, leaving: str = ""
    ) -> tuple[dict[str, str | list[str]], dict[str, str]]:
        """(values, code) for the template. Values are data, quoted when rendered: the spec's
        ``settings`` become words of a flags array (server flags), never text in a command line.
        Code comes from this module's constants only. ``leaving``: the node replaces the node at that
        address, whose master leaves the quorum once this one joined (node_replace,
        targets/node_replace.py); ``ips`` are the cluster's addresses after the replacement."""
        ips = [_address(ip) for ip in ips]
        replace = bool(leaving)
        quorum = [_address(leaving) if i == index and replace else ip for i, ip in enumerate(ips)]
        settings = sorted(self.spec.settings.items())
        # the spec sets server for redis-protocol; yugabytedb-3node's template uses none of these
        packages, install, start = SERVERS[self.spec.server or "redis"]
        masters = ",".join(f"{ip}:7100" for ip in ips)
        values: dict[str, str | list[str]] = {
            "node_ip": ips[index],
            "master_addresses": masters,
            "master_start": "" if replace else masters,
            "master_others": ",".join(f"{ip}:7100" for i, ip in enumerate(quorum) if replace or i != index),
            "master_leaving": _address(leaving) if replace else "",
            "replication_factor": str(self.spec.replication_factor),
            "yb_version": self.spec.yugabytedb_version,
            "yb_build": yugabytedb_build(self.spec.yugabytedb_version),  # validated: a known release
            "master_flags": [],
            "tserver_flags": [f"--{k}={_flag_value(v)}" for k, v in settings],
            "port": str(self.default_port),
            # ardb reads its own ardb.conf (the spec refuses settings for it)
            "server_args": []
            if "ardb" in start
            else [w for k, v in settings for w in (f"--{k}", _flag_value(v, redis=True))],
        }
        code = {
            "packages": packages,
            "install_commands": install,
            "start_command": start,
            "master_join": MASTER_JOIN if replace else "",
        }
        return values, code

    def _check_egress(self) -> None:
        """Refuse, before anything is created, a template whose boot needs the internet in a stage
        that has none (dnf packages come from the AL2023 repositories in S3, which the S3 gateway
        endpoint reaches; downloads from elsewhere do not)."""
        if self.config.egress != "endpoints":
            return
        for what in (self.template, self.spec.server):
            if what in NEEDS_INTERNET:
                raise SpecError(
                    "target.template" if what == self.template else "target.server",
                    f"{what} downloads from {NEEDS_INTERNET[what]} at boot, but this stage has no "
                    "internet route (network.egress: endpoints); deploy with network.egress: nat",
                )

    def node_launch_args(self, user_data: str, eni: str, az: str) -> dict[str, Any]:
        """RunInstances' arguments for one node on its network interface (its private address), tagged
        like every resource of the run (teardown and the janitor find it by tag)."""
        ami = self.config.runner_ami
        if not ami:
            raise ProvisioningFailed("ec2 target: no AMI configured (BENCHWRIGHT_RUNNER_AMI)")
        tags = tag_list(self.tags() | {"Name": self.name})
        args: dict[str, Any] = {
            "ImageId": str(ami),
            "InstanceType": self.spec.instance_type,
            "MinCount": 1,
            "MaxCount": 1,
            "UserData": user_data,  # boto3 base64-encodes it
            "NetworkInterfaces": [{"DeviceIndex": 0, "NetworkInterfaceId": eni}],
            "Placement": {"AvailabilityZone": az},
            "InstanceInitiatedShutdownBehavior": "terminate",
            "TagSpecifications": [
                {"ResourceType": "instance", "Tags": tags},
                {"ResourceType": "volume", "Tags": tags},
            ],
            "MetadataOptions": {"HttpTokens": "required"},
            "Monitoring": {"Enabled": True},  # 1-minute CPU/credit metrics (5-minute otherwise)
        }
        if self._block_devices():
            args["BlockDeviceMappings"] = self._block_devices()
        profile = self.config.node_instance_profile  # SSM's agent: node_replace runs yb-admin through it
        if profile:
            args["IamInstanceProfile"] = {"Arn": profile} if profile.startswith("arn:") else {"Name": profile}
        return args

    def node_user_data(self, index: int) -> str:
        """The first-boot user-data of node ``index`` (of the handle's addresses)."""
        ips = [ip for ip in self.handle.get("ips", "").split(",") if ip]
        return render_user_data(self.template, *self._template_values(ips, index))

    def replacement_user_data(self, index: int, address: str) -> str:
        """The user-data of a node that replaces node ``index`` (of the handle's addresses) at a new
        ``address``: its master joins the quorum and the replaced node's master leaves it."""
        ips = [ip for ip in self.handle.get("ips", "").split(",") if ip]
        after = [address if i == index else ip for i, ip in enumerate(ips)]
        return render_user_data(self.template, *self._template_values(after, index, leaving=ips[index]))

    def _create(self) -> dict[str, str]:
        self._check_egress()
        ec2 = self.clients("ec2")
        nodes = self.spec.nodes
        subnets = self._subnets(nodes)
        tags = tag_list(self.tags() | {"Name": self.name})
        if not self.config.runner_ami:  # before anything is created
            raise ProvisioningFailed("ec2 target: no AMI configured (BENCHWRIGHT_RUNNER_AMI)")
        enis = []
        for subnet in subnets:
            eni = aws_call(
                "ec2 create_network_interface",
                ec2.create_network_interface,
                SubnetId=subnet["SubnetId"],
                Groups=list(self.config.security_group_ids),
                Description=f"benchwright {self.run_id}",
                TagSpecifications=[{"ResourceType": "network-interface", "Tags": tags}],
            )
            enis.append(eni["NetworkInterface"])
            self.handle["enis"] = ",".join(e["NetworkInterfaceId"] for e in enis)  # for a partial cleanup
        ips = [eni["PrivateIpAddress"] for eni in enis]
        instance_ids = []
        for index, eni in enumerate(enis):
            user_data = render_user_data(self.template, *self._template_values(ips, index))
            args = self.node_launch_args(
                user_data, eni["NetworkInterfaceId"], subnets[index]["AvailabilityZone"]
            )
            reservation = aws_call(f"ec2 run_instances {self.name}", ec2.run_instances, **args)
            instance_ids.append(reservation["Instances"][0]["InstanceId"])
            self.handle["instances"] = ",".join(instance_ids)
        return {
            "name": self.name,
            "instances": ",".join(instance_ids),
            "enis": ",".join(e["NetworkInterfaceId"] for e in enis),
            "ips": ",".join(ips),
            "availability_zone": subnets[0]["AvailabilityZone"],
        }

    def _service_status(self) -> ServiceStatus:
        ids = [i for i in self.handle.get("instances", "").split(",") if i]
        if not ids:
            return "deleted", None, None
        ec2 = self.clients("ec2")
        reservations = aws_call("ec2 describe_instances", ec2.describe_instances, InstanceIds=ids)[
            "Reservations"
        ]
        states = [i["State"]["Name"] for r in reservations for i in r["Instances"]]
        if any(s in {"terminated", "shutting-down", "stopped", "stopping"} for s in states):
            return "failed", None, None
        if len(states) < len(ids) or any(s != "running" for s in states):
            return "creating", None, None
        # the EBS volumes, for their BurstBalance / ops series (AWS/EBS is per volume)
        self.handle["volumes"] = ",".join(
            m["Ebs"]["VolumeId"]
            for r in reservations
            for i in r["Instances"]
            for m in i.get("BlockDeviceMappings", [])
            if m.get("Ebs", {}).get("VolumeId")
        )
        # Every node must accept connections, not only the first.
        for ip in self.handle.get("ips", "").split(",")[1:]:
            if ip and not self.probe(ip, self.default_port):
                return "creating", None, None
        return "ready", self.handle.get("ips", "").split(",")[0], self.default_port

    def connection_properties(self) -> dict[str, str]:
        ips = [ip for ip in self.handle.get("ips", "").split(",") if ip]
        port = self.default_port
        if self.template == "yugabytedb-3node":
            hosts = ",".join(f"{ip}:{port}" for ip in ips)  # client-side load spreading over all nodes
            props = {"postgres.url": f"postgresql://{YSQL_USER}@{hosts}/{YSQL_DATABASE}"}
            return props | presplit_properties(self.spec.presplit)
        return redis_connection(ips[0] if ips else "", port, False)

    def operation_step(
        self, name: str, progress: dict[str, Any]
    ) -> tuple[dict[str, Any], dict[str, Any] | None]:
        """node_replace on yugabytedb-3node: providers/aws/targets/kinds/ec2/node_replace.py."""
        return NodeReplace(self).step(name, progress)

    def metric_dimensions(self) -> list[tuple[str, dict[str, str]]]:
        # the nodes a node_replace terminated keep their series of the measured phase
        ids = [i for key in ("instances", "replaced") for i in self.handle.get(key, "").split(",") if i]
        instances = [("AWS/EC2", {"InstanceId": i}) for i in ids]
        volumes = [("AWS/EBS", {"VolumeId": v}) for v in self.handle.get("volumes", "").split(",") if v]
        return instances + volumes

    def _delete(self) -> None:
        ec2 = self.clients("ec2")
        ids = [i for i in self.handle.get("instances", "").split(",") if i]
        if "node_replace" in self.handle.get("operations", "").split():
            ids += [i for i in launched_replacements(self) if i not in ids]  # also one a lost step made
        enis = [e for key in ("enis", "replaced_enis") for e in self.handle.get(key, "").split(",") if e]
        if "node_replace" in self.handle.get("operations", "").split():
            from benchwright.providers.aws.targets.kinds.ec2.node_replace import launched_interfaces

            enis += [e for e in launched_interfaces(self) if e not in enis]
        named(f"ec2 instances {self.name}", terminate_instances, ec2, ids)
        for eni in enis:
            delete_eni_later_ok(ec2, eni)


# The user-data lines of a replacement node at a new address: its empty master joins the quorum, then
# the replaced node's master (still running: the workflow terminates it after the load move) leaves
# it, as YugabyteDB's master move does (ADD first while the old one lives). Bounded retries (10 minutes
# each). Code only: the addresses are the template's quoted values.
MASTER_JOIN = "\n".join(
    [
        "# node_replace: this node's master joins the quorum, the replaced node's master leaves it",
        'admin() { ./bin/yb-admin --master_addresses "$1" change_master_config "$2" "$3" 7100; }',
        'for i in $(seq 120); do admin "$MASTER_OTHERS" ADD_SERVER "$NODE_IP" && break; sleep 5; done',
        'for i in $(seq 120); do admin "$MASTERS" REMOVE_SERVER "$MASTER_LEAVING" && break; sleep 5; done',
    ]
)


def _flag_value(value: Any, redis: bool = False) -> str:
    """A setting's value as a server flag: booleans as the server spells them (Redis yes/no, gflags
    true/false)."""
    if isinstance(value, bool):
        return ("yes" if value else "no") if redis else ("true" if value else "false")
    return str(value)


def presplit_properties(values: list[str] | None) -> dict[str, str]:
    """``presplit`` as the postgres driver's DDL hooks: YSQL splits a table only at values of a
    range-sharded key, so the key becomes ``ASC`` and CREATE TABLE gets ``SPLIT AT VALUES``; the
    YCSB load then writes into tablets already spread over the three nodes (experiment 1)."""
    if not values:
        return {}
    quoted = ", ".join("('" + str(v).replace("'", "''") + "')" for v in values)
    return {
        "postgres.primary_key": "PRIMARY KEY (YCSB_KEY ASC)",
        "postgres.ddl_suffix": f"SPLIT AT VALUES ({quoted})",
    }
