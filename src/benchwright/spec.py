"""The benchmark spec: one YAML file says what to provision, where to run, what to drive, what to report.

Validation happens here, once, before anything is created: pydantic models with extra fields
forbidden, the target and its settings a discriminated union by ``provider``, cross-field rules in
model validators, then the semantic checks that need the workload registry (does the workload exist,
can this engine run it, are its properties valid). Every failure is a ``SpecError`` whose field is the
dotted path of the culprit (``workload.properties.readproportion``, ``target.storage.iops``).

A file holds either one benchmark or a suite (``suite: NAME`` + ``benchmarks: [...]``).
"""

from __future__ import annotations

import copy
import itertools
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal, get_args

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    ValidationError,
    field_validator,
    model_serializer,
    model_validator,
)

from benchwright.errors import CapabilityError, SpecError
from benchwright.experiments.models import EventSpec, OperationName
from benchwright.judge.validity import ValidityPolicy as JudgePolicy

Engine = Literal["postgres", "mysql", "redis"]
Scalar = str | int | float | bool
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,79}$")
_SETTING = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]*$")
_ENV_NAME = re.compile(r"^[A-Z_][A-Z0-9_]*$")
_AZ_NAME = re.compile(r"^[a-z]{2}(-gov)?-[a-z]+-\d[a-z]$")  # eu-west-1a
_AZ_ID = re.compile(r"^[a-z]{3,4}\d-az\d+$")  # euw1-az2
_SECRET_ARN = re.compile(r"^arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:\d{12}:secret:.+$")


def _numeric(annotation: Any) -> bool:
    """int / float (also inside Optional / unions), but not a bool field."""
    if annotation is bool:
        return False
    if annotation in (int, float):
        return True
    return any(_numeric(a) for a in get_args(annotation))


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    @model_validator(mode="before")
    @classmethod
    def _no_bool_as_number(cls, data: Any) -> Any:
        # pydantic's lax mode reads `threads: true` as 1; a boolean is never a count or a size
        if isinstance(data, dict):
            for name, field in cls.model_fields.items():
                value = data.get(name)
                if isinstance(value, bool) and _numeric(field.annotation):
                    raise ValueError(f"{name}: expected a number, got {str(value).lower()}")
        return data


# Settings a spec may not give a local server: where it listens, which files it reads or runs, its
# password. The tool sets these itself; from a spec they would open the server or the machine.
_RESERVED_SETTINGS = re.compile(
    r"^(include.*|bind|bind[-_]address|listen_addresses|port|unixsocket.*|unix_socket.*|socket|dir|"
    r"datadir|data_directory|tmpdir|pid[-_]file|dbfilename|logfile|log[-_]error|requirepass|masterauth|"
    r"protected[-_]mode|daemonize|rename-command|loadmodule|hba_file|ident_file|config_file|"
    r"archive_command|restore_command|shared_preload_libraries|local_preload_libraries|"
    r"session_preload_libraries|dynamic_library_path|ssl_.*_file|plugin[-_]load.*|plugin[-_]dir|"
    r"init[-_]file|secure[-_]file[-_]priv|general[-_]log[-_]file|slow[-_]query[-_]log[-_]file|"
    r"skip[-_]grant[-_]tables|user|aclfile)$",
    re.IGNORECASE,
)


def _settings_names(values: dict[str, Scalar]) -> dict[str, Scalar]:
    """Names of the form a config file takes; values typed scalars on one line (a newline or control
    character would add a directive of its own to redis.conf, postgresql.conf or my.cnf)."""
    for key, value in values.items():
        if not _SETTING.match(key):
            raise ValueError(f"invalid setting name {key!r}")
        if _RESERVED_SETTINGS.match(key):
            raise ValueError(f"{key}: set by Benchwright itself (where the server listens, its files)")
        if isinstance(value, str) and any(ord(c) < 32 or ord(c) == 127 for c in value):
            raise ValueError(f"{key}: a value must be one line without control characters")
        if isinstance(value, str) and len(value) > 1024:
            raise ValueError(f"{key}: a value is at most 1024 characters")
    return values


# ================================================================ targets
class _TargetBase(_Model):
    engine: Engine
    settings: dict[str, Scalar] = Field(default_factory=dict)  # server settings / parameter group

    _check_settings = field_validator("settings")(_settings_names)


class LocalTarget(_TargetBase):
    """A throwaway server on 127.0.0.1 in a fresh data directory, removed afterwards."""

    provider: Literal["local"]
    port: int | None = Field(default=None, ge=1024, le=65535)  # None: a free port
    startup_timeout_s: float = Field(default=60.0, gt=0, le=600)


