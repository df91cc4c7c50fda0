"""OLTP with sysbench's semantics (workload "oltp"): sbtest1..N tables and the oltp_* events.

Properties (sysbench's option names with an ``oltp.`` prefix, same defaults):
  oltp.test          read_write (default) | read_only | write_only | point_select
  oltp.tables (1), oltp.table_size (10000), oltp.range_size (100), oltp.point_selects (10),
  oltp.simple_ranges, oltp.sum_ranges, oltp.order_ranges, oltp.distinct_ranges (1 each),
  oltp.index_updates, oltp.non_index_updates, oltp.delete_inserts (1 each), oltp.skip_trx (false)
  oltp.rand_type (special) | uniform | gaussian | pareto | zipfian, with oltp.rand_spec_iter (12),
  oltp.rand_spec_pct (1), oltp.rand_spec_res (75), oltp.rand_pareto_h (0.2), oltp.rand_zipfian_exp (0.8)
One operation is one sysbench event (a transaction); queries are counted by kind (read / write /
other = BEGIN and COMMIT) as sysbench reports them. Every id (point selects, range starts, updates,
delete+insert, and k at prepare) is drawn from oltp.rand_type as sysbench draws it (rand.py); each
group of statements picks its table uniformly once, as sysbench does.
Deadlocks, and duplicate keys from concurrent delete+insert of one id, count as RETRY: sysbench
ignores exactly these errors too.
"""

from __future__ import annotations

import functools
import random
from collections.abc import Iterator
from typing import Any, ClassVar

from benchwright.errors import SchemaMissing, SpecError
from benchwright.runner.dataset import DatasetIdentity
from benchwright.runner.drivers.base import Capability, Driver, SqlDriver
from benchwright.runner.event_loop import Request
from benchwright.runner.measure import Status
from benchwright.runner.workloads.base import BLOCK, Operation, ThreadInfo, Workload, register, requests_of
from benchwright.runner.workloads.oltp.descriptor import DEFAULTS, DESCRIPTOR
from benchwright.runner.workloads.oltp.rand import IdDraw, RandSpec
from benchwright.runner.workloads.sqlscript.sql_calls import SqlCalls, thread_operations
from benchwright.runner.workloads.sqlscript.sqlkit import (
    analyze,
    drop_tables,
    insert_rows,
    percentiles_ms,
    require_tables,
    sql_driver,
)

TESTS = ("read_write", "read_only", "write_only", "point_select")
COUNTS = (
    "point_selects",
    "simple_ranges",
    "sum_ranges",
    "order_ranges",
    "distinct_ranges",
    "index_updates",
    "non_index_updates",
    "delete_inserts",
)
LOAD_HINT = "benchwright oltp prepare"
CHUNK = 10_000  # rows per load operation
C_GROUPS, PAD_GROUPS = 10, 5  # sysbench: 10 (c) and 5 (pad) groups of 11 random digits joined by '-'


def random_digits(rnd: random.Random, groups: int) -> str:
    return "-".join(f"{rnd.randrange(10**11):011d}" for _ in range(groups))


