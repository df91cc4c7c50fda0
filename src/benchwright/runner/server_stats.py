"""The server's own statistics around a phase: before/after snapshots and their deltas.

A throughput collapse is often explained only from the server's side (experiment 3's burst credits
showed as checkpoints and buffer writes; experiment 5's refused clients as connection counters), so
every phase carries what the engine itself counted while it ran:

- PostgreSQL: ``pg_stat_database`` of the benchmark database, ``pg_stat_bgwriter`` (and
  ``pg_stat_checkpointer`` from PostgreSQL 17), and the top statements of ``pg_stat_statements`` by
  execution time when that extension is installed in the database.
- MySQL / MariaDB: ``SHOW GLOBAL STATUS`` (numeric counters) and the enabled rows of
  ``information_schema.INNODB_METRICS``.
- Redis: ``INFO stats``, ``INFO commandstats`` (``get.calls``, ``get.usec`` ...) and ``INFO keyspace``
  (``db0.keys`` ...), plus the memory figures of ``INFO memory``.

The snapshots use a connection of their own (one driver of thread index 0), opened after the
phase's workers have closed theirs: PostgreSQL flushes a session's counters when it ends, so the
"after" snapshot first waits (bounded) until no other session of the benchmark user is left in the
database. Counters are server-wide, so anything else that used the server in the meantime is in the
deltas too (``ServerStats.scope`` says so). A snapshot that fails is a note, never a failed phase.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any

from benchwright.results import ServerStats, StatGroup, TopStatement, as_number

Snapshot = dict[str, dict[str, float]]
SETTLE_S = 5.0  # longest wait for the phase's own sessions to end before the "after" snapshot
SETTLE_POLL_S = 0.05
TOP_STATEMENTS = 10

# SHOW GLOBAL STATUS: the families kept (the rest are flags and strings, or irrelevant to a benchmark)
_MYSQL_PREFIXES = (
    "Aborted_",
    "Bytes_",
    "Com_",
    "Connections",
    "Created_tmp",
    "Handler_",
    "Innodb_",
    "Max_used_connections",
    "Open",
    "Queries",
    "Questions",
    "Rows_",
    "Select_",
    "Slow_queries",
    "Sort_",
    "Table_locks",
    "Threads_",
)
_REDIS_MEMORY = ("used_memory", "used_memory_rss", "used_memory_peak", "maxmemory", "mem_fragmentation_ratio")


def _numeric_row(columns: list[str], row: tuple[Any, ...]) -> dict[str, float]:
    out: dict[str, float] = {}
    for name, value in zip(columns, row, strict=False):
        number = as_number(value)
        if number is not None:
            out[name] = number
    return out


# ---------------------------------------------------------------- PostgreSQL
_PG_DATABASE = (
    "SELECT numbackends, xact_commit, xact_rollback, blks_read, blks_hit, tup_returned, tup_fetched, "
    "tup_inserted, tup_updated, tup_deleted, conflicts, temp_files, temp_bytes, deadlocks, "
    "blk_read_time, blk_write_time FROM pg_stat_database WHERE datname = current_database()"
)
_PG_SESSIONS = (
    "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
    "AND usename = current_user AND pid <> pg_backend_pid() AND backend_type = 'client backend'"
)


def _pg_columns(driver: Any, sql: str) -> tuple[list[str], tuple[Any, ...] | None]:
    cur = driver.cur
    cur.execute(sql)
    columns = [c.name for c in cur.description or []]
    row = cur.fetchone()
    return columns, row


def _pg_snapshot(driver: Any, notes: list[str]) -> tuple[Snapshot, list[dict[str, Any]]]:
    groups: Snapshot = {}
    driver.execute("SELECT pg_stat_clear_snapshot()")
    columns, row = _pg_columns(driver, _PG_DATABASE)
    if row is not None:
        groups["pg_stat_database"] = _numeric_row(columns, row)
    for view in ("pg_stat_bgwriter", "pg_stat_checkpointer"):
        if driver.fetchone("SELECT to_regclass(%s) IS NOT NULL", (f"pg_catalog.{view}",)) == (True,):
            columns, row = _pg_columns(driver, f"SELECT * FROM {view}")
            if row is not None:
                groups[view] = _numeric_row(columns, row)
    statements: list[dict[str, Any]] = []
    if driver.fetchone("SELECT to_regclass('pg_stat_statements') IS NOT NULL") == (True,):
        try:
            rows = driver.fetchall(
                "SELECT queryid, left(query, 200), calls, total_exec_time, rows FROM pg_stat_statements "
                "WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())"
            )
        except Exception as exc:  # not in shared_preload_libraries: the view exists but refuses
            driver.recover()
            notes.append(f"pg_stat_statements unavailable: {str(exc).splitlines()[0]}")
        else:
            statements = [
                {
                    "id": str(r[0]),
                    "query": r[1],
                    "calls": float(r[2]),
                    "time_ms": float(r[3]),
                    "rows": float(r[4]),
                }
                for r in rows
            ]
    else:
        notes.append("pg_stat_statements is not installed in the database: no top statements")
    return groups, statements


def _pg_settle(driver: Any) -> bool:
    """Wait until the phase's sessions have ended (their counters are flushed when they end)."""
    deadline = time.monotonic() + SETTLE_S
    while True:
        row = driver.fetchone(_PG_SESSIONS)
        if not row or int(row[0]) == 0:
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(SETTLE_POLL_S)