class EndpointTarget(_TargetBase):
    """An existing database: nothing is created or deleted. The password comes from an env var."""

    provider: Literal["endpoint"]
    hosts: list[str] = Field(min_length=1)  # host:port, several for client-side spreading
    database: str | None = None
    user: str | None = None
    password_env: str | None = None  # name of the environment variable, never the password
    tls: bool = False
    db: int = Field(default=0, ge=0)  # redis logical database

    @field_validator("hosts")
    @classmethod
    def _hosts(cls, hosts: list[str]) -> list[str]:
        for i, h in enumerate(hosts):
            host, _, port = h.rpartition(":")
            if not host or not port.isdigit() or not 0 < int(port) < 65536:
                raise ValueError(f"hosts[{i}] {h!r} must be host:port")
        return hosts

    @field_validator("password_env")
    @classmethod
    def _password_env(cls, v: str | None) -> str | None:
        if v is not None and not _ENV_NAME.match(v):
            raise ValueError("must be the NAME of an environment variable (A-Z, 0-9, _), not the password")
        return v


StorageType = Literal["magnetic", "gp2", "gp3", "io1", "io2"]


class RdsStorage(_Model):
    type: StorageType = "gp3"
    size_gb: int = Field(ge=5, le=65536)
    iops: int | None = Field(default=None, ge=1000, le=256000)
    throughput_mbps: int | None = Field(default=None, ge=125, le=4000)

    @model_validator(mode="after")
    def _rules(self) -> RdsStorage:
        t, size, iops = self.type, self.size_gb, self.iops
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


def _instance_class(prefix: str) -> Any:
    def check(cls: Any, v: str) -> str:
        if not re.match(rf"^{re.escape(prefix)}[a-z0-9-]+\.[a-z0-9]+$", v):
            raise ValueError(f"{v!r} is not an instance class of the form {prefix}FAMILY.SIZE")
        return v

    return classmethod(check)


class RdsTarget(_TargetBase):
    """RDS for PostgreSQL / MySQL; ``settings`` become a DB parameter group."""

    provider: Literal["rds"]
    engine: Literal["postgres", "mysql"]
    engine_version: str = Field(min_length=1)
    instance_class: str
    storage: RdsStorage
    multi_az: bool = False
    availability_zone: str | None = None
    database: str = "bench"
    username: str = "bench"

    _ic = field_validator("instance_class")(_instance_class("db."))

    @model_validator(mode="after")
    def _rules(self) -> RdsTarget:
        if self.multi_az and self.availability_zone:
            raise ValueError("availability_zone cannot be set with multi_az (RDS picks the standby's AZ)")
        if self.engine == "mysql" and self.storage.type == "io2" and self.storage.size_gb < 100:
            raise ValueError("io2 needs size_gb >= 100")
        return self


class ServerlessV2(_Model):
    min_acu: float = Field(ge=0, le=256)
    max_acu: float = Field(ge=1, le=256)

    @model_validator(mode="after")
    def _range(self) -> ServerlessV2:
        if self.min_acu > self.max_acu:
            raise ValueError("min_acu must not exceed max_acu")
        if (self.min_acu * 2) % 1:
            raise ValueError("min_acu must be a multiple of 0.5")
        return self


class AuroraTarget(_TargetBase):
    """Aurora PostgreSQL / MySQL: a cluster and its instances (``db.serverless`` for serverless v2)."""

    provider: Literal["aurora"]
    engine: Literal["postgres", "mysql"]
    engine_version: str = Field(min_length=1)
    instance_class: str = "db.serverless"
    instances: int = Field(default=1, ge=1, le=16)
    serverless_v2: ServerlessV2 | None = None
    storage_type: Literal["aurora", "aurora-iopt1"] = "aurora"
    availability_zone: str | None = None
    database: str = "bench"
    username: str = "bench"

    _ic = field_validator("instance_class")(_instance_class("db."))

    @model_validator(mode="after")
    def _rules(self) -> AuroraTarget:
        serverless = self.instance_class == "db.serverless"
        if serverless and self.serverless_v2 is None:
            raise ValueError("instance_class db.serverless needs serverless_v2: {min_acu, max_acu}")
        if self.serverless_v2 is not None and not serverless:
            raise ValueError("serverless_v2 needs instance_class: db.serverless")
        return self


class ElastiCacheTarget(_TargetBase):
    """An ElastiCache Redis / Valkey replication group pinned to an AZ."""

    provider: Literal["elasticache"]
    engine: Literal["redis"]
    cache_engine: Literal["redis", "valkey"] = "redis"
    engine_version: str = Field(min_length=1)
    node_type: str
    replicas: int = Field(default=0, ge=0, le=5)
    availability_zone: str
    cluster_mode: bool = False
    shards: int = Field(default=1, ge=1, le=500)
    tls: bool = True

    _nt = field_validator("node_type")(_instance_class("cache."))

    @field_validator("availability_zone")
    @classmethod
    def _az(cls, v: str) -> str:
        if not (_AZ_NAME.match(v) or _AZ_ID.match(v)):
            raise ValueError(f"{v!r} is not an AZ name (eu-west-1a) or AZ id (euw1-az1)")
        return v

    @model_validator(mode="after")
    def _rules(self) -> ElastiCacheTarget:
        if self.shards > 1 and not self.cluster_mode:
            raise ValueError("shards > 1 needs cluster_mode: true")
        return self


