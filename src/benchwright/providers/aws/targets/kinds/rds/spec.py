"""The ``target`` section of an RDS instance: its engine, instance class, storage and monitoring. The
kind's own model (its descriptor names it: kind.py); it imports only the spec layer."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator, model_validator

from benchwright.spec._base import AZ_NAME_RE, DB_IDENT_RE, VERSION_RE, StrictModel, matching
from benchwright.spec.monitoring import Monitoring
from benchwright.spec.target_capacity import RDS_RESERVED, rds_default_connections
from benchwright.spec.target_facts import BurstStorage, TargetBase, TargetFacts
from benchwright.spec.target_fields import class_form

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

    _ic = field_validator("instance_class")(class_form("db."))
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


# the kind's model, as the registry (kinds/__init__.py) reads it
MODEL = RdsTarget
