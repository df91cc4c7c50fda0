"""The ``target`` section of a MemoryDB cluster: engine, node type, shards and replicas. The kind's
own model (its descriptor names it: kind.py); it imports only the spec layer."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator, model_validator

from benchwright.spec._base import VERSION_RE, matching
from benchwright.spec.server_settings import Kind as SettingsKind
from benchwright.spec.target_capacity import cache_node_memory
from benchwright.spec.target_facts import TargetBase, TargetFacts
from benchwright.spec.target_fields import ONE_SHARD, class_form


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

    _nt = field_validator("node_type")(class_form("db."))
    _version = field_validator("engine_version")(matching(VERSION_RE, "an engine version such as 16.4"))


# the kind's model, as the registry (kinds/__init__.py) reads it
MODEL = MemoryDbTarget
