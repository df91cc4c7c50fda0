"""The ``target`` section: one model per provider, a discriminated union on ``provider``.

Each model owns its target's defaults and cross-field rules (storage IOPS per GB, serverless ACUs,
the EC2 templates' node counts), so a provider reads typed, already-checked fields, and its kind's
facts (spec/target_facts.py: timings, events and operations). EC2's model is spec/ec2_target.py.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import Field, field_validator, model_validator

from benchwright.spec._base import (
    AZ_ID_RE,
    AZ_NAME_RE,
    DB_IDENT_RE,
    ENV_NAME_RE,
    HOST_RE,
    VERSION_RE,
    StrictModel,
    matching,
    shown,
)

# EC2's model has its own module; re-exported here with the other kinds' models
from benchwright.spec.ec2_target import Ec2Target as Ec2Target
from benchwright.spec.ec2_target import Ec2Volume as Ec2Volume
from benchwright.spec.ec2_target import VolumeType as VolumeType
from benchwright.spec.monitoring import Monitoring
from benchwright.spec.server_settings import Kind as SettingsKind
from benchwright.spec.target_capacity import (
    ELASTICACHE_RESERVED,
    LOCAL_MAX_CONNECTIONS,
    RDS_RESERVED,
    cache_node_memory,
    rds_default_connections,
)
from benchwright.spec.target_facts import BurstStorage, TargetBase, TargetFacts

# The runner's Redis clients speak to one node (no Redis Cluster slot map or MOVED redirects): with
# several shards most keys would fail. Refused before anything is created rather than measured wrong.
ONE_SHARD = (
    "more than one shard needs a Redis Cluster client, which the runner does not have yet; "
    "use one shard (cluster_mode: false, shards: 1) and scale the node type instead"
)


class LocalTarget(TargetBase):
    """A throwaway server on 127.0.0.1 in a fresh data directory, removed afterwards."""

    provider: Literal["local"]
    port: int | None = Field(default=None, ge=1024, le=65535)  # None: a free port
    startup_timeout_s: float = Field(default=60.0, gt=0, le=600)
    facts = TargetFacts(
        provision_s=5.0, teardown_s=2.0, ready_timeout_s=120.0,
        events=("failover", "reboot"), operations=("dump_restore",), scale_key=None,
        owned=True,
    )  # fmt: skip

    def ready_timeout(self) -> float:
        """The spec's own ``startup_timeout_s`` where it writes one."""
        if "startup_timeout_s" in self.model_fields_set:
            return self.startup_timeout_s
        return self.facts.ready_timeout_s

    def default_max_connections(self) -> tuple[int, str] | None:
        """The throwaway server's configured maximum: the engine's own default."""
        value, reserved = LOCAL_MAX_CONNECTIONS[self.engine], self.reserved_connections()
        return (
            value,
            f"the local {self.engine} server's default max_connections {value} less {reserved} reserved",
        )


class EndpointTarget(TargetBase):
    """An existing database: nothing is created or deleted. The password comes from an env var."""

    provider: Literal["endpoint"]
    facts = TargetFacts(
        provision_s=1.0, teardown_s=0.0, ready_timeout_s=60.0,
        events=(), operations=(), scale_key=None,
        owned=False,  # someone else's database
    )  # fmt: skip
    hosts: list[str] = Field(min_length=1)  # host:port, several for client-side spreading
    database: str = Field(default="bench", min_length=1)  # SQL engines; Redis uses ``db``
    user: str = Field(default="bench", min_length=1)
    password_env: str | None = None  # name of the environment variable, never the password
    tls: bool = False
    db: int = Field(default=0, ge=0)  # redis logical database

    _names = field_validator("database", "user")(
        matching(DB_IDENT_RE, "a name of letters, digits, _ . - (starting with a letter or _)")
    )

    @field_validator("hosts")
    @classmethod
    def _hosts(cls, hosts: list[str]) -> list[str]:
        for i, h in enumerate(hosts):
            host, _, port = h.rpartition(":")
            if not host or not port.isdigit() or not 0 < int(port) < 65536:
                raise ValueError(f"hosts[{i}] {shown(h)} must be host:port")
            if len(host) > 253 or not HOST_RE.match(host):
                raise ValueError(f"hosts[{i}] {shown(h)}: the host must be a DNS name or an IP address")
        return hosts

    def named_hosts(self) -> list[str]:
        return self.hosts

    def usable_connections(self) -> tuple[int, str] | None:
        """Someone else's server: what it allows is not known from the spec (as the preflight has
        always held it, whatever its settings say)."""
        return None

    def usable_memory(self) -> tuple[int, str] | None:
        """As its connections: not known from the spec."""
        return None

    @field_validator("password_env")
    @classmethod
    def _password_env(cls, v: str | None) -> str | None:
        if v is not None and not ENV_NAME_RE.match(v):
            raise ValueError("must be the NAME of an environment variable (A-Z, 0-9, _), not the password")
        return v


