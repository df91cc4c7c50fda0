"""Dataset identity: which data a cell's load put on a target, and whether a later cell finds it.

Cells share targets (benchwright.sharing): a load that writes over another dataset, or a run phase
that reads one, measures the wrong thing without a single error. So every workload names the data
its load writes (``DatasetIdentity``: workload, tables or key space, record counts, record shape,
scale) and the target carries a marker saying what is there and which tables Benchwright owns:

- SQL: a table ``benchwright_dataset`` (one row per owned table: its name, the identity as JSON,
  whether the load finished and passed its checks);
- Redis: a key ``benchwright:dataset`` in the logical database the workload uses (the identity as
  JSON and the same completeness word).

Before a load the target is reset: the tables the marker names are dropped (a Redis database with a
marker is flushed). Anything else in the way (a table the load would create, keys in the Redis
database) is dropped too on a throwaway target; on an ``endpoint`` target (``benchwright.dataset.target=
endpoint``) it is never touched: the load refuses, naming it. After a load the data is checked (row
or key counts, columns, one sampled record); before a run or warm-up phase the marker is compared
with the cell's own identity. Whatever differs is returned as messages naming it; the engine makes
them invalid flags (``load_mismatch``, ``dataset_mismatch``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from benchwright.errors import SpecError
from benchwright.runner.drivers.base import Driver, SqlDriver
from benchwright.runner.plan import DATASET_CHECK, DATASET_TARGET

MARKER_TABLE = "benchwright_dataset"
MARKER_KEY = "benchwright:dataset"
TARGET_PROPERTY = DATASET_TARGET  # "endpoint": reset only what the marker names
CHECK_PROPERTY = DATASET_CHECK  # "off": none of this (fan-out: N runners, one load)
ENGINES = ("postgres", "mysql", "redis")  # the engines that keep data (not the null driver)
MISMATCH = "dataset_mismatch"  # flag: a run or warm-up found other data than its own
LOAD_MISMATCH = "load_mismatch"  # flag: the data after the load is not what the load should write
UNMARKED = "dataset_unmarked"  # flag (warning): a run on data without a marker (its data was checked)
UNCHECKED = "dataset_unchecked"  # flag (info): the checks were switched off


@dataclass(frozen=True)
class DatasetIdentity:
    """What a load writes. ``tables``: the tables (or Redis key spaces) the load creates, which
    Benchwright then owns; ``rows``: the rows (keys) each counted table holds after the load;
    ``shape``: the record layout and scale (fieldcount, fieldlength, datatype, key prefix,
    warehouses ...); ``columns``: the columns a table must have, where the workload fixes them."""

    workload: str
    tables: tuple[str, ...]
    rows: Mapping[str, int] = field(default_factory=dict)
    shape: Mapping[str, Any] = field(default_factory=dict)
    columns: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready, the form kept in the marker and in ``ResultDocument.extra["dataset"]``."""
        return {
            "workload": self.workload,
            "tables": list(self.tables),
            "rows": dict(self.rows),
            "shape": dict(self.shape),
            "columns": {t: list(c) for t, c in self.columns.items()},
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> DatasetIdentity:
        return cls(
            workload=str(data.get("workload", "")),
            tables=tuple(data.get("tables") or ()),
            rows={str(k): int(v) for k, v in (data.get("rows") or {}).items()},
            shape=dict(data.get("shape") or {}),
            columns={str(t): tuple(c) for t, c in (data.get("columns") or {}).items()},
        )

    def differences(self, found: DatasetIdentity) -> list[str]:
        """What ``found`` (on the target) has that this identity (the cell's) does not, by name. A
        shape value of None here means "whatever was loaded" (a run that reads the scale from the
        tables, as pgbench does)."""
        out: list[str] = []
        mine, theirs = self.as_dict(), found.as_dict()
        for key in ("workload", "tables"):
            if mine[key] != theirs[key]:
                out.append(f"{key}: {theirs[key]!r} on the target, {mine[key]!r} wanted")
        for part in ("shape", "rows"):
            for name in sorted(set(mine[part]) | set(theirs[part])):
                want, have = mine[part].get(name), theirs[part].get(name)
                if want != have and not (want is None and part == "shape"):
                    if part == "rows" and name not in mine[part]:
                        continue  # a run that does not know the scale does not count
                    label = f"rows in {name}" if part == "rows" else name
                    out.append(f"{label}: {have!r} on the target, {want!r} wanted")
        return out


# ---------------------------------------------------------------- the marker
def _is_sql(driver: Driver) -> bool:
    return isinstance(driver, SqlDriver) and getattr(driver, "dialect", "") in ("postgres", "mysql")


def _is_redis(driver: Driver) -> bool:
    return driver.engine == "redis" and hasattr(driver, "command")


def read_marker(driver: Driver) -> tuple[DatasetIdentity, bool, list[str]] | None:
    """The identity the target's marker holds, whether its load completed, and the tables it owns;
    None: no marker (nothing Benchwright loaded, or a load from before markers)."""
    if _is_redis(driver):
        raw = driver.command("GETRANGE", MARKER_KEY, 0, -1) or None  # type: ignore[attr-defined]
        if raw is None:
            return None
        try:
            data = json.loads(raw)
            identity = DatasetIdentity.from_dict(data["identity"])
        except (ValueError, TypeError, KeyError, AttributeError):
            raise SpecError(
                "workload",
                f"the Redis key {MARKER_KEY} on the target holds a value Benchwright did not write "
                f"({str(raw)[:40]!r}): delete the key or use another database",
            ) from None
        return identity, bool(data.get("complete")), list(identity.tables)
    if not _is_sql(driver):
        return None
    db: SqlDriver = driver  # type: ignore[assignment]
    if not db.table_exists(MARKER_TABLE):
        return None
    rows = db.fetchall(f"SELECT table_name, identity, complete FROM {MARKER_TABLE}")
    if not rows:
        return None
    identities = {str(r[1]) for r in rows}
    identity = DatasetIdentity.from_dict(json.loads(sorted(identities)[0]))
    complete = len(identities) == 1 and all(int(r[2]) == 1 for r in rows)
    return identity, complete, [str(r[0]) for r in rows]


def write_marker(
    driver: Driver, identity: DatasetIdentity, complete: bool, owned: list[str] | None = None
) -> None:
    """Say on the target what it holds, and which tables Benchwright owns (``owned``; default: the
    identity's tables, which a load creates)."""
    text = json.dumps(identity.as_dict(), sort_keys=True)
    if _is_redis(driver):
        payload = json.dumps({"identity": identity.as_dict(), "complete": complete}, sort_keys=True)
        # MSET, not SET (and GETRANGE, not GET, above): the marker's commands are counted under their
        # own names in the server's commandstats, never as the workload's SETs and GETs
        driver.command("MSET", MARKER_KEY, payload)  # type: ignore[attr-defined]
        return
    if not _is_sql(driver):
        return
    db: SqlDriver = driver  # type: ignore[assignment]
    db.execute(
        f"CREATE TABLE IF NOT EXISTS {MARKER_TABLE} (table_name VARCHAR(255) NOT NULL PRIMARY KEY,"
        " identity TEXT NOT NULL, complete INTEGER NOT NULL)"
    )
    db.execute(f"DELETE FROM {MARKER_TABLE}")
    for table in identity.tables if owned is None else owned:
        db.execute(
            f"INSERT INTO {MARKER_TABLE} (table_name, identity, complete) VALUES (%s, %s, %s)",
            (table, text, 1 if complete else 0),
        )


# ---------------------------------------------------------------- before a load
def reset_for_load(driver: Driver, identity: DatasetIdentity, properties: Mapping[str, str]) -> None:
    """Clear the target for ``identity``'s load and mark it as loading. Raises ``SpecError`` naming
    a table (or Redis database) Benchwright did not create, on an ``endpoint`` target."""
    if not (_is_redis(driver) or _is_sql(driver)):
        return
    marker = read_marker(driver)
    clear(driver, identity, set(marker[2]) if marker else None, properties)
    write_marker(driver, identity, complete=False)


def clear(
    driver: Driver, identity: DatasetIdentity, owned: set[str] | None, properties: Mapping[str, str]
) -> None:
    """Drop the tables Benchwright owns (``owned``: the marker's; None: no marker) and those the load
    will create; flush a Redis database. What Benchwright does not own is refused on an endpoint."""
    endpoint = properties.get(TARGET_PROPERTY) == "endpoint"
    if _is_redis(driver):
        _reset_redis(driver, owned is not None, endpoint, properties)
        return
    db: SqlDriver = driver  # type: ignore[assignment]
    mine = owned or set()
    for table in identity.tables:
        if endpoint and table not in mine and db.table_exists(table):
            raise SpecError(
                "workload",
                f"table {table} exists on the endpoint target and Benchwright did not create it "
                f"(it is not named in {MARKER_TABLE}): drop or rename it yourself, or use "
                "another database; Benchwright never drops a table it did not create",
            )
    drop_tables(db, [*sorted(mine), *identity.tables])


def drop_tables(db: Any, tables: list[str]) -> None:
    """Drop ``tables`` whatever foreign keys join them (pgbench -I f, TPC-C): a table another one of
    them still references is dropped in a later pass. A table referenced from outside the list is
    never forced (no CASCADE on a user's constraint): that is an error naming both."""
    pending = list(dict.fromkeys(tables))
    while pending:
        refused: list[tuple[str, Exception]] = []
        for table in pending:
            try:
                db.execute(f"DROP TABLE IF EXISTS {table}")
            except Exception as exc:  # the engine's own error: a foreign key still points here
                refused.append((table, exc))
        if len(refused) == len(pending):
            first, why = refused[0]
            raise SpecError(
                "workload", f"cannot drop table {first} to reset the target: {str(why).splitlines()[0]}"
            ) from None
        pending = [table for table, _ in refused]


def adopt(
    driver: Driver, identity: DatasetIdentity, properties: Mapping[str, str], setup: Callable[[], None]
) -> None:
    """For a workload whose run phase makes its own data (a SQL script's init, redis-bench's keys):
    another dataset Benchwright owns is cleared first, ``setup`` runs, and the marker then names this
    dataset. Tables the init found already there are never owned (a user's tables stay theirs), nor
    is a Redis database that held keys without a marker (a later load would flush them)."""
    if not (_is_redis(driver) or _is_sql(driver)):
        setup()
        return
    marker = read_marker(driver)
    same = marker is not None and not identity.differences(marker[0])
    if marker is not None and not same:
        _drop_owned(driver, marker[2])
    owned = set(marker[2]) if marker is not None and same else set()
    if _is_redis(driver):
        ours = marker is not None or int(driver.command("DBSIZE")) == 0  # type: ignore[attr-defined]
        setup()
        if ours:
            write_marker(driver, identity, complete=True)
        return
    db: SqlDriver = driver  # type: ignore[assignment]
    existed = {t for t in identity.tables if t not in owned and db.table_exists(t)}
    setup()
    write_marker(driver, identity, complete=True, owned=sorted(owned | (set(identity.tables) - existed)))


def _drop_owned(driver: Driver, owned: list[str]) -> None:
    if _is_redis(driver):
        driver.command("FLUSHDB")  # type: ignore[attr-defined]
        return
    drop_tables(driver, list(owned))


def _reset_redis(driver: Any, marked: bool, endpoint: bool, properties: Mapping[str, str]) -> None:
    size = int(driver.command("DBSIZE"))
    if size == 0:
        return
    if not marked and endpoint:
        db = properties.get("redis.db", "0")
        sample = driver.command("RANDOMKEY")
        name = sample.decode() if isinstance(sample, bytes) else sample
        raise SpecError(
            "target.db",
            f"Redis database {db} on the endpoint target holds {size} key(s) Benchwright did not "
            f"write (no {MARKER_KEY} marker; one is {name!r}): flush it yourself or pick another "
            "database; Benchwright never flushes data it did not create",
        )
    driver.command("FLUSHDB")


# ---------------------------------------------------------------- after a load, before a run
def count_problems(driver: Any, identity: DatasetIdentity, exact: bool) -> list[str]:
    """Row (key) counts against the identity: exact after a load, at least before a run (a run
    phase may insert)."""
    out = []
    for table, want in identity.rows.items():
        have = int(driver.count(table)) if _is_redis(driver) else _sql_count(driver, table)
        if have < want or (exact and have != want):
            out.append(f"{table} holds {have} record(s), {want} wanted")
    return out


def _sql_count(driver: SqlDriver, table: str) -> int:
    row = driver.fetchone(f"SELECT COUNT(*) FROM {table}")
    return int(row[0]) if row else 0


def column_problems(driver: Driver, identity: DatasetIdentity) -> list[str]:
    """The columns of each table the identity fixes, compared by name (case-insensitive)."""
    if not _is_sql(driver) or not identity.columns:
        return []
    db: SqlDriver = driver  # type: ignore[assignment]
    schema = "current_schema()" if db.dialect == "postgres" else "DATABASE()"
    out = []
    for table, want in identity.columns.items():
        rows = db.fetchall(
            "SELECT column_name FROM information_schema.columns WHERE table_schema = "
            f"{schema} AND lower(table_name) = lower(%s)",
            (table,),
        )
        have = sorted(str(r[0]).lower() for r in rows)
        if have != sorted(c.lower() for c in want):
            out.append(f"table {table} has columns {', '.join(have) or 'none'}; wanted {', '.join(want)}")
    return out


def check_reuse(driver: Driver, identity: DatasetIdentity, sample: Any) -> tuple[list[str], str | None]:
    """Before a run or warm-up phase: is the target's data this cell's? With a marker: the identity
    it names, its completeness, the counts and one sampled record. Without one (data loaded by
    another tool, or before markers): the data itself, and a note saying the marker was missing.
    Returns (what differs, a note or None)."""
    marker = read_marker(driver)
    if marker is None:
        name = MARKER_TABLE if _is_sql(driver) else MARKER_KEY
        note = f"no {name} marker on the target: its data was checked, not its origin"
        out = count_problems(driver, identity, exact=False) + column_problems(driver, identity)
        return (out or list(sample(driver))), note
    found, complete, _ = marker
    out = [f"the target holds another dataset: {d}" for d in identity.differences(found)]
    if not out and not complete:
        out.append("the load of this dataset did not complete or failed its checks")
    if not out:
        out = count_problems(driver, identity, exact=False) or list(sample(driver))
    return out, None


def check_load(driver: Driver, identity: DatasetIdentity, sample: Any) -> list[str]:
    """After a load: exact counts, the columns, then ``sample(driver)``'s problems with one record
    (the workload reads one of its own records and compares its shape)."""
    out = count_problems(driver, identity, exact=True) + column_problems(driver, identity)
    return out or list(sample(driver))