class MemoryDbTarget(_TargetBase):
    """A MemoryDB cluster (durable Redis-compatible)."""

    provider: Literal["memorydb"]
    engine: Literal["redis"]
    cache_engine: Literal["redis", "valkey"] = "redis"
    engine_version: str = Field(min_length=1)
    node_type: str
    shards: int = Field(default=1, ge=1, le=500)
    replicas_per_shard: int = Field(default=1, ge=0, le=5)
    tls: Literal[True] = True  # MemoryDB always uses TLS

    _nt = field_validator("node_type")(_instance_class("db."))


VolumeType = Literal["standard", "gp2", "gp3", "io1", "io2", "st1", "sc1"]


class Ec2Volume(_Model):
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
        if self.type == "io1" and self.iops and self.iops > self.size_gb * 50:
            raise ValueError(f"io1 allows at most 50 IOPS per GB ({self.size_gb * 50} for {self.size_gb} GB)")
        return self


class Ec2Target(_TargetBase):
    """Self-managed on EC2 from a user-data template (experiment 1's YugabyteDB, experiment 4's ARDB)."""

    provider: Literal["ec2"]
    template: Literal["yugabytedb-3node", "redis-protocol"]
    instance_type: str
    volume: Ec2Volume | None = None  # None: the instance store (i3, m6id ...) or the root volume
    nodes: int = Field(default=1, ge=1, le=9)
    replication_factor: int = Field(default=1, ge=1, le=7)
    version: str | None = None  # e.g. YugabyteDB 2024.2.0.0, Redis 7.2
    server: Literal["redis", "ardb", "valkey", "keydb"] | None = None  # redis-protocol template only
    availability_zones: list[str] | None = None  # one per node; None = spread over the VPC's AZs
    presplit: list[str] | None = None  # yugabytedb: SPLIT AT VALUES for usertable

    @field_validator("instance_type")
    @classmethod
    def _it(cls, v: str) -> str:
        if not re.match(r"^[a-z][a-z0-9-]*\.[a-z0-9]+$", v):
            raise ValueError(f"{v!r} is not an EC2 instance type such as m6i.4xlarge")
        return v

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


TargetSpec = Annotated[
    LocalTarget | EndpointTarget | RdsTarget | AuroraTarget | ElastiCacheTarget | MemoryDbTarget | Ec2Target,
    Field(discriminator="provider"),
]
PROVIDERS = ("local", "endpoint", "rds", "aurora", "elasticache", "memorydb", "ec2")
CLOUD_PROVIDERS = ("rds", "aurora", "elasticache", "memorydb", "ec2")


# ================================================================ runner
FARGATE_CPU = (0.25, 0.5, 1, 2, 4, 8, 16)


class RunnerSize(_Model):
    cpu: float | None = Field(default=None, gt=0)  # vCPU (Fargate)
    memory_mb: int | None = Field(default=None, ge=512)
    instance_type: str | None = None  # EC2 runner


class RunnerSpec(_Model):
    """Where the load generator runs. Placement is relative to the target's primary, or a named AZ."""

    platform: Literal["local", "fargate", "ec2"] = "local"
    placement: str = "same-az"
    count: int = Field(default=1, ge=1, le=64)
    size: RunnerSize = Field(default_factory=RunnerSize)
    processes: int | None = Field(default=None, ge=1, le=256)  # worker processes per runner

    @field_validator("placement")
    @classmethod
    def _placement(cls, v: str) -> str:
        if v not in ("same-az", "other-az") and not (_AZ_NAME.match(v) or _AZ_ID.match(v)):
            raise ValueError(f"{v!r}: use same-az, other-az, an AZ name (eu-west-1a) or an AZ id (euw1-az1)")
        return v

    @model_validator(mode="after")
    def _rules(self) -> RunnerSpec:
        size = self.size
        if self.platform == "fargate":
            if size.instance_type:
                raise ValueError("size.instance_type is for platform ec2; Fargate takes cpu and memory_mb")
            if size.cpu is not None and size.cpu not in FARGATE_CPU:
                raise ValueError(
                    f"size.cpu {size.cpu} is not a Fargate size ({', '.join(map(str, FARGATE_CPU))})"
                )
            if (
                size.cpu
                and size.memory_mb
                and not size.cpu * 2048 <= size.memory_mb <= max(size.cpu * 8192, 2048)
            ):
                raise ValueError(
                    f"size.memory_mb {size.memory_mb} is outside Fargate's range for {size.cpu} vCPU"
                )
        if self.platform == "ec2" and not size.instance_type:
            raise ValueError("platform ec2 needs size.instance_type")
        if self.platform == "local":
            if self.count != 1:
                raise ValueError("a local run uses one runner process (count: 1); use more threads instead")
            if self.placement != "same-az":
                raise ValueError("placement applies to cloud runners (platform fargate | ec2)")
        return self


# ================================================================ workload
class PhaseSpec(_Model):
    """One phase. Unset values come from the workload's properties (threadcount, target ...)."""

    enabled: bool = True
    threads: int | None = Field(default=None, ge=1, le=4096)
    target_rate: float | None = Field(default=None, gt=0)  # operations per second, all threads
    operation_count: int | None = Field(default=None, ge=1)
    duration_s: float | None = Field(default=None, gt=0, le=86400)
    properties: dict[str, Scalar] = Field(default_factory=dict)  # overrides for this phase only


