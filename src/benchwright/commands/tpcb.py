"""`benchwright tpcb init|run` with pgbench's flags, on pgbench's tables (postgres, mysql).

init: -s scale, -F fillfactor            run: -c clients, -j jobs, -T seconds | -t transactions,
-P progress seconds, -R rate, -S (select-only), -N (simple-update), -b tpcb-like|simple-update|select-only,
-M/--protocol simple|extended|prepared. The output is laid out as pgbench's, on its streams: init's
step times and the -P progress lines (live, every N seconds, with that period's exact latency mean
and stddev) on stderr, the summary on stdout. pgbench's own command line: `benchwright pgbench`.
"""

from __future__ import annotations

import argparse
import sys

from benchwright.commands import Subparsers
from benchwright.commands.literal import ToolParser, check_numbers, register_literal
from benchwright.commands.sql import add_connection_flags, connection_properties, print_lines, run_and_write
from benchwright.errors import SpecError
from benchwright.runner.engine import PeriodProgress, PhaseConfig
from benchwright.runner.workloads.tpcb.pgbench_format import init_lines, progress_line, summary_lines
from benchwright.runner.workloads.tpcb.workload import SCRIPTS


def register(subparsers: Subparsers) -> None:
    register_literal(
        subparsers,
        "tpcb",
        "pgbench-compatible TPC-B: init tables, run tpcb-like / simple-update / select-only",
        handle,
    )


def parser() -> ToolParser:
    """Help is --help only: `tpcb -i -h HOST` (pgbench's command line) is refused naming -i and -h,
    never answered with help and exit 0; `benchwright pgbench` takes pgbench's command line."""
    p = ToolParser(
        "benchwright tpcb",
        "pgbench's built-in scripts on pgbench's tables, measured by Benchwright "
        "(pgbench's own command line: benchwright pgbench).",
    )
    p.add_argument("phase", choices=("init", "run"))
    p.add_argument("--engine", choices=("postgres", "mysql"), help="default: from the --url scheme")
    p.add_argument(
        "-s", "--scale", type=int, help="scale factor (init: default 1; run: checked against the tables)"
    )
    p.add_argument("-F", "--fillfactor", type=int, help="fillfactor for init (default 100)")
    p.add_argument("-c", "--client", type=int, default=1, help="concurrent clients (default 1)")
    p.add_argument("-j", "--jobs", type=int, help="worker processes (default: min(clients, 2 x cores))")
    p.add_argument("-T", "--time", type=float, help="seconds to run")
    p.add_argument("-t", "--transactions", type=int, help="transactions per client (default 10 when no -T)")
    p.add_argument(
        "-P", "--progress", type=float, default=0.0, help="progress line every N (whole) seconds, live"
    )
    p.add_argument("-R", "--rate", type=float, help="target transactions per second over all clients")
    p.add_argument("-S", "--select-only", action="store_true", help="the select-only script (-b select-only)")
    p.add_argument("-N", "--skip-some-updates", action="store_true", help="the simple-update script")
    p.add_argument("-b", "--builtin", choices=tuple(SCRIPTS), help="built-in script (default tpcb-like)")
    p.add_argument(
        "-M",
        "--protocol",
        choices=("simple", "extended", "prepared"),
        default="simple",
        help="recorded query mode (psycopg prepares repeated statements in every mode)",
    )
    add_connection_flags(p)
    return p


def handle(argv: argparse.Namespace) -> int:
    args = parser().parse_args(argv.argv)
    check_numbers(args)
    engine, props = connection_properties(args.engine, args.url, args.overrides)
    if args.scale is not None:
        props["tpcb.scale"] = str(args.scale)
    if args.fillfactor is not None:
        props["tpcb.fillfactor"] = str(args.fillfactor)
    script = args.builtin or (
        "select-only" if args.select_only else "simple-update" if args.skip_some_updates else "tpcb-like"
    )
    props["tpcb.script"] = script
    props["tpcb.protocol"] = args.protocol
    if args.client < 1:
        raise SpecError("-c", "needs at least one client")
    if args.phase == "init":
        config = PhaseConfig(
            workload="tpcb",
            phase="load",
            engine=engine,
            properties=props,
            threads=args.jobs or 2,
            seed=args.seed,
        )
        doc = run_and_write(config, args.json)
        for line in init_lines(doc):  # on stderr, as pgbench -i prints them
            print(line, file=sys.stderr)
        return 0
    if args.time is not None and args.transactions is not None:
        raise SpecError("-T", "give either -T seconds or -t transactions, not both")
    if args.progress < 0 or args.progress != int(args.progress):
        raise SpecError("-P", f"progress needs a whole number of seconds, got {args.progress:g}")
    count = (args.transactions or 10) * args.client if args.time is None else None
    config = PhaseConfig(
        workload="tpcb",
        phase="run",
        engine=engine,
        properties=props,
        threads=args.client,
        processes=args.jobs,
        target=args.rate,
        operation_count=count,
        max_seconds=args.time,
        seed=args.seed,
    )
    live = (
        PeriodProgress(
            args.progress, lambda period: print(progress_line(period), file=sys.stderr, flush=True)
        )
        if args.progress
        else None
    )
    doc = run_and_write(config, args.json, live)
    print_lines(summary_lines(doc, args.client, doc.measurement.processes))
    return 0
