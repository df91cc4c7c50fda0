"""TPC-B "sort of", pgbench-compatible (workload "tpcb").

Properties:
  tpcb.scale       load: scale factor (default 1); run: must match the loaded tables when given
  tpcb.fillfactor  load: fillfactor of the three updated tables (default 100, as pgbench)
  tpcb.script      tpcb-like (default) | simple-update | select-only (pgbench -b, -N, -S)
  tpcb.protocol    simple | extended | prepared: recorded for the reader; psycopg prepares a
                   statement server-side after a few executions in every mode
  tpcb.init_steps  load: pgbench -I's steps in order, from d (drop), t (create tables), g (generate,
                   client-side), v (vacuum analyze), p (primary keys), f (foreign keys); default dtgvp.
                   Each step's seconds land in the document's extra.init_steps, as pgbench prints them.
Rate limiting (pgbench -R) is the engine's target rate; latency then runs from the scheduled start
and the schedule lag (response minus service time) is reported as pgbench does.
"""

from __future__ import annotations

import random
import time
from collections.abc import Iterator
from math import floor
from typing import Any, ClassVar

from benchwright.errors import SchemaMissing, SpecError
from benchwright.runner.dataset import DatasetIdentity
from benchwright.runner.drivers.base import Capability, Driver, SqlDriver
from benchwright.runner.event_loop import Request
from benchwright.runner.measure import Status, decode_histogram
from benchwright.runner.workloads.base import BLOCK, Operation, ThreadInfo, Workload, register, requests_of
from benchwright.runner.workloads.sqlscript.sql_calls import SqlCalls, thread_operations
from benchwright.runner.workloads.sqlscript.sqlkit import (
    analyze,
    drop_tables,
    insert_rows,
    require_tables,
    sql_driver,
)
from benchwright.runner.workloads.tpcb import schema
from benchwright.runner.workloads.tpcb.descriptor import DESCRIPTOR

SCRIPTS = {
    "tpcb-like": "<builtin: TPC-B (sort of)>",
    "simple-update": "<builtin: simple update>",
    "select-only": "<builtin: select only>",
}
LOAD_HINT = "benchwright tpcb init"
# pgbench -I's step letters and the names its "done in" line gives them
INIT_STEPS = {
    "d": "drop tables",
    "t": "create tables",
    "g": "client-side generate",
    "v": "vacuum",
    "p": "primary keys",
    "f": "foreign keys",
}
DEFAULT_INIT_STEPS = "dtgvp"


def _positive(props: dict[str, str], key: str, default: str, high: int | None = None) -> int:
    raw = props.get(key, default)
    try:
        value = int(raw)
    except ValueError:
        raise SpecError(key, f"expected an integer, got {raw!r}") from None
    if value < 1 or (high is not None and value > high):
        raise SpecError(key, f"must be between 1 and {high or 'any'}, got {value}")
    return value


