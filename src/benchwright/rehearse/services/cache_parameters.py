"""What ElastiCache and MemoryDB accept in a parameter group of the Redis OSS / Valkey 7 families: the
rehearsal's model of the service's checks (cache_api.py refuses what this refuses, as the service would
answer ModifyCacheParameterGroup / UpdateParameterGroup with InvalidParameterValue).

Taken from the services' parameter pages (ElastiCache "Redis OSS-specific parameters", MemoryDB
"Engine specific parameters"). Only modifiable parameters are listed; ``maxmemory``, ``save``, ``bind``
and the like are set by the service and refused. Most names are Redis's own configuration names
(tests/runner/test_cache_parameters.py holds each of those, and every enumerated value, to a real Redis);
``SERVICE_ONLY`` are the services' own, which a Redis stand-in cannot apply. MemoryDB keeps its data in
its transaction log, so persistence and replication tuning are not in its groups (``NOT_IN_MEMORYDB``).
"""

from __future__ import annotations

from benchwright.spec.server_settings import REDIS_EVICTION_POLICIES

YES_NO = ("yes", "no")
POLICIES = REDIS_EVICTION_POLICIES
INT = "integer"
TEXT = "string"

# name -> allowed values (a tuple), or the data type the value must have
PARAMETERS: dict[str, tuple[str, ...] | str] = {
    "maxmemory-policy": POLICIES,
    "maxmemory-samples": INT,
    "activedefrag": YES_NO,
    "active-defrag-cycle-max": INT,
    "active-defrag-cycle-min": INT,
    "active-defrag-ignore-bytes": INT,
    "active-defrag-max-scan-fields": INT,
    "active-defrag-threshold-lower": INT,
    "active-defrag-threshold-upper": INT,
    "active-expire-effort": INT,
    "activerehashing": YES_NO,
    "appendonly": YES_NO,
    "appendfsync": ("always", "everysec", "no"),
    "client-query-buffer-limit": INT,
    "cluster-allow-reads-when-down": YES_NO,
    "databases": INT,
    "hash-max-listpack-entries": INT,
    "hash-max-listpack-value": INT,
    "hash-max-ziplist-entries": INT,
    "hash-max-ziplist-value": INT,
    "hll-sparse-max-bytes": INT,
    "latency-tracking": YES_NO,
    "lazyfree-lazy-eviction": YES_NO,
    "lazyfree-lazy-expire": YES_NO,
    "lazyfree-lazy-server-del": YES_NO,
    "lazyfree-lazy-user-del": YES_NO,
    "lazyfree-lazy-user-flush": YES_NO,
    "lfu-decay-time": INT,
    "lfu-log-factor": INT,
    "list-compress-depth": INT,
    "list-max-listpack-size": INT,
    "list-max-ziplist-size": INT,
    "lua-time-limit": INT,
    "maxclients": INT,
    "min-replicas-max-lag": INT,
    "min-replicas-to-write": INT,
    "notify-keyspace-events": TEXT,
    "proto-max-bulk-len": INT,
    "repl-backlog-size": INT,
    "replica-lazy-flush": YES_NO,
    "set-max-intset-entries": INT,
    "slowlog-log-slower-than": INT,
    "slowlog-max-len": INT,
    "stream-node-max-bytes": INT,
    "stream-node-max-entries": INT,
    "tcp-keepalive": INT,
    "timeout": INT,
    "tracking-table-max-keys": INT,
    "zset-max-listpack-entries": INT,
    "zset-max-listpack-value": INT,
    "zset-max-ziplist-entries": INT,
    "zset-max-ziplist-value": INT,
    # the services' own (no Redis configuration of that name)
    "reserved-memory-percent": INT,
    "close-on-replica-write": YES_NO,
    "repl-backlog-ttl": INT,
    "client-output-buffer-limit-normal-hard-limit": INT,
    "client-output-buffer-limit-normal-soft-limit": INT,
    "client-output-buffer-limit-normal-soft-seconds": INT,
    "client-output-buffer-limit-pubsub-hard-limit": INT,
    "client-output-buffer-limit-pubsub-soft-limit": INT,
    "client-output-buffer-limit-pubsub-soft-seconds": INT,
    "client-output-buffer-limit-replica-hard-limit": INT,
    "client-output-buffer-limit-replica-soft-limit": INT,
    "client-output-buffer-limit-replica-soft-seconds": INT,
}
SERVICE_ONLY = frozenset(
    {"reserved-memory-percent", "close-on-replica-write", "repl-backlog-ttl"}
    | {n for n in PARAMETERS if n.startswith("client-output-buffer-limit-")}
)
NOT_IN_MEMORYDB = frozenset(
    {
        "appendonly",
        "appendfsync",
        "close-on-replica-write",
        "min-replicas-max-lag",
        "min-replicas-to-write",
        "repl-backlog-size",
        "repl-backlog-ttl",
        "replica-lazy-flush",
        "reserved-memory-percent",
        "databases",
    }
)


def refusal(service: str, name: str, value: str) -> str | None:
    """Why the service would refuse ``name=value`` in a group (None when it accepts it)."""
    allowed = PARAMETERS.get(name)
    if allowed is None or (service == "memorydb" and name in NOT_IN_MEMORYDB):
        return f"Unknown or non-modifiable parameter {name!r}"
    if isinstance(allowed, tuple):
        if value not in allowed:
            return f"Invalid value {value!r} for parameter {name}; allowed values: {', '.join(allowed)}"
        return None
    if allowed == INT and not value.lstrip("-").isdigit():
        return f"Invalid value {value!r} for parameter {name}: an integer is required"
    return None
