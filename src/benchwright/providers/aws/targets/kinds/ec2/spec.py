"""The ``target`` section of a self-managed target on EC2 (``provider: ec2``): its instances, their
volume and the user-data template that makes them a server. The kind's own model (its descriptor names
it: kind.py); it imports only the spec layer."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import Field, field_validator, model_validator

from benchwright.spec._base import AZ_NAME_RE, EC2_TYPE_RE, StrictModel, matching
from benchwright.spec.server_settings import Kind as SettingsKind
from benchwright.spec.target_facts import BurstStorage, TargetBase, TargetFacts
from benchwright.spec.yugabytedb import yugabytedb_build

VolumeType = Literal["standard", "gp2", "gp3", "io1", "io2", "st1", "sc1"]
GP3_BASELINE_IOPS = 3000  # a gp3 volume's IOPS when none are provisioned
GP3_MIBPS_PER_IOPS = 0.25  # gp3 throughput is at most this many MiB/s per provisioned IOPS


class Ec2Volume(StrictModel):
    type: VolumeType = "gp3"
    size_gb: int = Field(ge=1, le=65536)
    iops: int | None = Field(default=None, ge=100, le=256000)
    throughput_mbps: int | None = Field(default=None, ge=125, le=1000)

    @model_validator(mode="after")
    def _rules(self) -> Ec2Volume:
        if self.type in ("io1", "io2") and self.iops is None:
            raise ValueError(f"{self.type} volumes need iops")
        if self.type in ("standard", "gp2", "st1", "sc1") and self.iops is not None:
            raise ValueError(f"{self.type} volumes take no iops")
        if self.type == "gp3" and self.iops is not None and self.iops < GP3_BASELINE_IOPS:
            raise ValueError(f"gp3 volumes start at {GP3_BASELINE_IOPS} IOPS (iops {self.iops} is below)")
        if self.type == "io1" and self.iops and self.iops > self.size_gb * 50:
            raise ValueError(f"io1 allows at most 50 IOPS per GB ({self.size_gb * 50} for {self.size_gb} GB)")
        if self.throughput_mbps is not None:
            if self.type != "gp3":
                raise ValueError(f"throughput_mbps applies to gp3 volumes only, not {self.type}")
            iops = self.iops or GP3_BASELINE_IOPS
            if self.throughput_mbps > iops * GP3_MIBPS_PER_IOPS:
                raise ValueError(
                    f"gp3 allows at most {GP3_MIBPS_PER_IOPS} MiB/s per provisioned IOPS: "
                    f"throughput_mbps {self.throughput_mbps} needs iops >= {int(self.throughput_mbps / GP3_MIBPS_PER_IOPS)}"
                )
        return self


YB_VERSION_RE = re.compile(r"^[0-9]{1,6}(\.[0-9]{1,6}){1,4}$")
YUGABYTEDB_VERSION = "2024.2.0.0"  # the yugabytedb-3node template's release when ``version`` is unset


class Ec2Target(TargetBase):
    """Self-managed on EC2 from a user-data template (experiment 1's YugabyteDB, experiment 4's ARDB)."""

    provider: Literal["ec2"]
    facts = TargetFacts(
        provision_s=420.0, teardown_s=120.0, ready_timeout_s=1800.0,
        events=("reboot",), operations=("node_replace",), scale_key=None,
        owned=True,
    )  # fmt: skip
    template: Literal["yugabytedb-3node", "redis-protocol"]
    instance_type: str
    volume: Ec2Volume | None = None  # None: the instance store (i3, m6id ...) or the root volume
    nodes: int = Field(default=1, ge=1, le=9)
    replication_factor: int = Field(default=1, ge=1, le=7)
    version: str | None = None  # e.g. YugabyteDB 2024.2.0.0 (YUGABYTEDB_VERSION when unset)
    server: Literal["redis", "ardb", "valkey", "keydb"] | None = None  # redis-protocol template only
    availability_zones: list[str] | None = None  # one per node; None = spread over the VPC's AZs
    presplit: list[str] | None = None  # yugabytedb: SPLIT AT VALUES for usertable

    _it = field_validator("instance_type")(matching(EC2_TYPE_RE, "an EC2 instance type such as m6i.4xlarge"))
    _version = field_validator("version")(matching(YB_VERSION_RE, "a release such as 2024.2.0.0"))
    _azs = field_validator("availability_zones")(matching(AZ_NAME_RE, "an AZ name such as eu-west-1a"))

    @field_validator("presplit")
    @classmethod
    def _presplit(cls, values: list[str] | None) -> list[str] | None:
        for i, v in enumerate(values or []):
            if len(str(v)) > 64 or not str(v).isprintable():
                raise ValueError(f"presplit[{i}]: one line of at most 64 characters")
        return values

    @model_validator(mode="after")
    def _rules(self) -> Ec2Target:
        if self.template == "yugabytedb-3node":
            if self.engine != "postgres":
                raise ValueError("yugabytedb-3node serves YSQL: engine must be postgres")
            if "nodes" not in self.model_fields_set:
                self.nodes = 3
            if "replication_factor" not in self.model_fields_set:
                self.replication_factor = 3
            if self.nodes != 3:
                raise ValueError("yugabytedb-3node has exactly 3 nodes")
            if self.replication_factor not in (1, 3):
                raise ValueError("replication_factor must be 1 or 3 on 3 nodes")
            if self.server is not None:
                raise ValueError("server applies to the redis-protocol template only")
            yugabytedb_build(self.yugabytedb_version)  # a version whose download exists, or refused
        else:
            if self.engine != "redis":
                raise ValueError("redis-protocol serves the Redis protocol: engine must be redis")
            if self.nodes != 1 or self.replication_factor != 1:
                raise ValueError("redis-protocol is a single server (nodes: 1)")
            if self.server is None:
                self.server = "redis"
            if self.presplit is not None:
                raise ValueError("presplit applies to yugabytedb-3node only")
        if self.availability_zones is not None and len(self.availability_zones) != self.nodes:
            raise ValueError(
                f"availability_zones lists {len(self.availability_zones)} AZs for {self.nodes} nodes"
            )
        return self

    @property
    def yugabytedb_version(self) -> str:
        """The YugabyteDB release the yugabytedb-3node template installs."""
        return self.version or YUGABYTEDB_VERSION

    def burst_storage(self) -> BurstStorage | None:
        """Its EBS volume (a new one: a full gp2 bucket); none on the instance store or root volume."""
        v = self.volume
        return None if v is None else BurstStorage(v.type, v.size_gb, v.iops, "ebs", "target.volume")

    def settings_kind(self) -> SettingsKind:
        """The template's server: YugabyteDB's flags, Redis's config (ARDB takes none)."""
        if self.template == "yugabytedb-3node":
            return "yugabytedb"
        return "none" if self.server == "ardb" else "redis"

    def operation_refusal(self, operation: str) -> tuple[str, str] | None:
        """node_replace terminates a node: only a replicated YugabyteDB cluster keeps its data and
        answers."""
        if self.template != "yugabytedb-3node":
            return "", (
                f"{operation} replaces a node of a cluster: template {self.template} is a single server "
                "(built for yugabytedb-3node)"
            )
        if self.replication_factor < 3:
            reason = f"{operation} terminates a node: with replication_factor 1 its data is lost; set 3"
            return "target.replication_factor", reason
        return None


# the kind's model, as the registry (kinds/__init__.py) reads it
MODEL = Ec2Target
