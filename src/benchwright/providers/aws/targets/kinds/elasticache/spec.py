"""The ``target`` section of an ElastiCache replication group: engine, node type, replicas, its AZ.
The kind's own model (its descriptor names it: kind.py); it imports only the spec layer."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator, model_validator

from benchwright.spec._base import AZ_ID_RE, AZ_NAME_RE, VERSION_RE, matching, shown
from benchwright.spec.server_settings import Kind as SettingsKind
from benchwright.spec.target_capacity import ELASTICACHE_RESERVED, cache_node_memory
from benchwright.spec.target_facts import TargetBase, TargetFacts
from benchwright.spec.target_fields import ONE_SHARD, class_form


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

    _nt = field_validator("node_type")(class_form("cache."))
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


# the kind's model, as the registry (kinds/__init__.py) reads it
MODEL = ElastiCacheTarget