@register
class TpcbWorkload(Workload):
    name: ClassVar[str] = "tpcb"
    descriptor = DESCRIPTOR
    requires: ClassVar[Capability] = Capability.SQL
    description: ClassVar[str] = (
        "pgbench's TPC-B-like, simple-update and select-only scripts on pgbench's tables"
    )

    def __init__(self, properties: dict[str, str]) -> None:
        super().__init__(properties)
        self.scale_given = "tpcb.scale" in self.properties
        self.scale = _positive(self.properties, "tpcb.scale", "1")
        self.fillfactor = _positive(self.properties, "tpcb.fillfactor", "100", high=100)
        if self.fillfactor < 10:
            raise SpecError(
                "tpcb.fillfactor", f"must be between 10 and 100 (as pgbench), got {self.fillfactor}"
            )
        self.script = self.properties.get("tpcb.script", "tpcb-like")
        if self.script not in SCRIPTS:
            raise SpecError("tpcb.script", f"unknown script {self.script!r} (one of {', '.join(SCRIPTS)})")
        self.batch = _positive(self.properties, "tpcb.batch", "1000")
        self.init_steps = init_steps(self.properties.get("tpcb.init_steps", DEFAULT_INIT_STEPS))
        self._step_seconds: list[tuple[str, float]] = []
        self._generate_from = 0.0

    # -------------------------------------------------------------- parent: schema and checks
    def setup(self, driver: Driver, phase: str) -> None:
        db = sql_driver(driver, self.name)
        if phase == "load":
            self._step_seconds = []
            if "d" in self.init_steps:
                self._timed("d", lambda: drop_tables(db, schema.TABLES))
            if "t" in self.init_steps:
                statements = schema.create_statements(db.dialect, self.scale, self.fillfactor)
                self._timed("t", lambda: [db.execute(statement) for statement in statements])
            self._generate_from = time.perf_counter()
            return
        require_tables(db, schema.RUN_TABLES, LOAD_HINT)
        loaded = loaded_scale(db)
        if loaded is None:  # the driver holds no data (null driver): nothing to check
            return
        if loaded == 0:
            raise SchemaMissing(f"table pgbench_branches is empty: run the load phase first ({LOAD_HINT})")
        if self.scale_given and loaded != self.scale:
            raise SpecError(
                "tpcb.scale",
                f"the pgbench tables were initialised with scale {loaded} but the run asks for scale "
                f"{self.scale}: drop -s (the scale is read from pgbench_branches) or run `{LOAD_HINT} -s {self.scale}`",
            )

    def dataset(self, engine: str, phase: str) -> DatasetIdentity:
        """pgbench's tables at a scale. A run without ``tpcb.scale`` takes the loaded one (as
        pgbench does): its identity leaves the scale (and the load's fillfactor) open."""
        if phase != "load" and not self.scale_given:
            return DatasetIdentity("tpcb", schema.TABLES, {}, {"scale": None, "fillfactor": None})
        s = self.scale
        rows = {"pgbench_branches": s, "pgbench_tellers": s * schema.TELLERS_PER_BRANCH,
                "pgbench_accounts": s * schema.ACCOUNTS_PER_BRANCH}  # fmt: skip
        fillfactor = self.fillfactor if phase == "load" else None
        return DatasetIdentity("tpcb", schema.TABLES, rows, {"scale": s, "fillfactor": fillfactor})

    def finish(self, driver: Driver, phase: str, result: Any) -> None:
        db = sql_driver(driver, self.name)
        if phase == "load":
            if "g" in self.init_steps:
                self._step_seconds.append(("g", time.perf_counter() - self._generate_from))
            for step in self.init_steps.lstrip("dtg"):
                if step == "v":
                    self._timed("v", lambda: analyze(db, schema.TABLES))
                else:
                    keys = schema.PRIMARY_KEYS if step == "p" else schema.foreign_keys()
                    self._timed(step, lambda keys=keys: [db.execute(statement) for statement in keys])
            result.extra["init_steps"] = [[INIT_STEPS[k], round(s, 6)] for k, s in self._step_seconds]
            if "g" not in self.init_steps:
                result.extra.update(scale=self.scale, fillfactor=self.fillfactor)
                return
            counts = {t: _count(db, t) for t in ("pgbench_branches", "pgbench_tellers", "pgbench_accounts")}
            result.extra.update(scale=self.scale, fillfactor=self.fillfactor, rows=counts)
            expected = {
                "pgbench_branches": self.scale,
                "pgbench_tellers": self.scale * schema.TELLERS_PER_BRANCH,
                "pgbench_accounts": self.scale * schema.ACCOUNTS_PER_BRANCH,
            }
            if counts != expected:
                result.flag(
                    "tpcb_load_incomplete",
                    "invalid",
                    f"pgbench tables incomplete: {counts}, expected {expected}",
                )
            return
        result.extra.update(run_figures(result, self.script, loaded_scale(db) or self.scale, self.properties))

    def _timed(self, step: str, call: Any) -> None:
        """Run one init step and keep its seconds for the document (pgbench's "done in" line)."""
        start = time.perf_counter()
        call()
        self._step_seconds.append((step, time.perf_counter() - start))

    # -------------------------------------------------------------- workers
    def operations(self, phase: str, driver: Driver, thread: ThreadInfo) -> Iterator[Operation]:
        db = sql_driver(driver, self.name)
        if phase == "load":
            return self._load_ops(db, thread) if "g" in self.init_steps else iter(())
        return thread_operations(self._run(db, SqlCalls(db), thread))

    def _load_ops(self, db: SqlDriver, thread: ThreadInfo) -> Iterator[Operation]:
        tasks = [0, *range(1, self.scale + 1)]  # 0 = branches and tellers, n = branch n's accounts
        for task in tasks[thread.index :: thread.count]:

            def call(task: int = task) -> Status:
                if task == 0:
                    insert_rows(
                        db, "pgbench_branches", ("bid", "bbalance", "filler"), schema.branch_rows(self.scale)
                    )
                    insert_rows(
                        db,
                        "pgbench_tellers",
                        ("tid", "bid", "tbalance", "filler"),
                        schema.teller_rows(self.scale),
                    )
                else:
                    insert_rows(
                        db,
                        "pgbench_accounts",
                        ("aid", "bid", "abalance", "filler"),
                        schema.account_rows(task),
                        self.batch,
                    )
                return Status.OK

            yield ("LoadBranchesTellers" if task == 0 else "LoadAccounts"), call

    def wire_requests(self, phase: str, driver: Driver, thread: ThreadInfo) -> Iterator[Request] | None:
        """The run's transactions as event-loop requests: BEGIN, the script's statements and END,
        one round trip each, as pgbench sends them (the load stays on threads: COPY)."""
        if phase != "run" or not isinstance(driver, SqlDriver):
            return None
        wire = driver.sql_wire()
        return None if wire is None else self._run(driver, wire, thread)

    def _run(self, db: SqlDriver, make: Any, thread: ThreadInfo) -> Iterator[Any]:
        """The run phase's one stream: ``make`` builds each transaction, ``SqlCalls`` (threads) or
        the driver's SQL wire (the event loop), from the same draws in the same order."""
        # read once, before the stream (tests/runner/test_executor_parity_sql.py compares the
        # statements each executor sends)
        scale = (self.scale if self.scale_given else loaded_scale(db)) or self.scale
        rng = random.Random(thread.seed)
        if self.script == "select-only" and hasattr(make, "uniform_selects"):
            # one at a time, in C on the wires: uniform in [1, accounts] as pgbench's random(1,
            # naccounts), from one random() each (randint costs three Python calls more)
            accounts = schema.ACCOUNTS_PER_BRANCH * scale
            selects = make.uniform_selects(self.script, SELECT_ABALANCE, rng, 1, accounts)
            if selects is not None:
                return selects  # type: ignore[no-any-return]
        return requests_of(self._blocks(scale, make, rng), thread)

    def _blocks(self, scale: int, make: Any, rnd: random.Random) -> Iterator[list[Any]]:
        """The transactions ``BLOCK`` at a time: their draws depend on no reply, and a generator step
        per select-only transaction was half of the client's user time on the compiled loop."""
        accounts = schema.ACCOUNTS_PER_BRANCH * scale
        tellers = schema.TELLERS_PER_BRANCH * scale
        randint = rnd.randint
        name = self.script
        slots = range(BLOCK)
        if name == "select-only":  # where the C draws are not built: the same ids, 64 at a time
            selects, draw = make.int_statements, rnd.random
            while True:
                yield selects(name, SELECT_ABALANCE, [1 + floor(draw() * accounts) for _ in slots])
        transaction = make.transaction
        tpcb_like = name == "tpcb-like"

        def script() -> list[tuple[str, tuple[int, ...]]]:
            aid, bid, tid, delta = (
                randint(1, accounts),
                randint(1, scale),
                randint(1, tellers),
                randint(-5000, 5000),
            )
            statements = [(UPDATE_ACCOUNTS, (delta, aid)), (SELECT_ABALANCE, (aid,))]
            if tpcb_like:
                statements += [(UPDATE_TELLERS, (delta, tid)), (UPDATE_BRANCHES, (delta, bid))]
            statements.append((INSERT_HISTORY, (tid, bid, aid, delta)))
            return statements

        while True:
            yield [transaction(name, script()) for _ in slots]


