"""Server settings a spec may change: one allow-list per engine, each setting with a value type.

A deny-list of exact names lost to the servers' own spellings: MariaDB reads ``loose-bind-address``
and any unambiguous abbreviation (``skip-grant`` is ``skip-grant-tables``), PostgreSQL reads
``Log-Directory``, Redis reads ``REPLICAOF``. So a name is first normalised the way its server
reads it (case; dashes and underscores; MariaDB's ``loose-`` prefix), then it must be one of the
settings a benchmark tunes (memory, connections, durability, I/O, eviction, encodings). Anything
else is refused, naming the setting: an abbreviation, ``maximum-`` / ``skip-`` forms, a server's
files, addresses, commands, modules, replication sources and credentials are simply not on a list.

Values are typed (size, int, bool, real, duration, enum) by patterns that admit no separator,
quote, space or newline, so a value cannot add a directive to a config file or a word to a shell.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping
from typing import Literal

from benchwright.spec._base import shown

Kind = Literal["postgres", "mysql", "redis", "cache", "yugabytedb", "none"]
Scalar = str | int | float | bool

MAX_SETTINGS = 100
MAX_VALUE = 64

# value types: a name, or a tuple of allowed words (an enum, compared case-insensitively)
INT, SIZE, BOOL, REAL, DURATION = "int", "size", "bool", "real", "duration"
ValueType = str | tuple[str, ...]

_INT = re.compile(r"-?[0-9]{1,18}")
_SIZE = re.compile(r"[0-9]{1,15}(\.[0-9]{1,6})?([kKmMgGtT][bB]?|[bB])?")
_REAL = re.compile(r"-?[0-9]{1,12}(\.[0-9]{1,12})?")
_DURATION = re.compile(r"-?[0-9]{1,12}(us|ms|s|min|h|d)?")
_BOOLS = frozenset({"on", "off", "true", "false", "yes", "no", "1", "0"})

_ON_OFF = ("on", "off")
POSTGRES: dict[str, ValueType] = {
    "max_connections": INT,
    "superuser_reserved_connections": INT,
    "shared_buffers": SIZE,
    "huge_pages": ("on", "off", "try"),
    "temp_buffers": SIZE,
    "work_mem": SIZE,
    "maintenance_work_mem": SIZE,
    "autovacuum_work_mem": SIZE,
    "effective_cache_size": SIZE,
    "wal_buffers": SIZE,
    "max_wal_size": SIZE,
    "min_wal_size": SIZE,
    "wal_keep_size": SIZE,
    "wal_level": ("minimal", "replica", "logical"),
    "max_wal_senders": INT,
    "wal_compression": ("on", "off", "pglz", "lz4", "zstd"),
    "wal_writer_delay": DURATION,
    "wal_writer_flush_after": SIZE,
    "wal_sync_method": ("fsync", "fdatasync", "open_sync", "open_datasync", "fsync_writethrough"),
    "checkpoint_timeout": DURATION,
    "checkpoint_completion_target": REAL,
    "checkpoint_flush_after": SIZE,
    "synchronous_commit": ("on", "off", "local", "remote_write", "remote_apply"),
    "fsync": BOOL,
    "full_page_writes": BOOL,
    "commit_delay": INT,
    "commit_siblings": INT,
    "bgwriter_delay": DURATION,
    "bgwriter_lru_maxpages": INT,
    "bgwriter_lru_multiplier": REAL,
    "bgwriter_flush_after": SIZE,
    "backend_flush_after": SIZE,
    "effective_io_concurrency": INT,
    "maintenance_io_concurrency": INT,
    "random_page_cost": REAL,
    "seq_page_cost": REAL,
    "cpu_tuple_cost": REAL,
    "default_statistics_target": INT,
    "max_worker_processes": INT,
    "max_parallel_workers": INT,
    "max_parallel_workers_per_gather": INT,
    "max_parallel_maintenance_workers": INT,
    "max_locks_per_transaction": INT,
    "max_pred_locks_per_transaction": INT,
    "max_prepared_transactions": INT,
    "jit": BOOL,
    "autovacuum": BOOL,
    "autovacuum_max_workers": INT,
    "autovacuum_naptime": DURATION,
    "autovacuum_vacuum_scale_factor": REAL,
    "autovacuum_analyze_scale_factor": REAL,
    "autovacuum_vacuum_cost_limit": INT,
    "autovacuum_vacuum_cost_delay": DURATION,
    "vacuum_cost_limit": INT,
    "deadlock_timeout": DURATION,
    "lock_timeout": DURATION,
    "statement_timeout": DURATION,
    "idle_in_transaction_session_timeout": DURATION,
    "track_io_timing": BOOL,
    "track_activities": BOOL,
    "track_counts": BOOL,
    "log_checkpoints": BOOL,
    "log_lock_waits": BOOL,
    "log_min_duration_statement": DURATION,
    "enable_seqscan": BOOL,
    "enable_indexscan": BOOL,
    "enable_bitmapscan": BOOL,
    "enable_hashjoin": BOOL,
    "enable_mergejoin": BOOL,
    "enable_nestloop": BOOL,
}

MYSQL: dict[str, ValueType] = {
    "max_connections": INT,
    "max_user_connections": INT,
    "back_log": INT,
    "thread_cache_size": INT,
    "thread_handling": ("one-thread-per-connection", "pool-of-threads"),
    "thread_pool_size": INT,
    "table_open_cache": INT,
    "table_definition_cache": INT,
    "open_files_limit": INT,
    "max_allowed_packet": SIZE,
    "max_prepared_stmt_count": INT,
    "tmp_table_size": SIZE,
    "max_heap_table_size": SIZE,
    "sort_buffer_size": SIZE,
    "join_buffer_size": SIZE,
    "read_buffer_size": SIZE,
    "read_rnd_buffer_size": SIZE,
    "query_cache_type": ("0", "1", "2", "off", "on", "demand"),
    "query_cache_size": SIZE,
    "performance_schema": BOOL,
    "transaction_isolation": ("read-uncommitted", "read-committed", "repeatable-read", "serializable"),
    "sync_binlog": INT,
    "binlog_format": ("row", "statement", "mixed"),
    "wait_timeout": INT,
    "interactive_timeout": INT,
    "lock_wait_timeout": INT,
    "innodb_buffer_pool_size": SIZE,
    "innodb_buffer_pool_instances": INT,
    "innodb_log_file_size": SIZE,
    "innodb_log_buffer_size": SIZE,
    "innodb_flush_log_at_trx_commit": ("0", "1", "2"),
    "innodb_flush_log_at_timeout": INT,
    "innodb_flush_method": ("fsync", "o_dsync", "o_direct", "o_direct_no_fsync", "littlesync", "nosync"),
    "innodb_flush_neighbors": ("0", "1", "2"),
    "innodb_io_capacity": INT,
    "innodb_io_capacity_max": INT,
    "innodb_doublewrite": BOOL,
    "innodb_read_io_threads": INT,
    "innodb_write_io_threads": INT,
    "innodb_purge_threads": INT,
    "innodb_page_cleaners": INT,
    "innodb_thread_concurrency": INT,
    "innodb_adaptive_hash_index": BOOL,
    "innodb_change_buffering": ("none", "inserts", "deletes", "changes", "purges", "all"),
    "innodb_lru_scan_depth": INT,
    "innodb_autoinc_lock_mode": ("0", "1", "2"),
    "innodb_deadlock_detect": BOOL,
    "innodb_lock_wait_timeout": INT,
    "innodb_stats_persistent": BOOL,
    "innodb_max_dirty_pages_pct": REAL,
    "innodb_adaptive_flushing": BOOL,
    "innodb_use_native_aio": BOOL,
    "innodb_open_files": INT,
}

_YES_NO = ("yes", "no")
# Redis's maxmemory-policy values (the rehearsal's cache parameter stand-in offers the same ones)
REDIS_EVICTION_POLICIES = (
    "volatile-lru",
    "allkeys-lru",
    "volatile-lfu",
    "allkeys-lfu",
    "volatile-random",
    "allkeys-random",
    "volatile-ttl",
    "noeviction",
)
REDIS: dict[str, ValueType] = {
    "maxmemory": SIZE,
    "maxmemory-policy": REDIS_EVICTION_POLICIES,
    "maxmemory-samples": INT,
    "maxmemory-eviction-tenacity": INT,
    "maxclients": INT,
    "appendonly": BOOL,
    "appendfsync": ("always", "everysec", "no"),
    "no-appendfsync-on-rewrite": BOOL,
    "auto-aof-rewrite-percentage": INT,
    "auto-aof-rewrite-min-size": SIZE,
    "aof-use-rdb-preamble": BOOL,
    "rdbcompression": BOOL,
    "rdbchecksum": BOOL,
    "hz": INT,
    "dynamic-hz": BOOL,
    "io-threads": INT,
    "io-threads-do-reads": BOOL,
    "activedefrag": BOOL,
    "active-defrag-cycle-max": INT,
    "active-defrag-cycle-min": INT,
    "active-defrag-ignore-bytes": SIZE,
    "active-defrag-max-scan-fields": INT,
    "active-defrag-threshold-lower": INT,
    "active-defrag-threshold-upper": INT,
    "active-expire-effort": INT,
    "activerehashing": BOOL,
    "jemalloc-bg-thread": BOOL,
    "lazyfree-lazy-eviction": BOOL,
    "lazyfree-lazy-expire": BOOL,
    "lazyfree-lazy-server-del": BOOL,
    "lazyfree-lazy-user-del": BOOL,
    "lazyfree-lazy-user-flush": BOOL,
    "lfu-decay-time": INT,
    "lfu-log-factor": INT,
    "hash-max-listpack-entries": INT,
    "hash-max-listpack-value": INT,
    "hash-max-ziplist-entries": INT,
    "hash-max-ziplist-value": INT,
    "set-max-intset-entries": INT,
    "set-max-listpack-entries": INT,
    "zset-max-listpack-entries": INT,
    "zset-max-listpack-value": INT,
    "zset-max-ziplist-entries": INT,
    "zset-max-ziplist-value": INT,
    "list-max-listpack-size": INT,
    "list-max-ziplist-size": INT,
    "list-compress-depth": INT,
    "hll-sparse-max-bytes": INT,
    "stream-node-max-bytes": SIZE,
    "stream-node-max-entries": INT,
    "client-query-buffer-limit": SIZE,
    "proto-max-bulk-len": SIZE,
    "tcp-keepalive": INT,
    "tcp-backlog": INT,
    "timeout": INT,
    "lua-time-limit": INT,
    "busy-reply-threshold": INT,
    "slowlog-log-slower-than": INT,
    "slowlog-max-len": INT,
    "latency-monitor-threshold": INT,
    "latency-tracking": BOOL,
    "tracking-table-max-keys": INT,
    "save": ("",),  # persistence snapshots off; the schedule form takes spaces
}
# ElastiCache / MemoryDB parameter groups: Redis's own names plus the services' (the service's answer
# is the authority on which of these a family takes; these are the ones a benchmark tunes)
CACHE: dict[str, ValueType] = {
    **{k: v for k, v in REDIS.items() if k not in ("save", "io-threads", "io-threads-do-reads")},
    "reserved-memory-percent": INT,
    "close-on-replica-write": BOOL,
    "repl-backlog-size": SIZE,
    "repl-backlog-ttl": INT,
    "min-replicas-max-lag": INT,
    "min-replicas-to-write": INT,
    "replica-lazy-flush": BOOL,
    "cluster-allow-reads-when-down": BOOL,
}
# YugabyteDB tserver gflags (the yugabytedb-3node template passes settings as --name=value)
YUGABYTEDB: dict[str, ValueType] = {
    "ysql_max_connections": INT,
    "ysql_num_shards_per_tserver": INT,
    "yb_num_shards_per_tserver": INT,
    "enable_automatic_tablet_splitting": BOOL,
    "ysql_enable_packed_row": BOOL,
    "durable_wal_write": BOOL,
    "memory_limit_hard_bytes": INT,
    "default_memory_limit_to_ram_ratio": REAL,
    "db_block_cache_size_percentage": INT,
    "ysql_sequence_cache_minval": INT,
    "enable_deadlock_detection": BOOL,
    "yb_enable_read_committed_isolation": BOOL,
    "enable_wait_queues": BOOL,
    "rpc_workers_limit": INT,
    "max_clock_skew_usec": INT,
    "ysql_enable_auto_analyze_service": BOOL,
}
ALLOWED: dict[Kind, dict[str, ValueType]] = {
    "postgres": POSTGRES,
    "mysql": MYSQL,
    "redis": REDIS,
    "cache": CACHE,
    "yugabytedb": YUGABYTEDB,
    "none": {},
}
WHO: dict[Kind, str] = {
    "postgres": "PostgreSQL",
    "mysql": "MariaDB/MySQL",
    "redis": "Redis",
    "cache": "ElastiCache/MemoryDB",
    "yugabytedb": "YugabyteDB (tserver flags)",
    "none": "this server",
}


class SettingError(ValueError):
    """One setting refused; ``name`` is the key as the spec wrote it (the field path's last part)."""

    def __init__(self, name: str, message: str) -> None:
        self.name = name
        super().__init__(message)


def normalise(kind: Kind, name: str) -> str:
    """The name as its server reads it: PostgreSQL and MariaDB fold case and treat ``-`` as ``_``
    (MariaDB also drops ``loose-``); Redis folds case and spells with dashes; gflags use ``_``."""
    low = name.strip().lower()
    if kind == "redis" or kind == "cache":
        return low.replace("_", "-")
    low = low.replace("-", "_")
    if kind == "mysql":
        while low.startswith("loose_"):
            low = low.removeprefix("loose_")
    return low


def _why_not(kind: Kind, raw: str, name: str) -> str:
    allowed = ALLOWED[kind]
    who = WHO[kind]
    if kind == "none":
        return "this server reads its own configuration file; settings are not applied to it (remove them)"
    if kind == "mysql" and name.startswith("maximum_"):
        return "a maximum- prefix limits what a session may set; write the setting itself"
    if kind == "mysql" and name.startswith(("skip_", "enable_", "disable_")):
        return f"the skip-/enable-/disable- forms are refused; write the {who} setting with a value"
    longer = sorted(n for n in allowed if n.startswith(name) and n != name)
    if longer:
        return (
            f"an abbreviation is refused (the server may read it as another option); write the full "
            f"name, e.g. {longer[0]}"
        )
    close = difflib.get_close_matches(name, list(allowed), n=1)
    hint = f" (did you mean {close[0]}?)" if close else ""
    read_as = f" (the server reads it as {name})" if name != raw else ""
    return (
        f"not a {who} setting{read_as} a benchmark may change{hint}; settings are an allow-list (memory, "
        "connections, durability, I/O, eviction); where the server listens, its files, commands, "
        "modules, replication and credentials are Benchwright's"
    )


def _value_ok(kind: ValueType, value: Scalar) -> bool:
    if isinstance(kind, tuple):
        if isinstance(value, (bool, float)):
            return False
        return str(value).lower() in kind
    if isinstance(value, bool):
        return kind == BOOL
    if isinstance(value, int):
        if kind == BOOL:
            return value in (0, 1)
        return kind in (INT, SIZE, REAL, DURATION) and (kind != SIZE or value >= 0)
    if isinstance(value, float):
        return kind == REAL and value == value and abs(value) < 1e15
    text = str(value)
    pattern = {INT: _INT, SIZE: _SIZE, REAL: _REAL, DURATION: _DURATION}.get(kind)
    if pattern is not None:
        return pattern.fullmatch(text) is not None
    return kind == BOOL and text.lower() in _BOOLS


def _describe(kind: ValueType) -> str:
    if isinstance(kind, tuple):
        return "one of " + ", ".join(repr(k) for k in kind)
    return {
        INT: "an integer",
        SIZE: "a size (digits and an optional unit: 256MB, 1gb, 64M)",
        BOOL: "a boolean (true/false, on/off, yes/no, 1/0)",
        REAL: "a number",
        DURATION: "a duration (digits and an optional unit: ms, s, min, h, d)",
    }[kind]


def check_settings(kind: Kind, settings: Mapping[str, Scalar]) -> dict[str, Scalar]:
    """The settings with each name normalised; a ``SettingError`` for the first refused one."""
    if len(settings) > MAX_SETTINGS:
        raise SettingError("", f"at most {MAX_SETTINGS} settings")
    out: dict[str, Scalar] = {}
    written: dict[str, str] = {}
    allowed = ALLOWED[kind]
    for raw, value in settings.items():
        name = normalise(kind, raw)
        if name not in allowed:
            raise SettingError(raw, _why_not(kind, raw, name))
        if name in written:
            raise SettingError(raw, f"the same setting as {written[name]!r} ({name})")
        text = str(value)
        if isinstance(value, str) and len(text) > MAX_VALUE:
            raise SettingError(raw, f"a value is at most {MAX_VALUE} characters")
        if not text.isprintable():
            raise SettingError(raw, "a value must be one line without control characters")
        if not _value_ok(allowed[name], value):
            raise SettingError(raw, f"{shown(text)} is not {_describe(allowed[name])}")
        written[name] = raw
        out[name] = value
    return out