# ---------------------------------------------------------------- MySQL / MariaDB
def _mysql_snapshot(driver: Any, notes: list[str]) -> tuple[Snapshot, list[dict[str, Any]]]:
    status: dict[str, float] = {}
    for name, value in driver.fetchall("SHOW GLOBAL STATUS"):
        if str(name).startswith(_MYSQL_PREFIXES):
            number = as_number(value)
            if number is not None:
                status[str(name)] = number
    groups: Snapshot = {"global_status": status}
    try:
        rows = driver.fetchall("SELECT NAME, COUNT FROM information_schema.INNODB_METRICS WHERE ENABLED = 1")
    except Exception as exc:
        driver.recover()
        notes.append(f"INNODB_METRICS unavailable: {str(exc).splitlines()[0]}")
    else:
        groups["innodb_metrics"] = {str(n): float(c) for n, c in rows if as_number(c) is not None}
    return groups, []


# ---------------------------------------------------------------- Redis
def parse_info(text: str | bytes) -> dict[str, str]:
    """``INFO`` output as a flat mapping (``# Section`` lines and blanks skipped)."""
    if isinstance(text, bytes):
        text = text.decode(errors="replace")
    out: dict[str, str] = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#") or ":" not in line:
            continue
        key, _, value = line.partition(":")
        out[key] = value
    return out


def _subfields(value: str) -> dict[str, float]:
    """``calls=3,usec=12,usec_per_call=4.00`` -> {calls: 3, usec: 12, usec_per_call: 4.0}."""
    out: dict[str, float] = {}
    for part in value.split(","):
        key, _, raw = part.partition("=")
        number = as_number(raw)
        if number is not None:
            out[key] = number
    return out


def _redis_snapshot(driver: Any, notes: list[str]) -> tuple[Snapshot, list[dict[str, Any]]]:
    stats = {
        k: n
        for k, v in parse_info(driver.command("INFO", "stats")).items()
        if (n := as_number(v)) is not None
    }
    commands: dict[str, float] = {}
    for key, value in parse_info(driver.command("INFO", "commandstats")).items():
        name = key.removeprefix("cmdstat_")
        for field, number in _subfields(value).items():
            commands[f"{name}.{field}"] = number
    keyspace: dict[str, float] = {}
    for key, value in parse_info(driver.command("INFO", "keyspace")).items():
        for field, number in _subfields(value).items():
            keyspace[f"{key}.{field}"] = number
    memory_info = parse_info(driver.command("INFO", "memory"))
    memory = {k: n for k in _REDIS_MEMORY if (n := as_number(memory_info.get(k))) is not None}
    return {"stats": stats, "commandstats": commands, "keyspace": keyspace, "memory": memory}, []


SNAPSHOTS: dict[str, Callable[[Any, list[str]], tuple[Snapshot, list[dict[str, Any]]]]] = {
    "postgres": _pg_snapshot,
    "mysql": _mysql_snapshot,
    "redis": _redis_snapshot,
}
SOURCES = {
    "postgres": "pg_stat_database, pg_stat_bgwriter / pg_stat_checkpointer, pg_stat_statements",
    "mysql": "SHOW GLOBAL STATUS, information_schema.INNODB_METRICS",
    "redis": "INFO stats, INFO commandstats, INFO keyspace, INFO memory",
}