def init_steps(steps: str) -> str:
    """pgbench -I's step string, checked: known letters, each once, in an order this workload can run
    (drop and create before generating, generating before vacuum and keys)."""
    unknown = sorted(set(steps) - set(INIT_STEPS) - {" "})
    if "G" in unknown:
        raise SpecError("tpcb.init_steps", "G (server-side generate) is not implemented: use g")
    if unknown:
        raise SpecError(
            "tpcb.init_steps", f"unknown step(s) {''.join(unknown)!r}: allowed are {''.join(INIT_STEPS)}"
        )
    steps = steps.replace(" ", "")
    if len(set(steps)) != len(steps):
        raise SpecError("tpcb.init_steps", f"a step is given twice in {steps!r}")
    phases = ["dt".find(c) if c in "dt" else 2 if c == "g" else 3 for c in steps]
    if phases != sorted(phases):
        raise SpecError(
            "tpcb.init_steps", f"{steps!r}: d and t must come first, then g, then v, p and f in any order"
        )
    return steps


UPDATE_ACCOUNTS = "UPDATE pgbench_accounts SET abalance = abalance + %s WHERE aid = %s"
SELECT_ABALANCE = "SELECT abalance FROM pgbench_accounts WHERE aid = %s"
UPDATE_TELLERS = "UPDATE pgbench_tellers SET tbalance = tbalance + %s WHERE tid = %s"
UPDATE_BRANCHES = "UPDATE pgbench_branches SET bbalance = bbalance + %s WHERE bid = %s"
INSERT_HISTORY = (
    "INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (%s, %s, %s, %s, CURRENT_TIMESTAMP)"
)


