"""`benchwright oltp prepare|run|cleanup TEST` with sysbench's flags (postgres, mysql).

TEST is read_write | read_only | write_only | point_select (an ``oltp_`` prefix is accepted).
Flags: --tables --table-size --threads --time --events --report-interval --rate --range-size
--point-selects --simple-ranges --sum-ranges --order-ranges --distinct-ranges --index-updates
--non-index-updates --delete-inserts --skip-trx. The output is laid out as sysbench's.
"""

from __future__ import annotations

import argparse
from typing import Any

from benchwright.commands.sql import add_connection_flags, connection_properties, print_lines, run_and_write
from benchwright.errors import SpecError
from benchwright.results import ResultDocument
from benchwright.runner.drivers import new_driver
from benchwright.runner.engine import PhaseConfig
from benchwright.runner.workloads.base import check_capability
from benchwright.runner.workloads.oltp.workload import COUNTS, TESTS, OltpSettings, table_names
from benchwright.runner.workloads.sqlscript.sqlkit import sql_driver


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "oltp",
        help="sysbench-style OLTP: prepare / run / cleanup sbtest tables (postgres, mysql)",
        description="sysbench's oltp_* tests, measured by Benchwright.",
    )
    p.add_argument("command", choices=("prepare", "run", "cleanup"))
    p.add_argument("test", type=lambda s: s.removeprefix("oltp_"), choices=TESTS)
    p.add_argument("--engine", choices=("postgres", "mysql"), help="default: from the --url scheme")
    p.add_argument("--tables", type=int, default=1)
    p.add_argument("--table-size", type=int, default=10_000)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--processes", type=int, help="worker processes (default: min(threads, 2 x cores))")
    p.add_argument("--time", type=float, default=10.0, help="seconds (default 10; 0 = until --events)")
    p.add_argument("--events", type=int, default=0, help="stop after this many events (0 = no limit)")
    p.add_argument("--report-interval", type=float, default=0.0, help="interval lines every N seconds")
    p.add_argument("--rate", type=float, default=0.0, help="target events per second (0 = unlimited)")
    p.add_argument("--range-size", type=int, default=100)
    for name in COUNTS:
        p.add_argument(f"--{name.replace('_', '-')}", type=int, dest=name)
    p.add_argument("--skip-trx", action="store_true", help="no BEGIN/COMMIT around an event")
    add_connection_flags(p)
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    engine, props = connection_properties(args.engine, args.url, args.overrides)
    props.update(
        {
            "oltp.test": args.test,
            "oltp.tables": str(args.tables),
            "oltp.table_size": str(args.table_size),
            "oltp.range_size": str(args.range_size),
        }
    )
    for name in COUNTS:
        if getattr(args, name) is not None:
            props[f"oltp.{name}"] = str(getattr(args, name))
    if args.skip_trx:
        props["oltp.skip_trx"] = "true"
    settings = OltpSettings(props)  # validates before anything connects
    check_capability("oltp", engine)
    if args.command == "cleanup":
        driver = new_driver(engine, props)
        driver.connect()
        try:
            db = sql_driver(driver, "oltp")
            for table in table_names(settings.tables):
                print(f"Dropping table '{table}'...")
                db.execute(f"DROP TABLE IF EXISTS {table}")
        finally:
            driver.close()
        return 0
    if args.threads < 1:
        raise SpecError("--threads", "needs at least one thread")
    if args.command == "prepare":
        config = PhaseConfig(
            workload="oltp",
            phase="load",
            engine=engine,
            properties=props,
            threads=args.threads,
            processes=args.processes,
            seed=args.seed,
        )
        doc = run_and_write(config, args.json)
        for table, rows in doc.extra.get("rows", {}).items():
            print(f"Table '{table}': {rows} records, secondary index on k")
        return 0
    if not args.time and not args.events:
        raise SpecError("--time", "give --time or --events")
    config = PhaseConfig(
        workload="oltp",
        phase="run",
        engine=engine,
        properties=props,
        threads=args.threads,
        processes=args.processes,
        target=args.rate or None,
        operation_count=args.events or None,
        max_seconds=args.time or None,
        seed=args.seed,
    )
    doc = run_and_write(config, args.json)
    print_lines(interval_lines(doc, args.report_interval, args.threads, settings))
    print_lines(summary_lines(doc, settings))
    return 0


def interval_lines(doc: ResultDocument, every: float, threads: int, settings: OltpSettings) -> list[str]:
    """sysbench's `[ 10s ] thds: 4 tps: ... qps: ... (r/w/o: ...) lat (ms,99%): ... err/s: ...` lines
    (the interval series keeps p99, not p95, so the percentile is labelled 99%)."""
    if every <= 0:
        return []
    per = settings.queries_per_event()
    lines, window, edge = [], [], every
    for sample in doc.intervals:
        if edge > doc.runtime_ms / 1000 + 1e-3:
            break  # operations finishing after the deadline do not make a window of their own
        window.append(sample)
        if sample.t + 1e-9 >= edge:
            events = sum(sum(s.operations.values()) - s.errors for s in window)
            errors = sum(s.errors for s in window)
            r, w, o = (per[k] * events / every for k in ("read", "write", "other"))
            p99 = max(s.p99_us for s in window) / 1000
            lines.append(
                f"[ {edge:g}s ] thds: {threads} tps: {events / every:.2f} qps: {r + w + o:.2f} "
                f"(r/w/o: {r:.2f}/{w:.2f}/{o:.2f}) lat (ms,99%): {p99:.2f} err/s: {errors / every:.2f} "
                "reconn/s: 0.00"
            )
            window, edge = [], edge + every
    return lines


def summary_lines(doc: ResultDocument, settings: OltpSettings) -> list[str]:
    x = doc.extra
    q = x.get("queries", {})
    qps = x.get("queries_per_second", {})
    seconds = doc.runtime_ms / 1000
    summary = doc.operations.get(x.get("test", ""))
    lat = x.get("latency_ms", {})
    return [
        "SQL statistics:",
        "    queries performed:",
        f"        read:                            {q.get('read', 0)}",
        f"        write:                           {q.get('write', 0)}",
        f"        other:                           {q.get('other', 0)}",
        f"        total:                           {q.get('total', 0)}",
        f"    transactions:                        {x.get('transactions', 0)}  ({x.get('tps', 0):.2f} per sec.)",
        f"    queries:                             {q.get('total', 0)}  ({qps.get('total', 0):.2f} per sec.)",
        f"    ignored errors:                      {x.get('ignored_errors', 0)}  "
        f"({x.get('ignored_errors', 0) / max(seconds, 1e-9):.2f} per sec.)",
        "",
        "General statistics:",
        f"    total time:                          {seconds:.4f}s",
        f"    total number of events:              {summary.operations if summary else 0}",
        "",
        "Latency (ms):",
        f"         min:                                 {(summary.min_us / 1000) if summary else 0:.2f}",
        f"         avg:                                 {lat.get('avg_ms', 0):.2f}",
        f"         max:                                 {lat.get('max_ms', 0):.2f}",
        f"         95th percentile:                     {(summary.p95_us / 1000) if summary else 0:.2f}",
        f"         99th percentile:                     {lat.get('p99_ms', 0):.2f}",
    ]