StorageType = Literal["magnetic", "gp2", "gp3", "io1", "io2"]


class RdsStorage(StrictModel):
    type: StorageType = "gp3"
    size_gb: int = Field(ge=5, le=65536)
    iops: int | None = Field(default=None, ge=1000, le=256000)
    throughput_mbps: int | None = Field(default=None, ge=125, le=4000)
    # A forecast input (forecast/credits.py), not an AWS setting: the gp2 credit bucket's balance when
    # the target's first phase starts, in percent. Unset: full, as AWS starts every new gp2 volume. A
    # quick rehearsal writes the balance the full spec's forecast gives its measured phases, so a short
    # run stands for a long spec's drained volume (rehearse/credits_carry.py).
    burst_start_pct: float | None = Field(default=None, ge=0.0, le=100.0)

    @model_validator(mode="after")
    def _rules(self) -> RdsStorage:
        t, size, iops = self.type, self.size_gb, self.iops
        if self.burst_start_pct is not None and t != "gp2":
            raise ValueError(f"burst_start_pct is for gp2's credit bucket; {t} storage has none")
        if t == "magnetic":
            if iops is not None or self.throughput_mbps is not None:
                raise ValueError("magnetic storage takes no iops / throughput_mbps")
            if size > 3072:
                raise ValueError("magnetic storage is at most 3072 GB")
        if t in ("gp2", "gp3") and size < 20:
            raise ValueError(f"{t} storage needs size_gb >= 20")
        if t == "gp2" and (iops is not None or self.throughput_mbps is not None):
            raise ValueError(
                "gp2 IOPS follow the size (3 per GB, burst to 3000): drop iops, or use gp3/io1/io2"
            )
        if t in ("io1", "io2"):
            if iops is None:
                raise ValueError(f"{t} storage needs iops")
            if size < 100:
                raise ValueError(f"{t} storage needs size_gb >= 100")
            ratio = 50 if t == "io1" else 1000
            if iops > size * ratio:
                raise ValueError(f"{t} allows at most {ratio} IOPS per GB ({size * ratio} for {size} GB)")
        if t == "gp3" and iops is not None and size < 400 and iops != 3000:
            raise ValueError("gp3 below 400 GB has a fixed baseline of 3000 IOPS")
        return self


def _instance_class(prefix: str, *also: str) -> Any:
    def check(cls: Any, v: str) -> str:
        if v not in also and not re.match(rf"^{re.escape(prefix)}[a-z0-9-]+\.[a-z0-9]+$", v):
            raise ValueError(f"{shown(v)} is not an instance class of the form {prefix}FAMILY.SIZE")
        return v

    return classmethod(check)


