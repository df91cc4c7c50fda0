"""TPC-C as a Benchwright workload: parallel load by warehouse, the five transactions, tpmC, and the
consistency checks.

Properties (all optional):
  tpcc.warehouses   number of warehouses (default 1); the run phase checks the tables hold that many
  tpcc.batch        rows per INSERT while loading (default 500)
  tpcc.mix          percentages New-Order,Payment,Order-Status,Delivery,Stock-Level (default 45,43,4,4,4)
  tpcc.think_time   scale of the spec's keying + think times (default 0 = off, as in "Tiny TPC-C";
                    1 = clause 5.2.5's 18/3/2/2/2 s keying and 12/12/10/5/5 s mean think times)
Each terminal (thread) has a home warehouse (thread mod W) and a fixed district for Stock-Level.
"""

from __future__ import annotations

import functools
import itertools
import math
import random
import time
from collections.abc import Callable, Iterator
from typing import Any, ClassVar

from benchwright.errors import SchemaMissing, SpecError
from benchwright.runner.dataset import DatasetIdentity
from benchwright.runner.drivers.base import Capability, Driver, SqlDriver
from benchwright.runner.event_loop import Request
from benchwright.runner.measure import Status
from benchwright.runner.workloads.base import Operation, ThreadInfo, Workload, register
from benchwright.runner.workloads.sqlscript.sql_calls import SqlCalls, thread_operations
from benchwright.runner.workloads.sqlscript.sqlkit import (
    UserAbort,
    analyze,
    ddl,
    drop_tables,
    percentiles_ms,
    require_tables,
    sql_driver,
)
from benchwright.runner.workloads.tpcc import consistency, loader
from benchwright.runner.workloads.tpcc import transactions as tx
from benchwright.runner.workloads.tpcc.descriptor import DESCRIPTOR
from benchwright.runner.workloads.tpcc.rand import TpccRandom
from benchwright.runner.workloads.tpcc.schema import CREATE, INDEXES, TABLES

TRANSACTIONS = ("NewOrder", "Payment", "OrderStatus", "Delivery", "StockLevel")
DEFAULT_MIX = (45, 43, 4, 4, 4)
KEYING_S = {"NewOrder": 18.0, "Payment": 3.0, "OrderStatus": 2.0, "Delivery": 2.0, "StockLevel": 2.0}
THINK_MEAN_S = {"NewOrder": 12.0, "Payment": 12.0, "OrderStatus": 10.0, "Delivery": 5.0, "StockLevel": 5.0}
LOAD_HINT = "benchwright tpcc load"


def _int(props: dict[str, str], key: str, default: int, low: int = 1) -> int:
    raw = props.get(key, str(default))
    try:
        value = int(raw)
    except ValueError:
        raise SpecError(key, f"expected an integer, got {raw!r}") from None
    if value < low:
        raise SpecError(key, f"must be at least {low}, got {value}")
    return value


