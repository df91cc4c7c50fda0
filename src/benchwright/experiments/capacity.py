"""Connection and capacity preflight: refuse, before anything is created, a spec the target cannot
hold. Experiment 5 hit "sorry, too many clients already" only after provisioning and loading; a Redis
dataset larger than the node ends in evictions or OOM errors half-way through a load.

- Clients vs ``max_connections``: the busiest phase's clients (threads x runners) plus the runner's
  own short connections (setup probe, server statistics, closing checks) against what the server
  lets an ordinary user open: ``target.settings.max_connections`` when set, else the engine's
  default (a local server's configured maximum; RDS / Aurora: AWS's default formula from the
  instance class's memory) minus the connections reserved for superusers / the provider.
- Dataset vs memory (Redis-protocol targets): an estimate of the loaded data (YCSB records, or
  redis-bench keys) against ``maxmemory`` / the node type's memory less ElastiCache's default 25%
  reserved memory.
- Properties the driver would refuse at load time (``redis.datatype: string`` with ``fieldcount``
  other than 1).
Instance memory comes from a table of the common classes (AWS's published sizes); an unknown class
skips the check rather than guessing.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from benchwright.errors import SpecError
from benchwright.spec.properties import enabled_phases, workload_properties

if TYPE_CHECKING:
    from benchwright.spec import BenchmarkSpec

RUNNER_OWN_CONNECTIONS = 2  # the setup probe / server statistics / closing checks, one at a time + slack
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
REDIS_KEY_OVERHEAD = 90  # bytes per key beyond its data in a small Redis object (dictEntry, robj, sds)


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


def max_connections(target: Any) -> tuple[int, str] | None:
    """(usable connections, where that figure comes from), or None when it cannot be known."""
    engine = target.engine
    setting = target.settings.get("max_connections") or target.settings.get("maxclients")
    provider = target.provider
    reserved = RDS_RESERVED.get(engine, 0) if provider in ("rds", "aurora") else RESERVED.get(engine, 0)
    if setting is not None:
        try:
            value = int(setting)
        except (TypeError, ValueError):
            return None
        name = "max_connections" if "max_connections" in target.settings else "maxclients"
        return value - reserved, f"target.settings.{name} {value} less {reserved} reserved"
    if provider == "local":
        value = LOCAL_MAX_CONNECTIONS[engine]
        return (
            value - reserved,
            f"the local {engine} server's default max_connections {value} less {reserved} reserved",
        )
    if (
        provider in ("rds", "aurora")
        and getattr(target, "instance_class", "db.serverless") != "db.serverless"
    ):
        gib = instance_memory_gib(target.instance_class)
        if gib is None:
            return None
        # AWS's default parameter groups: PostgreSQL LEAST(DBInstanceClassMemory/9531392, 5000),
        # MySQL DBInstanceClassMemory/12582880 (DBInstanceClassMemory is a little under the class's memory)
        value = min(int(gib * GIB / 9531392), 5000) if engine == "postgres" else int(gib * GIB / 12582880)
        return value - reserved, (
            f"the {provider} default for {target.instance_class} ({gib:g} GiB): {value}, less {reserved} reserved"
        )
    return None


def _phase_clients(spec: BenchmarkSpec) -> list[tuple[str, int]]:
    out = []
    for name in enabled_phases(spec):
        phase = getattr(spec.workload.phases, name)
        props = workload_properties(spec, name)
        try:
            threads = phase.threads or int(props.get("threadcount") or 1)
        except ValueError:
            continue  # the workload's own checks name a bad threadcount
        out.append((name, threads * spec.runner.count))
    return out


def dataset_bytes(spec: BenchmarkSpec) -> int | None:
    """Bytes the load puts in a Redis-protocol target (an estimate from the workload's descriptor:
    its keys and each key's value bytes, plus Redis's own per-key overhead), None when unknown."""
    # deferred: importing the registry loads every built-in workload
    from benchwright.runner.workloads.registry import descriptors

    found = descriptors().get(spec.workload.name)
    if found is None or found.dataset_bytes is None:
        return None
    try:
        keys, per_key = found.dataset_bytes(workload_properties(spec))
    except ValueError:
        return None
    return keys * (per_key + REDIS_KEY_OVERHEAD)


def _parse_bytes(value: Any) -> int | None:
    """Redis memory units: 256mb, 1gb, 1048576."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kmg]b?|)\s*", str(value).lower())
    if not m:
        return None
    unit = {"": 1, "k": 1000, "kb": 1024, "m": 10**6, "mb": 1024**2, "g": 10**9, "gb": 1024**3}[m[2]]
    return int(float(m[1]) * unit)


def node_memory(target: Any) -> tuple[int, str] | None:
    maxmemory = target.settings.get("maxmemory")
    if maxmemory is not None:
        parsed = _parse_bytes(maxmemory)
        if parsed:
            return parsed, f"target.settings.maxmemory {maxmemory}"
    node = getattr(target, "node_type", None)
    if node is None:
        return None
    gib = instance_memory_gib(node, cache=True)
    if gib is None:
        return None
    usable = gib * (1 - ELASTICACHE_RESERVED) if target.provider == "elasticache" else gib
    shards = getattr(target, "shards", 1)
    return int(usable * GIB * shards), (
        f"{node} {gib:g} GiB x {shards} shard(s)"
        + (
            f", less ElastiCache's {ELASTICACHE_RESERVED:.0%} reserved memory"
            if target.provider == "elasticache"
            else ""
        )
    )


def check_capacity(spec: BenchmarkSpec, q: Callable[[str], str]) -> None:
    """Raise ``SpecError`` naming the field and both numbers when the target cannot hold the spec."""
    target = spec.target
    limit = max_connections(target) if target.provider != "endpoint" else None
    if limit is not None:
        usable, source = limit
        for phase, clients in _phase_clients(spec):
            needed = clients + RUNNER_OWN_CONNECTIONS
            if needed > usable:
                field = f"workload.phases.{phase}.threads"
                raise SpecError(
                    q(field),
                    f"{needed} connections ({clients} clients + {RUNNER_OWN_CONNECTIONS} for the runner's "
                    f"own checks) exceed the {usable} the target allows ({source}): lower the threads or "
                    "raise target.settings.max_connections",
                )
    if target.engine != "redis":
        return
    # deferred: the drivers package imports the event loop and its compiled extension
    from benchwright.runner.drivers.redis_datatype import redis_datatype

    # deferred: importing the registry loads every built-in workload
    from benchwright.runner.workloads.registry import descriptors

    props = workload_properties(spec)
    own = descriptors().get(spec.workload.name)
    if (
        own is not None
        and own.field_records
        and redis_datatype(props) == "string"  # redis.datatype, or redis.command_group as Tair calls it
        and props.get("fieldcount", "10") != "1"
    ):
        raise SpecError(
            q("workload.properties.fieldcount"),
            f"redis.datatype string stores one value per key, but fieldcount is {props.get('fieldcount', '10')}"
            " (the default is 10): set fieldcount: 1",
        )
    memory = node_memory(target) if target.provider != "endpoint" else None
    data = dataset_bytes(spec)
    if memory is not None and data is not None and data > memory[0]:
        field = "workload.properties"
        if own is not None and own.from_data_size is not None and own.size_property:  # sized in records
            field = f"{field}.{own.size_property}"
        raise SpecError(
            q(field),
            f"the dataset needs about {data / GIB:.2f} GiB ({data:,} bytes, estimated) but the node holds "
            f"{memory[0] / GIB:.2f} GiB ({memory[1]}): use a larger node or fewer records",
        )
