"""pgbench's custom and built-in scripts, weighted, on Benchwright's statement executor (workload
"pgbench-script"; `benchwright pgbench -f FILE[@W] -b NAME[@W] -r`).

Properties:
  pgscript.scripts        JSON list of [name, weight, text]: the scripts as pgbench reads them
  pgscript.scale          the :scale variable; absent: the row count of pgbench_branches (pgbench's
                          rule when a built-in script runs)
  pgscript.define         JSON object of -D variables (text, as pgbench keeps them)
  pgscript.protocol       simple (variables pasted into the SQL text, as pgbench's simple mode) |
                          extended | prepared (variables sent as bound parameters)
  pgscript.per_statement  true: time every command of every transaction (pgbench -r)

One operation is one transaction: one pass through the script chosen by weight for it. With
per_statement each command is timed around its own call, in the client, as pgbench times it, and
the sums cross the process boundary in the worker's report (``worker_figures``).
"""

from __future__ import annotations

import contextlib
import json
import random
import time
from collections.abc import Iterator
from typing import Any, ClassVar

from benchwright.errors import SpecError
from benchwright.runner.drivers.base import Capability, Driver, SqlDriver
from benchwright.runner.measure import Status
from benchwright.runner.workloads.base import Operation, ThreadInfo, Workload, register
from benchwright.runner.workloads.pgscript import expr
from benchwright.runner.workloads.pgscript.descriptor import DESCRIPTOR
from benchwright.runner.workloads.pgscript.script import VARIABLE, Command, Script, parse_script
from benchwright.runner.workloads.sqlscript.sqlkit import require_tables, sql_driver
from benchwright.runner.workloads.tpcb import schema
from benchwright.runner.workloads.tpcb.workload import loaded_scale

PROTOCOLS = ("simple", "extended", "prepared")


def op_name(index: int, script: Script) -> str:
    """The operation name of a script: its place and name (two -f of one file stay apart)."""
    return f"{index + 1}:{script.name}"


def scripts_of(props: dict[str, str]) -> list[Script]:
    raw = props.get("pgscript.scripts")
    if not raw:
        raise SpecError("pgscript.scripts", "no script: give -f FILE or -b NAME")
    try:
        items = json.loads(raw)
        scripts = [parse_script(str(text), str(name), int(weight)) for name, weight, text in items]
    except (ValueError, TypeError) as exc:
        raise SpecError("pgscript.scripts", f"expected a JSON list of [name, weight, text]: {exc}") from None
    if not scripts or any(s.weight < 0 for s in scripts) or sum(s.weight for s in scripts) <= 0:
        raise SpecError("pgscript.scripts", "script weights must be non-negative, with a positive total")
    return scripts


