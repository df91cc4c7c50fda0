"""The ``target`` section of an Aurora cluster: its engine, instances (serverless v2 or a class),
storage type and monitoring. The kind's own model (its descriptor names it: kind.py); it imports only
the spec layer."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator, model_validator

from benchwright.spec._base import AZ_NAME_RE, DB_IDENT_RE, VERSION_RE, StrictModel, matching
from benchwright.spec.monitoring import Monitoring
from benchwright.spec.target_capacity import RDS_RESERVED, rds_default_connections
from benchwright.spec.target_facts import TargetBase, TargetFacts
from benchwright.spec.target_fields import class_form


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

    _ic = field_validator("instance_class")(class_form("db.", "db.serverless"))
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


# the kind's model, as the registry (kinds/__init__.py) reads it
MODEL = AuroraTarget