class Phases(_Model):
    """The phases. An unwritten load / run is "the workload's default": it runs only if the workload
    has that phase, whereas a written one must exist (``load: null`` switches it off)."""

    load: PhaseSpec | None = Field(default_factory=PhaseSpec)
    warmup: PhaseSpec | None = None
    run: PhaseSpec | None = Field(default_factory=PhaseSpec)

    @model_serializer(mode="wrap")
    def _dump(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        # Leave out the defaulted load / run so that every dump (model_dump(), JSON, the AWS cell
        # state) re-validates to the same spec: written out, a default load phase would be rejected
        # by a workload without one (redis-bench, sql).
        data: dict[str, Any] = handler(self)
        for name in ("load", "run"):
            if name not in self.model_fields_set:
                data.pop(name, None)
        return data

    @model_validator(mode="after")
    def _rules(self) -> Phases:
        if (
            self.warmup is not None
            and self.warmup.enabled
            and not (self.warmup.duration_s or self.warmup.operation_count)
        ):
            raise ValueError("warmup needs duration_s or operation_count")
        if not any(p is not None and p.enabled for p in (self.load, self.warmup, self.run)):
            raise ValueError("at least one phase must be enabled")
        return self


class WorkloadSpec(_Model):
    name: str = Field(min_length=1)
    # Packaged YCSB workloads (workloada..f). Property files of the user's are read when the spec is
    # loaded from a file (benchwright.specguard.inline_files) and arrive here inlined in properties.
    files: list[str] = Field(default_factory=list)
    properties: dict[str, Scalar] = Field(default_factory=dict)
    phases: Phases = Field(default_factory=Phases)

    @field_validator("files")
    @classmethod
    def _packaged_only(cls, files: list[str]) -> list[str]:
        from benchwright.runner.workloads.ycsb.properties import PACKAGED

        for i, name in enumerate(files):
            if name not in PACKAGED:
                raise ValueError(
                    f"files[{i}] {name!r}: only packaged workloads ({', '.join(PACKAGED)}) here; a "
                    "property file is read from the spec's directory when the spec is loaded from a file"
                )
        return files


# ================================================================ policy, notify
class ValidityPolicy(JudgePolicy):
    """The judge's thresholds (benchwright.judge.validity, where the defaults live) plus the verdict's."""

    min_effect: float = Field(default=0.05, gt=0, lt=1)  # smallest relative change a verdict calls a change


class SlackSpec(_Model):
    webhook_env: str | None = None  # environment variable holding the webhook URL
    webhook_secret_arn: str | None = None  # Secrets Manager secret holding it
    channel: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _no_url(cls, data: Any) -> Any:
        if isinstance(data, dict):
            for key, value in data.items():
                if isinstance(value, str) and value.startswith(("http://", "https://")):
                    raise ValueError(
                        f"{key}: never put the webhook URL in the spec; name an environment variable "
                        "(webhook_env) or a Secrets Manager ARN (webhook_secret_arn)"
                    )
        return data

    @model_validator(mode="after")
    def _one(self) -> SlackSpec:
        if (self.webhook_env is None) == (self.webhook_secret_arn is None):
            raise ValueError("set exactly one of webhook_env and webhook_secret_arn")
        if self.webhook_env is not None and not _ENV_NAME.match(self.webhook_env):
            raise ValueError("webhook_env must be an environment variable NAME (A-Z, 0-9, _)")
        if self.webhook_secret_arn is not None and not _SECRET_ARN.match(self.webhook_secret_arn):
            raise ValueError("webhook_secret_arn must be a Secrets Manager secret ARN")
        return self


class NotifySpec(_Model):
    """When the finish stage sends the run's message (benchwright.stages.finish.should_notify):
    always; success (the run succeeded); failure (failed or aborted); regression (slower than its
    history, or failed or aborted)."""

    slack: SlackSpec | None = None
    on: Literal["always", "success", "failure", "regression"] = "always"

    @model_validator(mode="before")
    @classmethod
    def _yaml_on(cls, data: Any) -> Any:
        """YAML 1.1 (PyYAML) reads a bare ``on:`` key as the boolean True: ``notify: {on: failure}``
        arrives as ``{True: "failure"}``. Map that key back to "on"."""
        if isinstance(data, dict) and True in data:
            data = dict(data)
            value = data.pop(True)
            if "on" in data:
                raise ValueError("'on' is given twice")
            data["on"] = value
        return data


# ================================================================ the spec
class BenchmarkSpec(_Model):
    name: str
    description: str = ""
    target: TargetSpec
    runner: RunnerSpec = Field(default_factory=RunnerSpec)
    workload: WorkloadSpec
    matrix: dict[str, list[Any]] = Field(default_factory=dict)
    repeats: int = Field(default=1, ge=1, le=100)
    validity: ValidityPolicy = Field(default_factory=ValidityPolicy)
    notify: NotifySpec = Field(default_factory=NotifySpec)
    tags: dict[str, str] = Field(default_factory=dict)
    events: list[EventSpec] = Field(default_factory=list, max_length=20)  # experiments/models.py
    operations: list[OperationName] = Field(default_factory=list, max_length=10)  # after the run phase

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        if not _NAME.match(v):
            raise ValueError("use letters, digits, '.', '_' and '-' (at most 80 characters)")
        return v

    @field_validator("tags")
    @classmethod
    def _tags(cls, tags: dict[str, str]) -> dict[str, str]:
        for k, v in tags.items():
            if not re.match(r"^[A-Za-z0-9_.:/=+@-]{1,128}$", k) or len(v) > 256:
                raise ValueError(
                    f"tag {k!r}: keys are 1-128 of [A-Za-z0-9_.:/=+@-], values at most 256 chars"
                )
        return tags

    @field_validator("matrix")
    @classmethod
    def _matrix(cls, matrix: dict[str, list[Any]]) -> dict[str, list[Any]]:
        for path, values in matrix.items():
            if not values:
                raise ValueError(f"{path}: give at least one value")
            if is_zip(path):
                _check_zip(values)
                continue
            if path.split(".")[0] in ("name", "matrix", "repeats"):
                raise ValueError(f"{path}: cannot be varied in a matrix")
        return matrix

    @model_validator(mode="after")
    def _placement(self) -> BenchmarkSpec:
        provider = self.target.provider
        if provider == "local" and self.runner.platform != "local":
            raise ValueError("runner.platform: a local target is reachable only from a local runner")
        if provider in CLOUD_PROVIDERS and self.runner.platform == "local":
            raise ValueError(f"runner.platform: a {provider} target needs a cloud runner (fargate | ec2)")
        return self

    # -------------------------------------------------------------------------------------------
    @property
    def is_local(self) -> bool:
        return self.target.provider in ("local", "endpoint") and self.runner.platform == "local"


class SuiteSpec(_Model):
    suite: str
    description: str = ""
    benchmarks: list[BenchmarkSpec] = Field(min_length=1)

    @model_validator(mode="after")
    def _unique(self) -> SuiteSpec:
        names = [b.name for b in self.benchmarks]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"benchmark names must be unique: {', '.join(dupes)}")
        return self