# ---------------------------------------------------------------- before / after
class StatsProbe:
    """Takes the "before" snapshot now and the "after" one in ``finish``; never raises."""

    def __init__(self, engine: str, properties: Mapping[str, str]) -> None:
        self.engine = engine
        self.properties = dict(properties)
        self.notes: list[str] = []
        self.before: Snapshot | None = None
        self.before_statements: list[dict[str, Any]] = []
        self.before_at = datetime.now(UTC)

    @property
    def supported(self) -> bool:
        return self.engine in SNAPSHOTS

    def _take(self, after: bool) -> tuple[Snapshot, list[dict[str, Any]]] | None:
        from benchwright.runner.drivers import new_driver

        driver = new_driver(self.engine, self.properties, 0)
        try:
            driver.connect()
            if after and self.engine == "postgres" and not _pg_settle(driver):
                self.notes.append(
                    f"other sessions were still open {SETTLE_S:.0f} s after the phase: "
                    "their latest counters may be missing from the deltas"
                )
            return SNAPSHOTS[self.engine](driver, self.notes)
        except Exception as exc:
            first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            self.notes.append(f"{'after' if after else 'before'} snapshot failed: {first}")
            return None
        finally:
            with contextlib.suppress(Exception):
                driver.close()

    def start(self) -> StatsProbe:
        if self.supported:
            self.before_at = datetime.now(UTC)
            taken = self._take(after=False)
            if taken is not None:
                self.before, self.before_statements = taken
        return self

    def finish(self) -> ServerStats | None:
        if not self.supported:
            return None
        taken = self._take(after=True) if self.before is not None else None
        after_at = datetime.now(UTC)
        if self.before is None or taken is None:
            if not self.notes:
                return None
            return ServerStats(
                engine=self.engine, source=SOURCES[self.engine], before_at=self.before_at,
                after_at=after_at, notes=self.notes,
            )  # fmt: skip
        after, statements = taken
        groups = {
            name: StatGroup(
                before=self.before.get(name, {}),
                after=values,
                delta={k: round(v - self.before.get(name, {}).get(k, 0.0), 6) for k, v in values.items()},
            )
            for name, values in after.items()
        }
        reset = went_backwards(self.engine, groups)
        if reset:
            shown = ", ".join(reset[:4]) + (f" and {len(reset) - 4} more" if len(reset) > 4 else "")
            self.notes.append(
                f"counters went backwards ({shown}): the server restarted or they were reset during "
                "the phase, so those deltas are not the phase's totals"
            )
        return ServerStats(
            engine=self.engine,
            source=SOURCES[self.engine],
            before_at=self.before_at,
            after_at=after_at,
            groups=groups,
            top_statements=top_statements(self.before_statements, statements),
            notes=list(dict.fromkeys(self.notes)),
        )


# Figures that are levels, not running totals: they go down in a healthy phase (memory freed, keys
# deleted, a session closed, an average falling), so a drop says nothing about a reset. Everything
# else a snapshot keeps is a counter, which only a restart or a reset (CONFIG RESETSTAT, FLUSH STATUS,
# pg_stat_reset) takes backwards.
_GAUGE_GROUPS = {"redis": ("memory", "keyspace")}
_GAUGE_KEYS: dict[str, tuple[str, ...]] = {
    "redis": (
        "instantaneous_", "current_", "pubsub", "tracking_total_", "expired_stale_perc", "latest_fork_usec",
        "migrate_cached_sockets", "slave_expires_tracked_keys", "clients_in_timeout_table",
    ),
    "postgres": ("numbackends",),
    "mysql": (
        "Threads_connected", "Threads_running", "Threads_cached", "Open_", "Innodb_buffer_pool_pages_",
        "Innodb_buffer_pool_bytes_", "Innodb_row_lock_current_waits", "Innodb_row_lock_time_avg",
        "Innodb_row_lock_time_max", "Innodb_page_size", "Innodb_num_open_files", "Innodb_history_list_length",
        "Innodb_data_pending_", "Innodb_os_log_pending_", "Innodb_mem_",
        "buffer_pool_size", "buffer_pool_pages_", "buffer_pool_bytes_", "lock_row_lock_current_waits",
        "trx_rseg_history_len", "os_pending_", "trx_active_transactions",
    ),
}  # fmt: skip


def is_counter(engine: str, group: str, key: str) -> bool:
    """Is ``group``/``key`` a running total (whose drop means a reset) rather than a level?"""
    if group in _GAUGE_GROUPS.get(engine, ()):
        return False
    name = key.rsplit(".", 1)[-1] if engine == "redis" and group == "commandstats" else key
    return name != "usec_per_call" and not name.startswith(_GAUGE_KEYS.get(engine, ()))


def went_backwards(engine: str, groups: Mapping[str, StatGroup]) -> list[str]:
    """The counters (never the levels: ``is_counter``) whose value fell between the snapshots, as
    ``group.key``."""
    return [
        f"{name}.{key}"
        for name, group in sorted(groups.items())
        for key, delta in sorted(group.delta.items())
        if delta < 0 and is_counter(engine, name, key)
    ]


def top_statements(before: list[dict[str, Any]], after: list[dict[str, Any]]) -> list[TopStatement]:
    """The statements that took the most execution time between the snapshots (pg_stat_statements)."""
    earlier = {s["id"]: s for s in before}
    out = []
    for s in after:
        b = earlier.get(s["id"], {})
        calls = s["calls"] - b.get("calls", 0.0)
        if calls <= 0:
            continue
        out.append(
            TopStatement(
                query=s["query"],
                calls=int(calls),
                total_ms=round(s["time_ms"] - b.get("time_ms", 0.0), 3),
                rows=int(s["rows"] - b.get("rows", 0.0)),
            )
        )
    out.sort(key=lambda t: t.total_ms, reverse=True)
    return out[:TOP_STATEMENTS]