@register
class PgbenchScriptWorkload(Workload):
    name: ClassVar[str] = "pgbench-script"
    descriptor = DESCRIPTOR
    requires: ClassVar[Capability] = Capability.SQL
    phases: ClassVar[tuple[str, ...]] = ("run",)
    description: ClassVar[str] = "pgbench scripts (-f FILE@W, -b NAME@W): \\set, \\sleep, :variables, weights"

    def __init__(self, properties: dict[str, str]) -> None:
        super().__init__(properties)
        self.scripts = scripts_of(self.properties)
        self.protocol = self.properties.get("pgscript.protocol", "simple")
        if self.protocol not in PROTOCOLS:
            raise SpecError("pgscript.protocol", f"one of {', '.join(PROTOCOLS)}, got {self.protocol!r}")
        self.per_statement = self.properties.get("pgscript.per_statement", "false") == "true"
        scale = self.properties.get("pgscript.scale")
        self.scale = int(scale) if scale and scale.isdigit() else None
        try:
            defined = json.loads(self.properties.get("pgscript.define") or "{}")
        except ValueError:
            raise SpecError("pgscript.define", "expected a JSON object of NAME: VALUE") from None
        self.defined: dict[str, str] = {str(k): str(v) for k, v in dict(defined).items()}
        # per thread: [script][command] -> [nanoseconds, executions, failures]
        self._timings: list[list[list[list[int]]]] = []
        self.statement_figures: list[list[list[int]]] = []

    def setup(self, driver: Driver, phase: str) -> None:
        """With a built-in script in the mix (no ``pgscript.scale``): pgbench's tables must be there,
        named before any client starts, as the tpcb workload names them."""
        if self.scale is None:
            require_tables(sql_driver(driver, self.name), schema.RUN_TABLES, "benchwright pgbench -i")

    def operations(self, phase: str, driver: Driver, thread: ThreadInfo) -> Iterator[Operation]:
        db = sql_driver(driver, self.name)
        scale = self.scale if self.scale is not None else (loaded_scale(db) or 1)
        env: dict[str, expr.Value | str] = {**self.defined, "scale": scale, "client_id": thread.index,
                                            "random_seed": thread.seed}  # fmt: skip
        rng = random.Random(thread.seed)
        timings = [[[0, 0, 0] for _ in s.commands] for s in self.scripts]
        self._timings.append(timings)
        names = [op_name(i, s) for i, s in enumerate(self.scripts)]
        cumulative: list[int] = []
        for s in self.scripts:
            cumulative.append((cumulative[-1] if cumulative else 0) + s.weight)
        total = cumulative[-1]
        while True:
            pick = rng.randrange(total)
            index = next(i for i, edge in enumerate(cumulative) if pick < edge)
            script = self.scripts[index]

            def call(script: Script = script, sums: list[list[int]] = timings[index]) -> Status:
                return self._transaction(db, script, env, rng, sums)

            yield names[index], call

    def _transaction(
        self, db: SqlDriver, script: Script, env: dict[str, Any], rng: random.Random, sums: list[list[int]]
    ) -> Status:
        timed = self.per_statement
        perf = time.perf_counter_ns
        for command, cell in zip(script.commands, sums, strict=True):
            start = perf() if timed else 0
            try:
                self._run(db, command, env, rng)
            except Exception:
                cell[2] += 1
                if command.kind == "sql":  # leave no transaction open for the next pass
                    with contextlib.suppress(Exception):
                        db.rollback()
                raise
            if timed:
                cell[0] += perf() - start
                cell[1] += 1
        return Status.OK

    def _run(self, db: SqlDriver, command: Command, env: dict[str, Any], rng: random.Random) -> None:
        if command.kind == "set":
            assert command.value is not None
            env[command.names[0]] = command.value(env, rng)
        elif command.kind == "sleep":
            assert command.value is not None
            time.sleep(max(0.0, float(command.value(env, rng))) * command.unit_s)
        elif self.protocol == "simple":
            db.execute(_pasted(command.sql, env))
        else:
            sql, params = _bound(command.sql, env)
            db.execute(sql, params)

    # -------------------------------------------------------------- figures across processes
    def worker_figures(self) -> dict[str, Any]:
        if not self.per_statement:
            return {}
        return {"statements": _summed(self._timings, self.scripts)}

    def absorb_worker_figures(self, figures: list[dict[str, Any]]) -> None:
        parts = [f["statements"] for f in figures if "statements" in f]
        self.statement_figures = _summed(parts, self.scripts) if parts else []

    def finish(self, driver: Driver, phase: str, result: Any) -> None:
        runtime_s = max(result.runtime_ms / 1000, 1e-9)
        scripts = []
        for index, script in enumerate(self.scripts):
            summary = result.operations.get(op_name(index, script))
            done = summary.statuses.get("OK", 0) if summary else 0
            entry: dict[str, Any] = {
                "name": script.name,
                "weight": script.weight,
                "transactions": done,
                "failed": result.failed(op_name(index, script)) if summary else 0,
                "tps": round(done / runtime_s, 6),
                "latency_average_ms": round(summary.average_us / 1000, 3) if summary else 0.0,
                "latency_stddev_ms": round(summary.stddev_us / 1000, 3) if summary else 0.0,
            }
            if self.statement_figures:
                entry["statements"] = [
                    {
                        "command": command.shown,
                        "latency_average_ms": round(ns / max(count, 1) / 1e6, 3),
                        "executions": count,
                        "failures": failed,
                    }
                    for command, (ns, count, failed) in zip(
                        script.commands, self.statement_figures[index], strict=True
                    )
                ]
            scripts.append(entry)
        db = sql_driver(driver, self.name)
        scale = self.scale if self.scale is not None else loaded_scale(db)
        result.extra.update(
            scripts=scripts, scale=scale, query_mode=self.protocol, per_statement=self.per_statement
        )


def _summed(parts: list[list[list[list[int]]]], scripts: list[Script]) -> list[list[list[int]]]:
    total = [[[0, 0, 0] for _ in s.commands] for s in scripts]
    for part in parts:
        for script_total, script_part in zip(total, part, strict=True):
            for cell, add in zip(script_total, script_part, strict=True):
                for k in range(3):
                    cell[k] += add[k]
    return total


def _pasted(sql: str, env: dict[str, Any]) -> str:
    """pgbench's simple mode: each known :variable replaced by its value's text (numbers made
    here or -D values: the user's own text); an unknown one is left as written, as pgbench does."""
    return VARIABLE.sub(lambda m: expr.text_of(env[m[1]]) if m[1] in env else m[0], sql)


def _bound(sql: str, env: dict[str, Any]) -> tuple[str, list[Any]]:
    """pgbench's extended and prepared modes: each known :variable a bound parameter."""
    params: list[Any] = []

    def slot(m: Any) -> str:
        if m[1] not in env:
            return str(m[0])
        params.append(env[m[1]])
        return "\0"

    text = VARIABLE.sub(slot, sql)
    if params:
        text = text.replace("%", "%%").replace("\0", "%s")
    return text, params
