"""What a target's server holds, from its spec alone: connections and memory (issue 28).

The kinds' spec models (providers/aws/targets/kinds/NAME/spec.py, spec/targets.py) answer the
capacity preflight (experiments/capacity.py) from these tables, so the preflight asks the target
instead of keeping a table by provider, and the spec layer needs nothing above it. Instance memory comes from a table of
the common classes (AWS's published sizes); an unknown class gives None, and the check is skipped
rather than guessed.
"""

from __future__ import annotations

import re
from typing import Any

GIB = 1024**3

# Engine defaults where nothing else says (PostgreSQL 15-17, MariaDB 10.x/11.x, Redis 7).
LOCAL_MAX_CONNECTIONS = {"postgres": 100, "mysql": 151, "redis": 10000}
RESERVED = {"postgres": 3, "mysql": 0, "redis": 32}  # superuser_reserved_connections; Redis keeps 32 fds
RDS_RESERVED = {"postgres": 3 + 2, "mysql": 1}  # + rds_superuser_reserved_connections / the rdsadmin slot

# vCPUs of a size and GiB per vCPU of a family: enough to derive the memory of db.* / EC2 classes.
SIZE_VCPU = {
    "large": 2, "xlarge": 4, "2xlarge": 8, "4xlarge": 16, "8xlarge": 32, "12xlarge": 48,
    "16xlarge": 64, "24xlarge": 96, "32xlarge": 128, "48xlarge": 192,
}  # fmt: skip
FAMILY_GIB_PER_VCPU = {"m": 4.0, "r": 8.0, "x": 16.0, "c": 2.0, "z": 8.0}
BURSTABLE_GIB = {"micro": 1.0, "small": 2.0, "medium": 4.0, "large": 8.0, "xlarge": 16.0, "2xlarge": 32.0}
# ElastiCache / MemoryDB nodes report less memory than the instance (AWS's node type tables).
CACHE_GIB = {
    "t3.micro": 0.5, "t4g.micro": 0.5, "t3.small": 1.37, "t4g.small": 1.37, "t3.medium": 3.09,
    "t4g.medium": 3.09, "m6g.large": 6.38, "m7g.large": 6.38, "m5.large": 6.38, "r6g.large": 13.07,
    "r7g.large": 13.07, "r5.large": 13.07, "r6gd.xlarge": 26.32,
}  # fmt: skip
ELASTICACHE_RESERVED = 0.25  # reserved-memory-percent default: for replication buffers and forks


def instance_memory_gib(instance_class: str, cache: bool | None = None) -> float | None:
    """Memory of ``db.r6g.large`` / ``cache.m6g.large`` / ``m6i.4xlarge``; None when unknown.
    ``cache``: a node of ElastiCache / MemoryDB (the default: a ``cache.`` class), whose usable
    memory is less than the instance's."""
    cache = instance_class.startswith("cache.") if cache is None else cache
    name = re.sub(r"^(db|cache)\.", "", instance_class)
    if cache and name in CACHE_GIB:
        return CACHE_GIB[name]
    family, _, size = name.partition(".")
    letter = family[:1]
    if letter == "t":
        return BURSTABLE_GIB.get(size)
    per = FAMILY_GIB_PER_VCPU.get(letter)
    vcpu = SIZE_VCPU.get(size)
    if per is None or vcpu is None:
        return None
    gib = per * vcpu
    if cache:
        gib *= 13.07 / 16  # a cache node's usable share, as for the listed r/m large nodes
    return round(gib, 2)


def rds_default_connections(
    provider: str, engine: str, instance_class: str, reserved: int
) -> tuple[int, str] | None:
    """AWS's default ``max_connections`` of an RDS / Aurora instance class, from its memory, and
    where the figure comes from; None for serverless or an unknown class."""
    if instance_class == "db.serverless":
        return None
    gib = instance_memory_gib(instance_class)
    if gib is None:
        return None
    # AWS's default parameter groups: PostgreSQL LEAST(DBInstanceClassMemory/9531392, 5000),
    # MySQL DBInstanceClassMemory/12582880 (DBInstanceClassMemory is a little under the class's memory)
    value = min(int(gib * GIB / 9531392), 5000) if engine == "postgres" else int(gib * GIB / 12582880)
    return (
        value,
        f"the {provider} default for {instance_class} ({gib:g} GiB): {value}, less {reserved} reserved",
    )


def parse_bytes(value: Any) -> int | None:
    """Redis memory units: 256mb, 1gb, 1048576."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kmg]b?|)\s*", str(value).lower())
    if not m:
        return None
    unit = {"": 1, "k": 1000, "kb": 1024, "m": 10**6, "mb": 1024**2, "g": 10**9, "gb": 1024**3}[m[2]]
    return int(float(m[1]) * unit)


def cache_node_memory(
    node_type: str, shards: int, reserved: float = 0.0, reserved_by: str = ""
) -> tuple[int, str] | None:
    """Bytes a managed cache's nodes hold for data (``reserved``: the share its service keeps for
    itself, named by ``reserved_by``), and where the figure comes from; None for an unknown node."""
    gib = instance_memory_gib(node_type, cache=True)
    if gib is None:
        return None
    usable = gib * (1 - reserved) if reserved else gib
    source = f"{node_type} {gib:g} GiB x {shards} shard(s)"
    if reserved:
        source += f", less {reserved_by}'s {reserved:.0%} reserved memory"
    return int(usable * GIB * shards), source