# ================================================================ errors -> SpecError
def _loc_path(loc: tuple[Any, ...]) -> str:
    parts: list[str] = []
    for i, item in enumerate(loc):
        if isinstance(item, int):
            parts[-1:] = [f"{parts[-1]}[{item}]"] if parts else [f"[{item}]"]
            continue
        # the discriminated union puts the provider tag in the location: target.rds.storage -> target.storage
        if i > 0 and loc[i - 1] == "target" and item in PROVIDERS:
            continue
        if item.startswith("function-") or item in ("tagged-union[...]",):
            continue
        parts.append(str(item))
    return ".".join(parts)


def _from_validation(exc: ValidationError, prefix: str = "") -> SpecError:
    errors = exc.errors(include_url=False)
    first = errors[0]
    field = _loc_path(tuple(first["loc"]))
    message = first["msg"].removeprefix("Value error, ")
    if first["type"] == "extra_forbidden":
        message = "unknown field (not allowed here)"
    elif first["type"] == "union_tag_invalid":
        message = f"unknown provider (one of {', '.join(PROVIDERS)})"
    elif first["type"] == "union_tag_not_found":
        field = f"{field}.provider" if field else "provider"
        message = f"missing (one of {', '.join(PROVIDERS)})"
    if len(errors) > 1:
        message += f" (and {len(errors) - 1} more problem{'s' if len(errors) > 2 else ''})"
    full = ".".join(p for p in (prefix, field) if p)
    return SpecError(full, message)


# ================================================================ loading
def _read_yaml(path: str | Path) -> Any:
    from benchwright.yamlload import load_file

    return load_file(path)


def _prepare(data: Any, prefix: str, files_root: Path | None) -> Any:
    """The raw-data guards (no secrets, bounded matrix) and the workload files inlined."""
    from benchwright.specguard import check_cells, check_no_secrets, inline_files

    check_no_secrets(data, prefix)
    check_cells(data, prefix)
    return inline_files(data, files_root, prefix)


def parse_spec(data: Any, prefix: str = "", files_root: Path | None = None) -> BenchmarkSpec:
    """Validate a mapping as a benchmark spec, including the workload checks.

    ``files_root``: the directory property files in ``workload.files`` are read from (the spec's
    own directory, or --files-root); None (the API, a stored spec) allows packaged workloads only."""
    if not isinstance(data, dict):
        raise SpecError(prefix, "a spec must be a mapping")
    data = _prepare(data, prefix, files_root)
    try:
        spec = BenchmarkSpec.model_validate(data)
    except ValidationError as exc:
        raise _from_validation(exc, prefix) from None
    check_workload(spec, prefix)
    for cell in expand_matrix(spec, prefix=prefix):
        if cell.parameters:
            check_workload(cell.spec, prefix)
    return spec