class OltpSettings:
    """The options, validated once."""

    def __init__(self, props: dict[str, str]) -> None:
        self.test = props.get("oltp.test", "read_write").removeprefix("oltp_")
        if self.test not in TESTS:
            raise SpecError("oltp.test", f"unknown test {self.test!r} (one of {', '.join(TESTS)})")
        values: dict[str, int] = {}
        for key, default in DEFAULTS.items():
            raw = props.get(f"oltp.{key}", str(default))
            try:
                values[key] = int(raw)
            except ValueError:
                raise SpecError(f"oltp.{key}", f"expected an integer, got {raw!r}") from None
            low = 1 if key in ("tables", "table_size", "range_size") else 0
            if values[key] < low:
                raise SpecError(f"oltp.{key}", f"must be at least {low}, got {values[key]}")
        self.tables = values["tables"]
        self.table_size = values["table_size"]
        self.range_size = values["range_size"]
        reads = self.test in ("read_write", "read_only")
        writes = self.test in ("read_write", "write_only")
        self.counts = {
            k: (values[k] if (reads and k in COUNTS[:5]) or (writes and k in COUNTS[5:]) else 0)
            for k in COUNTS
        }
        self.skip_trx = props.get("oltp.skip_trx", "false").lower() in ("1", "true", "on", "yes")
        self.batch = int(props.get("oltp.batch", "1000"))
        self.rand = RandSpec.from_properties(props)

    def queries_per_event(self) -> dict[str, int]:
        """How many queries of each kind one event sends (what sysbench's counters add up)."""
        if self.test == "point_select":
            return {"read": 1, "write": 0, "other": 0}
        c = self.counts
        read = (
            c["point_selects"]
            + c["simple_ranges"]
            + c["sum_ranges"]
            + c["order_ranges"]
            + c["distinct_ranges"]
        )
        write = c["index_updates"] + c["non_index_updates"] + 2 * c["delete_inserts"]
        return {"read": read, "write": write, "other": 0 if self.skip_trx else 2}


def table_names(n: int) -> list[str]:
    return [f"sbtest{i}" for i in range(1, n + 1)]


