"""Run a phase with the native tool instead of our runner, from the same settings.

A phase described for our workloads (workload name, phase, engine, properties, threads, duration,
target rate) maps onto the tool users trust for it:

    tpcb (pgbench's tables and scripts)     -> pgbench     (load: pgbench -i, run: -b SCRIPT)
    oltp (sysbench's tables and events)     -> sysbench    (load: prepare, run: oltp_TEST run)
    redis-bench (redis-benchmark's tests)   -> redis-benchmark, or memtier_benchmark for SET/GET mixes

so the same spec cell can be measured both ways and the two documents compared side by side.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from benchwright.errors import SpecError
from benchwright.results import ResultDocument
from benchwright.runner.dataset_guard import DatasetGuard
from benchwright.runner.drivers import new_driver
from benchwright.runner.plan import PhaseConfig
from benchwright.runner.workloads.external import pgbench, redis_benchmark, sysbench
from benchwright.runner.workloads.external.common import LineSink
from benchwright.runner.workloads.redisbench.sequential import RedisBenchSettings
from benchwright.runner.workloads.registry import workload_class

DEFAULT_TOOL = {"tpcb": "pgbench", "oltp": "sysbench", "redis-bench": "redis-benchmark"}
OLTP_PASSTHROUGH = (
    "range_size",
    "point_selects",
    "simple_ranges",
    "sum_ranges",
    "order_ranges",
    "distinct_ranges",
    "index_updates",
    "non_index_updates",
    "delete_inserts",
    "skip_trx",
    "rand_type",
    "rand_spec_iter",
    "rand_spec_pct",
    "rand_spec_res",
    "rand_pareto_h",
    "rand_zipfian_exp",
)  # sysbench's own option names; the oltp workload reads them with an "oltp." prefix


def pgbench_settings(
    props: Mapping[str, str], phase: str, threads: int, seconds: float | None, rate: float | None
) -> pgbench.PgbenchSettings:
    return pgbench.PgbenchSettings(
        mode="init" if phase == "load" else "run",
        builtin=props.get("tpcb.script", "tpcb-like"),
        scale=int(props.get("tpcb.scale", "1")),
        fillfactor=int(props.get("tpcb.fillfactor", "100")),
        clients=threads,
        jobs=max(1, min(threads, os.cpu_count() or 1)),
        time_s=max(1, round(seconds or 10)),
        protocol=props.get("tpcb.protocol", "simple"),
        rate=rate,
    )


def sysbench_settings(
    props: Mapping[str, str], phase: str, threads: int, seconds: float | None
) -> sysbench.SysbenchSettings:
    test = "oltp_" + props.get("oltp.test", "read_write").removeprefix("oltp_")
    options = tuple((k, props[f"oltp.{k}"]) for k in OLTP_PASSTHROUGH if f"oltp.{k}" in props)
    return sysbench.SysbenchSettings(
        test=test,
        command="prepare" if phase == "load" else "run",
        tables=int(props.get("oltp.tables", "1")),
        table_size=int(props.get("oltp.table_size", "10000")),
        threads=threads,
        time_s=max(1, round(seconds or 10)),
        options=options,
    )


def redis_settings(props: Mapping[str, str], threads: int) -> RedisBenchSettings:
    return RedisBenchSettings(
        tests=props.get("redisbench.tests", "set,get"),
        datasize=int(props.get("redisbench.datasize", "3")),
        keyspace=int(props.get("redisbench.keyspace", "0")),
        requests=int(props.get("redisbench.requests", "100000")),
        clients=threads,
        pipeline=int(props.get("redisbench.pipeline", "1")),
    )


def run_native(
    phase: PhaseConfig, tool: str | None = None, echo: LineSink | None = None, run_id: str | None = None
) -> ResultDocument:
    """One phase measured by its workload's native tool (``tool`` overrides the default): the same
    phase model the engine runs, so a plan's phase goes to either as it is. The target's data is
    guarded as for the engine (runner/dataset_guard.py): reset before ``pgbench -i`` or ``sysbench
    prepare``, checked after it, and checked (or adopted, for redis-benchmark) before a run."""
    tool = _tool_for(phase, tool)  # a bad choice is refused before the target is touched
    guard = _guard(phase)
    doc = _run_tool(phase, tool, echo, run_id)
    guard.note(doc)
    if guard.identity is not None and phase.workload_phase == "load" and not doc.aborted:
        driver = new_driver(phase.engine, phase.properties, 0)
        driver.connect()
        try:
            guard.after_load(driver, doc)
        finally:
            driver.close()
    return doc


def _guard(phase: PhaseConfig) -> DatasetGuard:
    """The phase's guard, its ``before`` done (the tool makes its own schema: no set-up here)."""
    guard = DatasetGuard(workload_class(phase.workload)(phase.properties), phase)
    if guard.identity is not None:
        driver = new_driver(phase.engine, phase.properties, 0)
        driver.connect()
        try:
            guard.before(driver, lambda: None)
        finally:
            driver.close()
    return guard


def _tool_for(phase: PhaseConfig, tool: str | None) -> str:
    """The tool that measures the phase; SpecError naming the field for a choice that cannot run."""
    chosen = tool or DEFAULT_TOOL.get(phase.workload)
    if chosen is None:
        raise SpecError(
            "workload", f"no native tool runs {phase.workload!r} (tools exist for {', '.join(DEFAULT_TOOL)})"
        )
    engines = {"pgbench": ("postgres",), "redis-benchmark": ("redis",), "sysbench": ("postgres", "mysql")}
    if chosen not in engines:
        raise SpecError("tool", f"unknown native tool {chosen!r} (pgbench, sysbench, redis-benchmark)")
    if phase.engine not in engines[chosen]:
        raise SpecError("engine", f"{chosen} drives {' or '.join(engines[chosen])}, not {phase.engine!r}")
    return chosen


def _run_tool(phase: PhaseConfig, tool: str, echo: LineSink | None, run_id: str | None) -> ResultDocument:
    engine, properties = phase.engine, phase.properties
    threads, seconds, rate = phase.threads, phase.max_seconds, phase.target
    password = os.environ.get("BENCHWRIGHT_DB_PASSWORD")
    if tool == "pgbench":
        url = _url(properties, "postgres.url")
        return pgbench.run(
            pgbench_settings(properties, phase.workload_phase, threads, seconds, rate),
            url,
            echo,
            run_id=run_id,
        )
    if tool == "sysbench":
        url = _url(properties, f"{engine}.url")
        return sysbench.run(
            sysbench_settings(properties, phase.workload_phase, threads, seconds),
            engine,
            url,
            echo,
            run_id=run_id,
        )
    if tool == "redis-benchmark":
        conn = {k: v for k, v in properties.items() if k.startswith("redis.")}
        if password:
            conn["redis.password"] = password
        return redis_benchmark.run(redis_settings(properties, threads), conn, echo, run_id=run_id)
    raise AssertionError(tool)  # _tool_for refused it


def _url(properties: Mapping[str, str], key: str) -> str:
    url = properties.get(key)
    if not url:
        raise SpecError(key, "the native tool needs the connection URL")
    return url