def parse_suite(data: Any, files_root: Path | None = None) -> SuiteSpec:
    if isinstance(data, dict) and "suite" in data:
        benchmarks = data.get("benchmarks")
        if not isinstance(benchmarks, list) or not benchmarks:
            raise SpecError("benchmarks", "a suite needs a non-empty list of benchmarks")
        prepared = []
        for i, b in enumerate(benchmarks):
            if isinstance(b, dict):
                b = _prepare(b, f"benchmarks[{i}]", files_root)
            parse_spec(b, prefix=f"benchmarks[{i}]")
            prepared.append(b)
        try:
            return SuiteSpec.model_validate({**data, "benchmarks": prepared})
        except ValidationError as exc:
            raise _from_validation(exc) from None
    spec = parse_spec(data, files_root=files_root)
    return SuiteSpec(suite=spec.name, description=spec.description, benchmarks=[spec])


def load_spec(path: str | Path, files_root: Path | None = None) -> BenchmarkSpec:
    """One benchmark from a YAML file (a suite file must hold exactly one benchmark)."""
    suite = load_suite(path, files_root)
    if len(suite.benchmarks) != 1:
        raise SpecError(
            "benchmarks", f"{path} is a suite of {len(suite.benchmarks)} benchmarks; use load_suite"
        )
    return suite.benchmarks[0]


def load_suite(path: str | Path, files_root: Path | None = None) -> SuiteSpec:
    """A suite from a YAML file; a plain benchmark file becomes a suite of one. Property files are
    read from ``files_root`` (default: the spec's directory), nowhere else."""
    root = Path(files_root) if files_root is not None else Path(path).parent
    return parse_suite(_read_yaml(path), root)


# ================================================================ workload checks
def _str_props(values: dict[str, Scalar]) -> dict[str, str]:
    return {k: (str(v).lower() if isinstance(v, bool) else str(v)) for k, v in values.items()}


def spec_dict(spec: BenchmarkSpec) -> dict[str, Any]:
    """The spec as plain data, only what was written: re-validating it gives the same spec (defaults
    stay defaults, so a default load phase is still skipped for a workload without one)."""
    return spec.model_dump(mode="json", exclude_unset=True)


def enabled_phases(spec: BenchmarkSpec) -> list[str]:
    """Phases to run, in order: those enabled; a default (unwritten) load / run only if the workload has it."""
    from benchwright.runner.workloads.base import workload_class

    supported = workload_class(spec.workload.name).phases
    written = spec.workload.phases.model_fields_set
    out: list[str] = []
    for name in ("load", "warmup", "run"):
        p = getattr(spec.workload.phases, name)
        if p is None or not p.enabled:
            continue
        if name != "warmup" and name not in written and name not in supported:
            continue
        out.append(name)
    return out


def workload_properties(spec: BenchmarkSpec, phase: str | None = None) -> dict[str, str]:
    """The workload's properties: YCSB property files, then the spec's properties, then phase overrides."""
    props = _str_props(spec.workload.properties)
    if spec.workload.files:
        from benchwright.runner.workloads.ycsb.properties import load_properties

        props = load_properties(list(spec.workload.files), props)
    if phase is not None:
        p = getattr(spec.workload.phases, phase)
        if p is not None:
            props.update(_str_props(p.properties))
    return props


def _requalify(exc: SpecError, prefix: str) -> SpecError:
    field = exc.field or ""
    if field and not field.startswith(("workload.", "target.")) and ":" not in field:
        field = f"workload.properties.{field}"
    elif not field:
        field = "workload.properties"
    full = ".".join(p for p in (prefix, field) if p)
    new = type(exc).__new__(type(exc))
    SpecError.__init__(new, full, exc.detail)
    return new


def _check_driver(spec: BenchmarkSpec, props: dict[str, str], q: Any) -> None:
    """Driver settings in the properties (redis.datatype ...) are checked now, not in the runner.
    Constructing a driver does not connect."""
    from benchwright.runner.drivers import driver_class

    try:
        placeholder = {
            "postgres.url": "postgresql://check@127.0.0.1:5432/check",
            "mysql.url": "mysql://check@127.0.0.1:3306/check",
        }  # the target's come later
        driver_class(spec.target.engine)({**placeholder, **props}, 0)
    except SpecError as exc:
        raise SpecError(
            q(f"workload.properties.{exc.field}" if exc.field else "workload.properties"), exc.detail
        ) from None
    except Exception:  # anything else is for the runner to report against the real server
        return


def _check_known(spec: BenchmarkSpec, prefix: str) -> None:
    """Keys in Benchwright's own namespaces (tpcc., redisbench., redis. ...) must exist: a typo is an
    error with a suggestion, not a silently measured default."""
    from benchwright.runner.workloads.known_keys import check_known_keys

    sources = [("workload.properties", _str_props(spec.workload.properties))]
    for name in ("load", "warmup", "run"):
        p = getattr(spec.workload.phases, name)
        if p is not None:
            sources.append((f"workload.phases.{name}.properties", _str_props(p.properties)))
    for where, props in sources:
        try:
            check_known_keys(props)
        except SpecError as exc:
            full = ".".join(x for x in (prefix, where, exc.field) if x)
            raise SpecError(full, exc.detail) from None