class RdsTarget(TargetBase):
    """RDS for PostgreSQL / MySQL; ``settings`` become a DB parameter group."""

    provider: Literal["rds"]
    facts = TargetFacts(
        provision_s=900.0, teardown_s=600.0, ready_timeout_s=3600.0,
        events=("failover", "reboot", "scale"), scale_key="instance_class",
        operations=("snapshot_restore", "pitr"),
        owned=True,
    )  # fmt: skip
    engine: Literal["postgres", "mysql"]
    engine_version: str = Field(min_length=1)
    instance_class: str
    storage: RdsStorage
    multi_az: bool = False
    availability_zone: str | None = None
    database: str = "bench"
    username: str = "bench"
    # automated backups (days kept); 0 turns them off, which point-in-time recovery cannot do without
    backup_retention_days: int = Field(default=0, ge=0, le=35)
    monitoring: Monitoring | None = None  # Enhanced Monitoring / Performance Insights (spec/monitoring.py)

    _ic = field_validator("instance_class")(_instance_class("db."))
    _az = field_validator("availability_zone")(matching(AZ_NAME_RE, "an AZ name such as eu-west-1a"))
    _version = field_validator("engine_version")(matching(VERSION_RE, "an engine version such as 16.4"))
    _names = field_validator("database", "username")(
        matching(DB_IDENT_RE, "a name of letters, digits, _ . - (starting with a letter or _)")
    )

    @model_validator(mode="after")
    def _rules(self) -> RdsTarget:
        if self.multi_az and self.availability_zone:
            raise ValueError("availability_zone cannot be set with multi_az (RDS picks the standby's AZ)")
        if self.engine == "mysql" and self.storage.type == "io2" and self.storage.size_gb < 100:
            raise ValueError("io2 needs size_gb >= 100")
        return self

    def failover_needs(self) -> str | None:
        return None if self.multi_az else "target.multi_az: true"

    def operation_refusal(self, operation: str) -> tuple[str, str] | None:
        if operation == "pitr" and not self.backup_retention_days:
            reason = "pitr needs automated backups: set target.backup_retention_days to 1 or more"
            return "target.backup_retention_days", reason
        return None

    def reserved_connections(self) -> int:
        return RDS_RESERVED.get(self.engine, 0)

    def default_max_connections(self) -> tuple[int, str] | None:
        return rds_default_connections(
            self.provider, self.engine, self.instance_class, self.reserved_connections()
        )

    def burst_storage(self) -> BurstStorage | None:
        """Its storage: a gp2 bucket starts full, or at ``storage.burst_start_pct``."""
        s = self.storage
        start = 100.0 if s.burst_start_pct is None else s.burst_start_pct
        return BurstStorage(s.type, s.size_gb, s.iops, self.engine, "target.storage", start)

    def cpu_credit_class(self) -> str | None:
        return self.instance_class


class ServerlessV2(StrictModel):
    min_acu: float = Field(ge=0, le=256)
    max_acu: float = Field(ge=1, le=256)

    @model_validator(mode="after")
    def _range(self) -> ServerlessV2:
        if self.min_acu > self.max_acu:
            raise ValueError("min_acu must not exceed max_acu")
        if (self.min_acu * 2) % 1:
            raise ValueError("min_acu must be a multiple of 0.5")
        return self


class AuroraTarget(TargetBase):
    """Aurora PostgreSQL / MySQL: a cluster and its instances (``db.serverless`` for serverless v2)."""

    provider: Literal["aurora"]
    facts = TargetFacts(
        provision_s=1200.0, teardown_s=900.0, ready_timeout_s=3600.0,
        events=("failover", "reboot", "scale"), scale_key="instance_class",
        operations=("snapshot_restore", "pitr", "scale_out"),
        owned=True,
    )  # fmt: skip
    engine: Literal["postgres", "mysql"]
    engine_version: str = Field(min_length=1)
    instance_class: str = "db.serverless"
    instances: int = Field(default=1, ge=1, le=16)
    serverless_v2: ServerlessV2 | None = None
    storage_type: Literal["aurora", "aurora-iopt1"] = "aurora"
    availability_zone: str | None = None
    monitoring: Monitoring | None = None  # on each instance of the cluster (spec/monitoring.py)
    database: str = "bench"
    username: str = "bench"

    _ic = field_validator("instance_class")(_instance_class("db.", "db.serverless"))
    _az = field_validator("availability_zone")(matching(AZ_NAME_RE, "an AZ name such as eu-west-1a"))
    _version = field_validator("engine_version")(matching(VERSION_RE, "an engine version such as 16.4"))
    _names = field_validator("database", "username")(
        matching(DB_IDENT_RE, "a name of letters, digits, _ . - (starting with a letter or _)")
    )

    @model_validator(mode="after")
    def _rules(self) -> AuroraTarget:
        serverless = self.instance_class == "db.serverless"
        if serverless and self.serverless_v2 is None:
            raise ValueError("instance_class db.serverless needs serverless_v2: {min_acu, max_acu}")
        if self.serverless_v2 is not None and not serverless:
            raise ValueError("serverless_v2 needs instance_class: db.serverless")
        return self

    def reserved_connections(self) -> int:
        return RDS_RESERVED.get(self.engine, 0)

    def default_max_connections(self) -> tuple[int, str] | None:
        """As RDS's, from the instance class's memory; none for serverless (it scales with ACUs)."""
        return rds_default_connections(
            self.provider, self.engine, self.instance_class, self.reserved_connections()
        )