@register
class OltpWorkload(Workload):
    name: ClassVar[str] = "oltp"
    descriptor = DESCRIPTOR
    requires: ClassVar[Capability] = Capability.SQL
    description: ClassVar[str] = "sysbench's oltp_read_write / read_only / write_only / point_select"

    def __init__(self, properties: dict[str, str]) -> None:
        super().__init__(properties)
        self.s = OltpSettings(self.properties)

    @property
    def op_name(self) -> str:
        return f"oltp_{self.s.test}"

    def setup(self, driver: Driver, phase: str) -> None:
        db = sql_driver(driver, self.name)
        names = table_names(self.s.tables)
        if phase == "load":
            drop_tables(db, names)
            for table in names:
                if db.dialect == "mysql":
                    db.execute(
                        f"CREATE TABLE {table} (id INTEGER NOT NULL AUTO_INCREMENT, k INTEGER DEFAULT '0' NOT NULL,"
                        " c CHAR(120) DEFAULT '' NOT NULL, pad CHAR(60) DEFAULT '' NOT NULL, PRIMARY KEY (id))"
                        " ENGINE=InnoDB"
                    )
                else:
                    db.execute(
                        f"CREATE TABLE {table} (id SERIAL, k INTEGER DEFAULT '0' NOT NULL,"
                        " c CHAR(120) DEFAULT '' NOT NULL, pad CHAR(60) DEFAULT '' NOT NULL, PRIMARY KEY (id))"
                    )
            return
        require_tables(db, names, LOAD_HINT)
        row = db.fetchone(f"SELECT MAX(id) FROM {names[-1]}")
        if row is not None and row[0] is None:  # (no row at all: a driver without data, e.g. null)
            raise SchemaMissing(f"table {names[-1]} is empty: run the load phase first ({LOAD_HINT})")

    def dataset(self, engine: str, phase: str) -> DatasetIdentity:
        """sysbench's sbtest tables: how many, and the rows each holds (its ids run 1..table_size)."""
        names = table_names(self.s.tables)
        shape = {"tables": self.s.tables, "table_size": self.s.table_size}
        return DatasetIdentity("oltp", tuple(names), dict.fromkeys(names, self.s.table_size), shape)

    def finish(self, driver: Driver, phase: str, result: Any) -> None:
        db = sql_driver(driver, self.name)
        names = table_names(self.s.tables)
        record_distribution(result, self.s.rand)
        if phase == "load":
            for i, table in enumerate(names, 1):
                db.execute(f"CREATE INDEX k_{i} ON {table}(k)")
            analyze(db, names)
            rows = {t: int((db.fetchone(f"SELECT COUNT(*) FROM {t}") or (0,))[0]) for t in names}
            result.extra["rows"] = rows
            if any(n != self.s.table_size for n in rows.values()):
                result.flag("oltp_load_incomplete", "invalid", f"sbtest tables incomplete: {rows}")
            return
        summary = result.operations.get(self.op_name)
        runtime_s = max(result.runtime_ms / 1000, 1e-9)
        events = summary.statuses.get("OK", 0) if summary else 0
        per = self.s.queries_per_event()
        queries = {kind: n * events for kind, n in per.items()}
        queries["total"] = sum(queries.values())
        result.extra.update(
            test=self.op_name,
            transactions=events,
            tps=round(events / runtime_s, 3),
            qps=round(queries["total"] / runtime_s, 3),
            queries=queries,
            queries_per_second={k: round(v / runtime_s, 3) for k, v in queries.items()},
            ignored_errors=result.retried(self.op_name),
            latency_ms=percentiles_ms(summary) if summary else {},
        )

    # -------------------------------------------------------------- workers
    def operations(self, phase: str, driver: Driver, thread: ThreadInfo) -> Iterator[Operation]:
        db = sql_driver(driver, self.name)
        if phase == "load":
            return self._load_ops(db, thread)
        # a RETRY (a deadlock, a duplicate key) is counted and the next event drawn, as in sysbench
        return thread_operations(self._run(SqlCalls(db, tries=1), thread))

    def _load_ops(self, db: SqlDriver, thread: ThreadInfo) -> Iterator[Operation]:
        size = self.s.table_size
        tasks = [(t, lo) for t in table_names(self.s.tables) for lo in range(1, size + 1, CHUNK)]
        rnd = random.Random(thread.seed)
        draw_k = self.s.rand.drawer(1, size, rnd)  # sysbench's prepare draws k with --rand-type too
        for table, lo in tasks[thread.index :: thread.count]:
            rows = (
                (i, draw_k(), random_digits(rnd, C_GROUPS), random_digits(rnd, PAD_GROUPS))
                for i in range(lo, min(size, lo + CHUNK - 1) + 1)
            )
            yield "LoadRows", functools.partial(_load, db, table, rows, self.s.batch)

    def wire_requests(self, phase: str, driver: Driver, thread: ThreadInfo) -> Iterator[Request] | None:
        """The run's events as event-loop requests, from the same draws as ``operations``: a point
        select on its own, or BEGIN, the event's statements and COMMIT, one round trip each (the
        load stays on threads)."""
        wire = driver.sql_wire() if phase == "run" and isinstance(driver, SqlDriver) else None
        return None if wire is None else self._run(wire, thread)

    def _run(self, make: Any, thread: ThreadInfo) -> Iterator[Any]:
        """The run phase's one stream: ``make`` builds each event, ``SqlCalls`` (threads) or the
        driver's SQL wire (the event loop), from the same draws in the same order."""
        rnd = random.Random(thread.seed)
        if self.s.test == "point_select":
            return requests_of(self._point_select_blocks(make, rnd), thread)
        return self._transactions(make.transaction, rnd, self.s.rand.drawer(1, self.s.table_size, rnd))

    def _point_select_blocks(self, make: Any, rnd: random.Random) -> Iterator[list[Any]]:
        """Point selects ``BLOCK`` at a time: a select's draws depend on no reply, and a generator
        step per select was half of the client's user time per select on the compiled loop."""
        name = self.op_name
        selects = [f"SELECT c FROM {t} WHERE id = %s" for t in table_names(self.s.tables)]
        if len(selects) == 1:  # one table: nothing to choose, the ids drawn a block at a time
            draw_ids = self.s.rand.block_drawer(1, self.s.table_size, rnd)
            while True:
                yield make.int_statements(name, selects[0], draw_ids(BLOCK))
        draw_id = self.s.rand.drawer(1, self.s.table_size, rnd)
        choice = rnd.choice
        slots = range(BLOCK)
        statement = make.statement
        while True:
            yield [statement(name, choice(selects), (draw_id(),)) for _ in slots]

    def _transactions(self, transaction: Any, rnd: random.Random, draw_id: IdDraw) -> Iterator[Any]:
        """One event at a time: an event's draws cost tens of microseconds, so a block of them would
        hold up the other connections' replies, and one step per event is small beside its round
        trips."""
        name = self.op_name
        block = not self.s.skip_trx
        while True:
            statements = [(sql, params) for sql, params, _ in self._event(rnd, draw_id)]
            # a concurrent delete+insert of one id: sysbench ignores it, both executors say RETRY
            yield transaction(name, statements, block=block, retry_on=("UniqueViolation",))

    def _event(
        self, rnd: random.Random, draw_id: IdDraw | None = None
    ) -> list[tuple[str, tuple[Any, ...], bool]]:
        """One event's statements with their parameters, drawn before timing: (sql, params, fetch).
        As in sysbench, each group of statements (the point selects, each kind of range, ...) picks
        one table uniformly and every id comes from the configured distribution."""
        s, c = self.s, self.s.counts
        if draw_id is None:
            draw_id = s.rand.drawer(1, s.table_size, rnd)
        tables = table_names(s.tables)
        out: list[tuple[str, tuple[Any, ...], bool]] = []
        table = rnd.choice(tables)
        for _ in range(c["point_selects"]):
            out.append((f"SELECT c FROM {table} WHERE id = %s", (draw_id(),), True))
        ranges = (
            ("simple_ranges", "SELECT c FROM {t} WHERE id BETWEEN %s AND %s"),
            ("sum_ranges", "SELECT SUM(k) FROM {t} WHERE id BETWEEN %s AND %s"),
            ("order_ranges", "SELECT c FROM {t} WHERE id BETWEEN %s AND %s ORDER BY c"),
            ("distinct_ranges", "SELECT DISTINCT c FROM {t} WHERE id BETWEEN %s AND %s ORDER BY c"),
        )
        for key, template in ranges:
            sql = template.format(t=rnd.choice(tables))
            for _ in range(c[key]):
                lo = draw_id()
                out.append((sql, (lo, lo + s.range_size - 1), True))
        table = rnd.choice(tables)
        for _ in range(c["index_updates"]):
            out.append((f"UPDATE {table} SET k = k + 1 WHERE id = %s", (draw_id(),), False))
        table = rnd.choice(tables)
        for _ in range(c["non_index_updates"]):
            sql = f"UPDATE {table} SET c = %s WHERE id = %s"
            out.append((sql, (random_digits(rnd, C_GROUPS), draw_id()), False))
        table = rnd.choice(tables)
        for _ in range(c["delete_inserts"]):
            row_id = draw_id()
            out.append((f"DELETE FROM {table} WHERE id = %s", (row_id,), False))
            row = (row_id, draw_id(), random_digits(rnd, C_GROUPS), random_digits(rnd, PAD_GROUPS))
            out.append((f"INSERT INTO {table} (id, k, c, pad) VALUES (%s, %s, %s, %s)", row, False))
        return out


def record_distribution(result: Any, rand: RandSpec) -> None:
    """Say in the result which id distribution ran: the properties hold only what was given, and a
    reader comparing with sysbench needs the defaults too."""
    result.extra["rand"] = {"rand_type": rand.type, **rand.knobs()}
    note = f"row ids drawn as sysbench --rand-type={rand.describe()}"
    if note not in result.measurement.method:
        result.measurement.method = f"{result.measurement.method}; {note}"


def _load(db: SqlDriver, table: str, rows: Iterator[tuple[Any, ...]], batch: int) -> Status:
    insert_rows(db, table, ("id", "k", "c", "pad"), rows, batch)
    return Status.OK