def check_workload(spec: BenchmarkSpec, prefix: str = "") -> list[str]:
    """Registry, capability and property checks; returns the workload's warnings."""
    from benchwright.runner.workloads.base import check_capability, workload_class

    def q(field: str) -> str:
        return ".".join(p for p in (prefix, field) if p)

    try:
        cls = workload_class(spec.workload.name)
    except SpecError as exc:
        raise SpecError(q("workload.name"), exc.detail) from None
    try:
        check_capability(spec.workload.name, spec.target.engine)
    except CapabilityError as exc:
        raise CapabilityError(q("target.engine"), exc.detail) from None
    for phase in spec.workload.phases.model_fields_set & {"load", "run"}:
        p = getattr(spec.workload.phases, phase)
        if p is not None and p.enabled and phase not in (*cls.phases, *cls.optional_phases):
            raise SpecError(q(f"workload.phases.{phase}"), f"workload {cls.name!r} has no {phase} phase")
    count = spec.runner.count
    if count > 1 and cls.name != "ycsb" and "load" in enabled_phases(spec):
        raise SpecError(
            q("runner.count"),
            f"only the YCSB load is split between runners: {count} runners would each load the whole "
            f"{cls.name} dataset. Load with one runner, or disable workload.phases.load and load beforehand",
        )
    from benchwright.experiments.checks import check_experiments

    check_experiments(spec, q)
    warnings: list[str] = []
    try:
        props = workload_properties(spec)
    except SpecError as exc:
        raise _requalify(exc, prefix) if ":" not in (exc.field or "") else exc from None
    _check_known(spec, prefix)
    _check_driver(spec, props, q)
    _check_native_tool(spec, props, q)
    validate = getattr(cls, "validate_properties", None)
    if validate is not None:
        try:
            warnings = list(validate(props) or [])
        except SpecError as exc:
            raise _requalify(exc, prefix) from None
    else:
        try:
            cls(props)
        except SpecError as exc:
            raise _requalify(exc, prefix) from None
    return warnings


NATIVE_TOOLS = {"pgbench": ("tpcb",), "sysbench": ("oltp",), "redis-benchmark": ("redis-bench",)}


def _check_native_tool(spec: BenchmarkSpec, props: dict[str, str], q: Any) -> None:
    """``native.tool``: the phases are measured by that tool from the same settings; it must be one that
    runs this workload, and be installed where the runner runs (the runner image has all of them)."""
    tool = props.get("native.tool")
    if tool is None:
        return
    field = q("workload.properties.native.tool")
    if tool not in NATIVE_TOOLS:
        raise SpecError(field, f"unknown tool {tool!r} (one of {', '.join(NATIVE_TOOLS)})")
    if spec.workload.name not in NATIVE_TOOLS[tool]:
        raise SpecError(field, f"{tool} runs workload {NATIVE_TOOLS[tool][0]!r}, not {spec.workload.name!r}")
    if spec.is_local:
        import shutil

        if shutil.which(tool) is None:
            raise SpecError(field, f"{tool} is not on PATH on this machine (install it, or drop native.tool)")


# ================================================================ matrix
ZIP = "zip"  # matrix key whose entries set several paths together (more links: zip_size, zip_2 ...)


def is_zip(path: str) -> bool:
    return path == ZIP or path.startswith(ZIP + "_")


@dataclass(frozen=True)
class Cell:
    cell_id: str
    parameters: dict[str, Any]
    spec: BenchmarkSpec


def _short(path: str) -> str:
    return split_path(path)[-1]


FREE_FORM = ("properties", "settings")  # mappings whose keys may themselves contain dots (redis.datatype)


def split_path(path: str) -> list[str]:
    """``workload.properties.redis.datatype`` -> [workload, properties, redis.datatype]."""
    keys = path.split(".")
    for i, key in enumerate(keys[:-1]):
        if key in FREE_FORM:
            return [*keys[: i + 1], ".".join(keys[i + 1 :])]
    return keys


def _set_path(data: dict[str, Any], path: str, value: Any, prefix: str) -> None:
    """Set a field path in the nested spec data, creating mappings that were left to their defaults."""
    keys = split_path(path)
    node: Any = data
    for i, key in enumerate(keys[:-1]):
        if not isinstance(node, dict):
            raise SpecError(f"{prefix}matrix.{path}", f"{'.'.join(keys[:i])} is not a mapping")
        if key not in node or node[key] is None:
            node[key] = {}
        node = node[key]
    if not isinstance(node, dict):
        raise SpecError(f"{prefix}matrix.{path}", f"{'.'.join(keys[:-1])} is not a mapping")
    node[keys[-1]] = value


def _fmt(value: Any) -> str:
    """A matrix value as it appears in a cell id: lists joined with +, mappings as k=v/k=v."""
    if isinstance(value, list):
        return "+".join(_fmt(v) for v in value)
    if isinstance(value, dict):
        return "/".join(f"{k}={_fmt(v)}" for k, v in value.items())
    return str(value)