@register
class TpccWorkload(Workload):
    name: ClassVar[str] = "tpcc"
    descriptor = DESCRIPTOR
    requires: ClassVar[Capability] = Capability.SQL
    description: ClassVar[str] = "TPC-C: five order-entry transactions, tpmC and consistency checks"

    def __init__(self, properties: dict[str, str]) -> None:
        super().__init__(properties)
        self.warehouses = _int(self.properties, "tpcc.warehouses", 1)
        self.batch = _int(self.properties, "tpcc.batch", 500)
        try:
            self.think_scale = float(self.properties.get("tpcc.think_time", "0") or 0)
        except ValueError:
            raise SpecError("tpcc.think_time", "expected a number (0 = no keying or think time)") from None
        mix = self.properties.get("tpcc.mix", ",".join(map(str, DEFAULT_MIX)))
        try:
            weights = tuple(int(p) for p in mix.split(","))
        except ValueError:
            raise SpecError("tpcc.mix", f"expected five integers, got {mix!r}") from None
        if len(weights) != 5 or sum(weights) != 100 or min(weights) < 0:
            raise SpecError(
                "tpcc.mix", f"expected five non-negative percentages adding up to 100, got {mix!r}"
            )
        self.mix = weights

    # -------------------------------------------------------------- set-up and checks (parent process)
    def setup(self, driver: Driver, phase: str) -> None:
        db = sql_driver(driver, self.name)
        if phase == "load":
            drop_tables(db, TABLES)
            for table in TABLES:
                db.execute(ddl(db.dialect, CREATE[table]))
            return
        require_tables(db, TABLES, LOAD_HINT)
        row = db.fetchone("SELECT COUNT(*) FROM warehouse")
        if row is None:  # the driver holds no data (null driver): nothing to check
            return
        loaded = int(row[0])
        if loaded == 0:
            raise SchemaMissing(f"table warehouse is empty: run the load phase first ({LOAD_HINT})")
        if loaded != self.warehouses:
            raise SpecError(
                "tpcc.warehouses",
                f"the tables hold {loaded} warehouse(s) but the run asks for {self.warehouses}: "
                f"run with --warehouses {loaded} or load again with --warehouses {self.warehouses}",
            )

    def dataset(self, engine: str, phase: str) -> DatasetIdentity:
        """TPC-C's nine tables at a number of warehouses; counted: the tables a run does not grow."""
        w = self.warehouses
        rows = {"warehouse": w, "district": 10 * w, "customer": 30_000 * w, "item": loader.ITEMS,
                "stock": loader.ITEMS * w}  # fmt: skip
        return DatasetIdentity("tpcc", TABLES, rows, {"warehouses": w})

    def finish(self, driver: Driver, phase: str, result: Any) -> None:
        db = sql_driver(driver, self.name)
        if phase == "load":
            self._finish_load(db, result)
        else:
            self._finish_run(db, result)

    def _finish_load(self, db: SqlDriver, result: Any) -> None:
        for statement in INDEXES:
            db.execute(statement)
        analyze(db, TABLES)
        w = self.warehouses
        expected = {
            "warehouse": w,
            "district": 10 * w,
            "customer": 30_000 * w,
            "history": 30_000 * w,
            "orders": 30_000 * w,
            "new_order": 9_000 * w,
            "item": loader.ITEMS,
            "stock": loader.ITEMS * w,
        }
        counts = {}
        for table in (*expected, "order_line"):
            row = db.fetchone(f"SELECT COUNT(*) FROM {table}")
            if row is None:  # the driver holds no data (null driver): nothing to verify
                return
            counts[table] = int(row[0])
        result.extra["rows"] = counts
        result.extra["warehouses"] = w
        wrong = {t: (counts[t], n) for t, n in expected.items() if counts[t] != n}
        if wrong:
            detail = ", ".join(f"{t} has {got} rows, expected {n}" for t, (got, n) in wrong.items())
            result.flag("tpcc_load_incomplete", "invalid", f"TPC-C load incomplete: {detail}")

    def _finish_run(self, db: SqlDriver, result: Any) -> None:
        runtime_s = max(result.runtime_ms / 1000, 1e-9)
        per_tx: dict[str, Any] = {}
        for name in TRANSACTIONS:
            summary = result.operations.get(name)
            if summary is None:
                continue
            unsuccessful = {"retry": result.retried(name), "error": result.failed(name)}  # -FAILED's
            per_tx[name] = {
                **percentiles_ms(summary),
                **{k.lower(): v for k, v in summary.statuses.items()},
                **{k: v for k, v in unsuccessful.items() if v},
            }
        new_orders = result.operations.get("NewOrder")
        done = (
            (new_orders.statuses.get("OK", 0) + new_orders.statuses.get("USER_ABORT", 0)) if new_orders else 0
        )
        total = sum(o.operations for o in result.operations.values()) or 1
        result.extra["transactions"] = per_tx
        result.extra["tpmC"] = round(done * 60 / runtime_s, 2)
        result.extra["warehouses"] = self.warehouses
        result.extra["mix_percent"] = {
            n: round(100 * o.operations / total, 2) for n, o in result.operations.items()
        }
        result.extra["retries"] = sum(o.statuses.get("RETRY", 0) for o in result.operations.values())
        result.extra["user_aborts"] = new_orders.statuses.get("USER_ABORT", 0) if new_orders else 0
        checks = consistency.check(db)
        result.extra["consistency"] = checks
        if checks["ok"]:
            result.flag("tpcc_consistency", "info", "TPC-C consistency conditions 1-4 hold")
        else:
            failed = [k for k, v in checks.items() if k != "ok" and not v["ok"]]
            result.flag(
                "tpcc_consistency", "invalid", f"TPC-C consistency condition(s) {', '.join(failed)} violated"
            )

    # -------------------------------------------------------------- operations (worker threads)
    def operations(self, phase: str, driver: Driver, thread: ThreadInfo) -> Iterator[Operation]:
        db = sql_driver(driver, self.name)
        if phase == "load":
            return self._load_ops(db, thread)
        return thread_operations(self._run(SqlCalls(db), thread))

    def _load_ops(self, db: SqlDriver, thread: ThreadInfo) -> Iterator[Operation]:
        for task in loader.tasks(self.warehouses)[thread.index :: thread.count]:

            def call(task: loader.Task = task) -> Status:
                loader.run_task(db, task, thread.seed, self.batch)
                return Status.OK

            yield f"Load{task[0].capitalize()}", call

    def wire_requests(self, phase: str, driver: Driver, thread: ThreadInfo) -> Iterator[Request] | None:
        """The run's transactions as event-loop requests, from the same draws as ``operations``:
        BEGIN, each statement as soon as the previous one's answer is in, COMMIT (the load stays on
        threads: COPY; keying and think times too: they sleep)."""
        if phase != "run" or self.think_scale > 0 or not isinstance(driver, SqlDriver):
            return None
        wire = driver.sql_wire()
        if wire is None or not hasattr(wire, "dialogue"):
            return None
        return self._run(wire, thread)

    def _run(self, make: Any, thread: ThreadInfo) -> Iterator[Any]:
        """The run phase's one stream: ``make`` builds each transaction, ``SqlCalls`` (threads) or
        the driver's SQL wire (the event loop), from the same draws in the same order. The keying
        and think pauses sleep between a thread's transactions; with ``tpcc.think_time`` 0, the only
        setting the event loop runs (``wire_requests``), they do nothing."""
        rnd, w_id, sl_district, pick = self._terminal(thread)
        r, pause, dialogue = rnd.r, self._pause, make.dialogue
        while True:
            name = pick()
            pause(KEYING_S[name], r, exponential=False)
            # what makes its statements, once per attempt: a thread re-runs one that comes back RETRY
            steps = self._draw(name, rnd, w_id, sl_district)
            yield dialogue(name, steps, aborts=(UserAbort,))
            pause(THINK_MEAN_S[name], r, exponential=True)

    def _terminal(self, thread: ThreadInfo) -> tuple[TpccRandom, int, int, Callable[[], str]]:
        """One terminal's random stream, home warehouse, Stock-Level district and transaction picker."""
        rnd = TpccRandom(thread.seed)
        randint = rnd.r.randint
        w_id = thread.index % self.warehouses + 1
        sl_district = (thread.index // self.warehouses) % tx.DISTRICTS + 1
        bounds = list(itertools.accumulate(self.mix))

        def pick() -> str:
            draw = randint(1, 100)
            return TRANSACTIONS[next(i for i, b in enumerate(bounds) if draw <= b)]

        return rnd, w_id, sl_district, pick

    def _pause(self, seconds: float, r: random.Random, exponential: bool) -> None:
        """Keying / think time, outside the timed region; off unless tpcc.think_time > 0."""
        if self.think_scale <= 0:
            return
        delay = seconds * self.think_scale
        if exponential:
            delay = min(-delay * math.log(max(r.random(), 1e-12)), 10 * delay)
        time.sleep(delay)

    def _draw(self, name: str, rnd: TpccRandom, w_id: int, sl_district: int) -> Callable[[], tx.Steps]:
        """Draw the transaction's inputs now (untimed); returns what makes its statements (once per
        attempt: a thread re-runs a transaction that comes back RETRY)."""
        r = rnd.r
        if name == "NewOrder":
            return functools.partial(tx.new_order_steps, self.draw_new_order(rnd, w_id))
        if name == "Payment":
            d_id = r.randint(1, 10)
            c_w_id, c_d_id = w_id, d_id
            if self.warehouses > 1 and r.randint(1, 100) > 85:
                c_w_id = r.choice([w for w in range(1, self.warehouses + 1) if w != w_id])
                c_d_id = r.randint(1, 10)
            by_name = r.randint(1, 100) <= 60
            p = tx.PaymentInput(
                w_id,
                d_id,
                c_w_id,
                c_d_id,
                None if by_name else rnd.customer_id(),
                rnd.last_name_run() if by_name else "",
                rnd.money(100, 500_000),
            )
            return functools.partial(tx.payment_steps, p)
        if name == "OrderStatus":
            by_name = r.randint(1, 100) <= 60
            s = tx.OrderStatusInput(
                w_id,
                r.randint(1, 10),
                None if by_name else rnd.customer_id(),
                rnd.last_name_run() if by_name else "",
            )
            return functools.partial(tx.order_status_steps, s)
        if name == "Delivery":
            return functools.partial(tx.delivery_steps, w_id, r.randint(1, 10))
        return functools.partial(tx.stock_level_steps, w_id, sl_district, r.randint(10, 20))

    def draw_new_order(self, rnd: TpccRandom, w_id: int) -> tx.NewOrderInput:
        """5..15 order lines; 1% of New-Orders end with an unused item and roll back (2.4.1.4/5);
        1% of lines come from a remote warehouse when there is more than one."""
        r = rnd.r
        count = r.randint(5, 15)
        rollback = r.randint(1, 100) == 1
        lines = []
        for number in range(count):
            item = loader.ITEMS + 1 if rollback and number == count - 1 else rnd.item_id()
            supply = w_id
            if self.warehouses > 1 and r.randint(1, 100) == 1:
                supply = r.choice([w for w in range(1, self.warehouses + 1) if w != w_id])
            lines.append((item, supply, r.randint(1, 10)))
        return tx.NewOrderInput(w_id, r.randint(1, 10), rnd.customer_id(), tuple(lines))