def _count(db: SqlDriver, table: str) -> int:
    row = db.fetchone(f"SELECT COUNT(*) FROM {table}")
    return int(row[0]) if row else 0


def loaded_scale(db: SqlDriver) -> int | None:
    """pgbench's own rule: the scale is the number of rows in pgbench_branches (None: no answer,
    as from the null driver)."""
    row = db.fetchone("SELECT COUNT(*) FROM pgbench_branches")
    return int(row[0]) if row else None


def run_figures(result: Any, script: str, scale: int, properties: dict[str, str]) -> dict[str, Any]:
    """pgbench's summary figures for one run document (tps, latency average/stddev, failures, lag)."""
    summary = result.operations.get(script)
    out: dict[str, Any] = {
        "transaction_type": SCRIPTS[script],
        "script": script,
        "scale": scale,
        "query_mode": properties.get("tpcb.protocol", "simple"),
    }
    if summary is None:
        return out
    done = summary.statuses.get("OK", 0)
    failed = result.failed(script)
    out.update(
        transactions=done,
        failed=failed,
        retries=result.retried(script),
        tps=round(done / max(result.runtime_ms / 1000, 1e-9), 6),
        latency_average_ms=round(summary.average_us / 1000, 3),
        latency_stddev_ms=round(summary.stddev_us / 1000, 3),
    )
    if summary.service_time_histogram and summary.histogram:
        response = decode_histogram(summary.histogram)
        service = decode_histogram(summary.service_time_histogram)
        out["schedule_lag_avg_ms"] = round(
            max(0.0, response.get_mean_value() - service.get_mean_value()) / 1000, 3
        )
    return out