def _check_zip(values: list[Any]) -> None:
    """``matrix.zip``: a list of mappings, each a set of paths that vary together (linked axes)."""
    keys: set[str] | None = None
    for i, entry in enumerate(values):
        if not isinstance(entry, dict) or not entry:
            raise ValueError(f"zip[{i}]: a mapping of field paths to values, e.g. {{redis.datatype: hash}}")
        if keys is not None and set(entry) != keys:
            raise ValueError(f"zip[{i}]: every entry names the same paths ({', '.join(sorted(keys))})")
        keys = set(entry)
        for path in entry:
            if path.split(".")[0] in ("name", "matrix", "repeats"):
                raise ValueError(f"zip[{i}].{path}: cannot be varied in a matrix")


def _axes(matrix: dict[str, list[Any]]) -> list[list[dict[str, Any]]]:
    """Each matrix axis as its list of {path: value} settings; a ``zip`` axis sets several at once."""
    return [
        [dict(v) for v in values] if is_zip(path) else [{path: v} for v in values]
        for path, values in matrix.items()
    ]


def expand_matrix(spec: BenchmarkSpec, prefix: str = "") -> list[Cell]:
    """Every combination of the matrix values, each a concrete validated spec (repeats not expanded).

    ``matrix.zip`` links axes: its entries vary together (datatype string with fieldcount 1, hash with
    10) and combine with the other axes like one axis."""
    if not spec.matrix:
        return [Cell("default", {}, spec)]
    pre = f"{prefix}." if prefix else ""
    axes = _axes(spec.matrix)
    paths = list(dict.fromkeys(p for axis in axes for setting in axis for p in setting))
    base = spec_dict(spec)
    base.pop("matrix", None)
    cells: list[Cell] = []
    shorts = [_short(p) for p in paths]
    names = dict(zip(paths, shorts if len(set(shorts)) == len(shorts) else paths, strict=True))
    for combo in itertools.product(*axes):
        settings = {p: v for setting in combo for p, v in setting.items()}
        data = copy.deepcopy(base)
        for path, value in settings.items():
            _set_path(data, path, value, pre)
        try:
            concrete = BenchmarkSpec.model_validate(data)
        except ValidationError as exc:
            err = _from_validation(exc)
            values = ", ".join(f"{p}={v}" for p, v in settings.items())
            raise SpecError(f"{pre}{err.field}", f"{err.detail} (matrix cell {values})") from None
        cell_id = ",".join(f"{names[p]}={_fmt(v)}" for p, v in settings.items())
        cells.append(Cell(cell_id, settings, concrete))
    return cells


# ================================================================ duration estimate
PROVISION_S = {
    "local": 5.0,
    "endpoint": 1.0,
    "rds": 900.0,
    "aurora": 1200.0,
    "elasticache": 900.0,
    "memorydb": 1200.0,
    "ec2": 420.0,
}
TEARDOWN_S = {
    "local": 2.0,
    "endpoint": 0.0,
    "rds": 600.0,
    "aurora": 900.0,
    "elasticache": 600.0,
    "memorydb": 900.0,
    "ec2": 120.0,
}
ASSUMED_OPS_PER_S = 5000.0  # an unpaced phase bounded only by its operation count


def phase_seconds(spec: BenchmarkSpec, phase: str) -> float:
    p = getattr(spec.workload.phases, phase)
    if p is None or not p.enabled or phase not in enabled_phases(spec):
        return 0.0
    props = _str_props({**spec.workload.properties, **p.properties})
    duration = p.duration_s or _float(props.get("maxexecutiontime"))
    count = p.operation_count or _float(props.get("recordcount" if phase == "load" else "operationcount"))
    rate = p.target_rate or _float(props.get("target")) or ASSUMED_OPS_PER_S
    by_count = count / rate if count else None
    if spec.workload.name == "redis-bench" and props.get("redisbench.requests"):  # -n per test
        tests = len([t for t in props.get("redisbench.tests", "set,get").split(",") if t.strip()])
        count = (_float(props["redisbench.requests"]) or 0.0) * max(tests, 1)
        by_count = count / rate
    if phase == "load" and not p.operation_count:
        from benchwright.experiments.sizing import load_seconds

        by_count = load_seconds(spec.workload.name, workload_properties(spec, "load")) or by_count
    if duration and by_count:
        return min(duration, by_count)
    return duration or by_count or 60.0


def _float(v: str | None) -> float | None:
    try:
        return float(v) if v else None
    except ValueError:
        return None


def cell_seconds(spec: BenchmarkSpec) -> float:
    provider = spec.target.provider
    phases = sum(phase_seconds(spec, ph) for ph in ("load", "warmup", "run"))
    return PROVISION_S[provider] + phases + TEARDOWN_S[provider] + 3.0  # runner start, judge, store


def estimate_duration(spec: BenchmarkSpec) -> float:
    """Seconds for the whole spec: every matrix cell times the repeats, run one after another."""
    return sum(cell_seconds(c.spec) for c in expand_matrix(spec)) * spec.repeats