class ElastiCacheTarget(TargetBase):
    """An ElastiCache Redis / Valkey replication group pinned to an AZ."""

    provider: Literal["elasticache"]
    facts = TargetFacts(
        provision_s=900.0, teardown_s=600.0, ready_timeout_s=3600.0,
        events=("failover", "reboot", "scale"), operations=(), scale_key="node_type",
        owned=True,
    )  # fmt: skip
    engine: Literal["redis"]
    cache_engine: Literal["redis", "valkey"] = "redis"
    engine_version: str = Field(min_length=1)
    node_type: str
    replicas: int = Field(default=0, ge=0, le=5)
    availability_zone: str
    cluster_mode: bool = False
    shards: int = Field(default=1, ge=1, le=500)
    # Off unless written: what every ElastiCache run so far used (the provider's default was False
    # while this model said True); the model owns the default now.
    tls: bool = False

    _nt = field_validator("node_type")(_instance_class("cache."))
    _version = field_validator("engine_version")(matching(VERSION_RE, "an engine version such as 16.4"))

    @field_validator("availability_zone")
    @classmethod
    def _az(cls, v: str) -> str:
        if not (AZ_NAME_RE.match(v) or AZ_ID_RE.match(v)):
            raise ValueError(f"{shown(v)} is not an AZ name (eu-west-1a) or AZ id (euw1-az1)")
        return v

    @model_validator(mode="after")
    def _rules(self) -> ElastiCacheTarget:
        if self.shards > 1 and not self.cluster_mode:
            raise ValueError("shards > 1 needs cluster_mode: true")
        if self.cluster_mode:
            raise ValueError(f"cluster_mode: {ONE_SHARD}")
        return self

    def failover_needs(self) -> str | None:
        return None if self.replicas >= 1 else "target.replicas >= 1"

    def settings_kind(self) -> SettingsKind:
        return "cache"  # an ElastiCache parameter group

    def usable_memory(self) -> tuple[int, str] | None:
        """``settings.maxmemory``, else the nodes' memory less ElastiCache's default reserved share
        (reserved-memory-percent: for replication buffers and forks)."""
        written = super().usable_memory()
        if written is not None:
            return written
        return cache_node_memory(self.node_type, self.shards, ELASTICACHE_RESERVED, "ElastiCache")


class MemoryDbTarget(TargetBase):
    """A MemoryDB cluster (durable Redis-compatible)."""

    provider: Literal["memorydb"]
    facts = TargetFacts(
        provision_s=1200.0, teardown_s=900.0, ready_timeout_s=3600.0,
        events=("failover", "scale"), operations=(), scale_key="node_type",
        owned=True,
    )  # fmt: skip
    engine: Literal["redis"]
    cache_engine: Literal["redis", "valkey"] = "redis"
    engine_version: str = Field(min_length=1)
    node_type: str
    shards: int = Field(default=1, ge=1, le=500)
    replicas_per_shard: int = Field(default=1, ge=0, le=5)
    tls: Literal[True] = True  # MemoryDB always uses TLS

    @model_validator(mode="after")
    def _one_shard(self) -> MemoryDbTarget:
        if self.shards > 1:
            raise ValueError(f"shards: {ONE_SHARD}")
        return self

    def failover_needs(self) -> str | None:
        return None if self.replicas_per_shard >= 1 else "target.replicas_per_shard >= 1"

    def settings_kind(self) -> SettingsKind:
        return "cache"  # a MemoryDB parameter group

    def usable_memory(self) -> tuple[int, str] | None:
        """``settings.maxmemory``, else the nodes' memory (no reserved share taken off)."""
        return super().usable_memory() or cache_node_memory(self.node_type, self.shards)

    _nt = field_validator("node_type")(_instance_class("db."))
    _version = field_validator("engine_version")(matching(VERSION_RE, "an engine version such as 16.4"))


TargetSpec = Annotated[
    LocalTarget | EndpointTarget | RdsTarget | AuroraTarget | ElastiCacheTarget | MemoryDbTarget | Ec2Target,
    Field(discriminator="provider"),
]
PROVIDERS = ("local", "endpoint", "rds", "aurora", "elasticache", "memorydb", "ec2")
CLOUD_PROVIDERS = ("rds", "aurora", "elasticache", "memorydb", "ec2")
