"""`benchwright oltp prepare|run|cleanup TEST` with sysbench's flags (postgres, mysql).

TEST is read_write | read_only | write_only | point_select (an ``oltp_`` prefix is accepted).
Flags: --tables --table-size --threads --time --events --report-interval --rate --range-size
--point-selects --simple-ranges --sum-ranges --order-ranges --distinct-ranges --index-updates
--non-index-updates --delete-inserts --skip-trx, and the id distribution: --rand-type
(special | uniform | gaussian | pareto | zipfian, default special as in sysbench 1.0) --rand-spec-iter
--rand-spec-pct --rand-spec-res --rand-pareto-h --rand-zipfian-exp. The output is laid out as sysbench's.
"""

from __future__ import annotations

import argparse

from benchwright.commands import Subparsers
from benchwright.commands.sql import add_connection_flags, connection_properties, print_lines, run_and_write
from benchwright.errors import SpecError
from benchwright.results import ResultDocument
from benchwright.runner.drivers import new_driver
from benchwright.runner.engine import Period, PeriodProgress, PhaseConfig
from benchwright.runner.workloads.oltp.rand import RAND_TYPES
from benchwright.runner.workloads.oltp.workload import COUNTS, TESTS, OltpSettings, table_names
from benchwright.runner.workloads.registry import check_capability
from benchwright.runner.workloads.sqlscript.sqlkit import sql_driver


def register(subparsers: Subparsers) -> None:
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
    p.add_argument(
        "--rand-type", choices=RAND_TYPES, help="id distribution (default special, as sysbench 1.0)"
    )
    for flag, meaning in RAND_KNOBS.items():
        p.add_argument(f"--{flag}", metavar="N", help=meaning)
    add_connection_flags(p)
    p.set_defaults(handler=handle)


RAND_KNOBS = {
    "rand-spec-iter": "uniform draws averaged by gaussian and special (default 12)",
    "rand-spec-pct": "special: hot band, percent of the ids (default 1)",
    "rand-spec-res": "special: percent of draws that go to the hot band (default 75)",
    "rand-pareto-h": "pareto: the lowest h of the ids get 1 - h of the draws (default 0.2)",
    "rand-zipfian-exp": "zipfian: exponent (default 0.8)",
}  # values stay strings: OltpSettings validates them and names the property


def handle(args: argparse.Namespace) -> int:
    engine, props = connection_properties(args.engine, args.url, args.overrides)
    settings = oltp_properties(args, engine, props)
    if args.command == "cleanup":
        cleanup(engine, props, settings)
        return 0
    if args.command == "prepare":
        doc = prepare(args, engine, props)
        for table, rows in doc.extra.get("rows", {}).items():
            print(f"Table '{table}': {rows} records, secondary index on k")
        return 0
    doc = run(args, engine, props, settings, interval_printer(args.report_interval, settings))
    print_lines(summary_lines(doc, settings))
    return 0


def oltp_properties(args: argparse.Namespace, engine: str, props: dict[str, str]) -> OltpSettings:
    """Fill ``props`` with the test's options (sysbench's flags, as in ``register``) and validate
    them before anything connects."""
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
    if args.rand_type is not None:
        props["oltp.rand_type"] = args.rand_type
    for flag in RAND_KNOBS:
        value = getattr(args, flag.replace("-", "_"))
        if value is not None:
            props[f"oltp.{flag.replace('-', '_')}"] = value
    settings = OltpSettings(props)  # validates before anything connects
    check_capability("oltp", engine)
    if args.threads < 1:
        raise SpecError("--threads", "needs at least one thread")
    return settings


def cleanup(engine: str, props: dict[str, str], settings: OltpSettings) -> None:
    """sysbench's cleanup: drop the test's tables, one line each."""
    driver = new_driver(engine, props)
    driver.connect()
    try:
        db = sql_driver(driver, "oltp")
        for table in table_names(settings.tables):
            print(f"Dropping table '{table}'...")
            db.execute(f"DROP TABLE IF EXISTS {table}")
    finally:
        driver.close()


def prepare(args: argparse.Namespace, engine: str, props: dict[str, str]) -> ResultDocument:
    config = PhaseConfig(
        workload="oltp",
        phase="load",
        engine=engine,
        properties=props,
        threads=args.threads,
        processes=args.processes,
        seed=args.seed,
    )
    return run_and_write(config, args.json)


def run(
    args: argparse.Namespace,
    engine: str,
    props: dict[str, str],
    settings: OltpSettings,
    live: PeriodProgress | None,
) -> ResultDocument:
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
    return run_and_write(config, args.json, live)


def interval_printer(every: float, settings: OltpSettings) -> PeriodProgress | None:
    """--report-interval N: sysbench's interval line printed live every N (whole) seconds."""
    if every < 0 or every != int(every):
        raise SpecError("--report-interval", f"needs a whole number of seconds, got {every:g}")
    if not every:
        return None
    per = settings.queries_per_event()
    return PeriodProgress(every, lambda period: print(interval_line(period, per), flush=True))


def interval_line(period: Period, per_event: dict[str, int], percentile: float = 95) -> str:
    """`[ 10s ] thds: 4 tps: ... qps: ... (r/w/o: ...) lat (ms,95%): ... err/s: ... reconn/s: 0.00`:
    events that succeeded per second, queries per second from the test's statements per event, the
    period's own latency percentile (its histogram, 3 significant digits) and errors per second
    (the ignored ones sysbench retries, and any other failure)."""
    totals, seconds = period.totals, period.seconds
    events = totals.ok
    r, w, o = (per_event.get(k, 0) * events / seconds for k in ("read", "write", "other"))
    return (
        f"[ {period.end_s:.0f}s ] thds: {period.threads} tps: {events / seconds:4.2f} "
        f"qps: {r + w + o:4.2f} (r/w/o: {r:4.2f}/{w:4.2f}/{o:4.2f}) "
        f"lat (ms,{percentile:g}%): {totals.percentile_us(percentile) / 1000:4.2f} "
        f"err/s: {(totals.retried + totals.failed) / seconds:4.2f} reconn/s: 0.00"
    )


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
