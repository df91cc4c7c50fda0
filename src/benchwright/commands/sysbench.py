"""`benchwright sysbench [options]... TESTNAME prepare|run|cleanup`: sysbench's own command line, run
by Benchwright's oltp workload.

A script written for sysbench 1.0 runs with the binary name swapped: the oltp_* test name, then or
before it sysbench's `--name=value` options (`--db-driver=mysql|pgsql`, `--mysql-host/port/user/
password/db`, `--pgsql-*`, `--tables --table-size --threads --time --events --rate
--report-interval --rand-type --rand-seed --percentile --histogram` and the oltp query counts), then
the command. Output on stdout, in sysbench's layout. An option the mirror does not know is refused
by name (exit 1), as sysbench refuses it.
"""

from __future__ import annotations

import argparse
import math
from typing import Any
from urllib.parse import quote

from benchwright import __version__
from benchwright.commands import Subparsers
from benchwright.commands.literal import ToolParser, check_numbers, refuse, register_literal
from benchwright.commands.oltp import (
    RAND_KNOBS,
    cleanup,
    interval_line,
    oltp_properties,
    prepare,
    run,
)
from benchwright.commands.paths import output_file
from benchwright.errors import UsageError
from benchwright.results import ResultDocument
from benchwright.runner.engine import PeriodProgress
from benchwright.runner.measure import decode_histogram
from benchwright.runner.workloads.oltp.rand import RAND_TYPES
from benchwright.runner.workloads.oltp.workload import COUNTS, TESTS, OltpSettings

PROG = "benchwright sysbench"
COMMANDS = ("prepare", "run", "cleanup")
SWITCHES = ("skip-trx", "histogram")  # sysbench booleans: --flag, --flag=on|off
DRIVERS = {"mysql": "mysql", "pgsql": "postgres"}
# sysbench 1.0's connection defaults
DEFAULTS = {
    "mysql": {"host": "localhost", "port": "3306", "user": "sbtest", "password": "", "db": "sbtest"},
    "pgsql": {"host": "localhost", "port": "5432", "user": "sbtest", "password": "", "db": "sbtest"},
}
# sysbench's latency histogram: 1024 logarithmic buckets from 0.001 ms to 100 s
HIST_LOW_MS, HIST_HIGH_MS, HIST_BUCKETS, HIST_WIDTH = 0.001, 100_000.0, 1024, 40


def register(sub: Subparsers) -> None:
    register_literal(sub, "sysbench", "sysbench's command line, run by Benchwright (mysql, pgsql)", handle)


def _on_off(value: str) -> bool:
    if value.lower() in ("on", "true", "yes", "1"):
        return True
    if value.lower() in ("off", "false", "no", "0"):
        return False
    raise argparse.ArgumentTypeError(f"expected on or off, got {value!r}")


def parser() -> ToolParser:
    p = ToolParser(
        PROG, "sysbench's command line, measured by Benchwright (oltp_* tests, MySQL and PostgreSQL)."
    )
    p.add_argument(
        "words",
        nargs="*",
        metavar="TESTNAME COMMAND",
        help=f"oltp_{'|oltp_'.join(TESTS)}; {'|'.join(COMMANDS)}",
    )
    p.add_argument("--version", action="store_true", help="print the version and exit")
    p.add_argument("--threads", type=int, default=1, help="number of threads (default 1)")
    p.add_argument("--events", type=int, default=0, help="limit of events (default 0: none)")
    p.add_argument("--time", type=float, default=10.0, help="limit of seconds (default 10)")
    p.add_argument("--rate", type=float, default=0.0, help="events per second (default 0: unlimited)")
    p.add_argument("--report-interval", type=float, default=0.0, help="interval lines every N seconds")
    p.add_argument("--percentile", type=float, default=95.0, help="latency percentile reported (default 95)")
    p.add_argument("--histogram", type=_on_off, default=False, help="print the latency histogram [on|off]")
    p.add_argument("--rand-type", choices=RAND_TYPES, help="id distribution (default special)")
    p.add_argument("--rand-seed", type=int, default=0, help="random seed (default 0: from the time)")
    for flag, meaning in RAND_KNOBS.items():
        p.add_argument(f"--{flag}", metavar="N", help=meaning)
    p.add_argument(
        "--db-driver", choices=tuple(DRIVERS), default="mysql", help="mysql | pgsql (default mysql)"
    )
    for driver in DRIVERS:
        for key, default in DEFAULTS[driver].items():
            p.add_argument(f"--{driver}-{key}", help=f"(default {default or 'empty'})")
    p.add_argument("--tables", type=int, default=1)
    p.add_argument("--table-size", type=int, default=10_000)
    p.add_argument("--range-size", type=int, default=100)
    for name in COUNTS:
        p.add_argument(f"--{name.replace('_', '-')}", type=int, dest=name)
    p.add_argument("--skip-trx", type=_on_off, default=False, help="no BEGIN/COMMIT [on|off]")
    p.add_argument("--json", type=output_file, metavar="PATH", help="(Benchwright) write the result document")
    p.add_argument("--processes", type=int, help="(Benchwright) worker processes")
    for flag in (
        "--warmup-time", "--forced-shutdown", "--thread-stack-size", "--thread-init-timeout",
        "--rand-spec", "--luajit-cmd", "--debug", "--validate", "--verbosity", "--db-ps-mode",
        "--db-debug", "--mysql-socket", "--mysql-ssl", "--mysql-storage-engine",
        "--mysql-ignore-errors", "--mysql-dry-run", "--pgsql-sslmode", "--auto-inc",
        "--create-secondary", "--create-table-options", "--secondary", "--reconnect",
    ):  # fmt: skip
        refuse(p, flag)
    return p


def _normalise(argv: list[str]) -> list[str]:
    """sysbench's bare booleans (`--skip-trx`) as `--skip-trx=on`, so a following word stays a word."""
    return [f"{a}=on" if a in (f"--{s}" for s in SWITCHES) else a for a in argv]


def handle(args: argparse.Namespace) -> int:
    opts = parser().parse_intermixed_args(_normalise(args.argv))
    check_numbers(opts)
    if opts.version:
        print(f"sysbench (benchwright {__version__})")
        return 0
    test, command = words(opts.words)
    engine = DRIVERS[opts.db_driver]
    props = {f"{engine}.url": url_of(opts)}
    for name, value in (("test", test), ("seed", None), ("overrides", []), ("command", command)):
        setattr(opts, name, value)
    settings = oltp_properties(opts, engine, props)
    print(f"sysbench (benchwright {__version__})")
    print()
    if command == "cleanup":
        cleanup(engine, props, settings)
        return 0
    opts.seed = opts.rand_seed or None
    if command == "prepare":
        doc = prepare(opts, engine, props)
        if opts.threads > 1:  # sysbench prepares the tables from that many threads
            print("Initializing worker threads...")
            print()
        for table, rows in doc.extra.get("rows", {}).items():
            print(f"Creating table '{table}'...")
            print(f"Inserting {rows} records into '{table}'")
            print(f"Creating a secondary index on '{table}'...")
        return 0
    for line in preamble(opts):
        print(line)
    live = _interval_printer(opts.report_interval, opts.percentile, settings)
    doc = run(opts, engine, props, settings, live)
    if opts.histogram:
        for line in histogram_lines(doc, settings.test):
            print(line)
    for line in summary_lines(doc, settings, opts.percentile):
        print(line)
    return 0


def words(given: list[str]) -> tuple[str, str]:
    """TESTNAME and COMMAND, in sysbench's order (either may come first: sysbench takes the test
    name, then the command, from the words left after the options)."""
    if len(given) != 2:
        raise UsageError(
            f"{PROG}: expected TESTNAME and one of {', '.join(COMMANDS)}, got {' '.join(given) or 'nothing'}"
        )
    test, command = given if given[1] in COMMANDS else given[::-1]
    if command not in COMMANDS:
        raise UsageError(f"{PROG}: unknown command {given[1]!r} (one of {', '.join(COMMANDS)})")
    name = test.removesuffix(".lua").rsplit("/", 1)[-1].removeprefix("oltp_")
    if name not in TESTS:
        raise UsageError(f"{PROG}: test {test!r} is not implemented (one of oltp_{', oltp_'.join(TESTS)})")
    return name, command


def url_of(opts: argparse.Namespace) -> str:
    """The driver's --DRIVER-* options as a URL (the password is never stored: results redact it)."""
    driver = opts.db_driver
    other = next(d for d in DRIVERS if d != driver)
    stray = [f"--{other}-{key}" for key in DEFAULTS[other] if getattr(opts, f"{other}_{key}") is not None]
    if stray:
        raise UsageError(f"{PROG}: {', '.join(stray)}: given with --db-driver={driver}")
    get = {
        key: default if getattr(opts, f"{driver}_{key}") is None else getattr(opts, f"{driver}_{key}")
        for key, default in DEFAULTS[driver].items()
    }
    if not get["port"].isdigit():
        raise UsageError(f"{PROG}: --{driver}-port: expected a number, got {get['port']!r}")
    auth = quote(get["user"], safe="") + (f":{quote(get['password'], safe='')}" if get["password"] else "")
    scheme = "postgresql" if driver == "pgsql" else "mysql"
    return f"{scheme}://{auth}@{get['host']}:{get['port']}/{quote(get['db'], safe='')}"


def preamble(opts: argparse.Namespace) -> list[str]:
    lines = ["Running the test with following options:", f"Number of threads: {opts.threads}"]
    if opts.rate:
        lines.append(f"Target transaction rate: {opts.rate:g}/sec")
    if opts.report_interval:
        lines.append(f"Report intermediate results every {opts.report_interval:g} second(s)")
    seed = f"seed ({opts.rand_seed})." if opts.rand_seed else "current time"
    lines += [f"Initializing random number generator from {seed}", "", "", "Initializing worker threads..."]
    return [*lines, "", "Threads started!", ""]


def _interval_printer(every: float, percentile: float, settings: OltpSettings) -> PeriodProgress | None:
    if every < 0 or every != int(every):
        raise UsageError(f"{PROG}: --report-interval: needs a whole number of seconds, got {every:g}")
    if not every:
        return None
    per = settings.queries_per_event()
    return PeriodProgress(every, lambda period: print(interval_line(period, per, percentile), flush=True))


def summary_lines(doc: ResultDocument, settings: OltpSettings, percentile: float) -> list[str]:
    """sysbench's closing statistics. Left out: reconnects and threads fairness (not counted)."""
    x = doc.extra
    q, qps = x.get("queries", {}), x.get("queries_per_second", {})
    seconds = doc.runtime_ms / 1000
    summary = doc.operations.get(x.get("test", settings.test))
    events = summary.operations if summary else 0
    mean_ms = summary.average_us / 1000 if summary else 0.0
    pct_ms = 0.0
    if summary is not None and summary.histogram:
        pct_ms = decode_histogram(summary.histogram).get_value_at_percentile(percentile) / 1000
    ignored = x.get("ignored_errors", 0)

    def stat(name: str, value: Any, rate: float) -> str:
        return f"    {name + ':':<37}{value:<7}({rate:.2f} per sec.)"

    return [
        "SQL statistics:",
        "    queries performed:",
        *(f"        {k + ':':<33}{q.get(k, 0)}" for k in ("read", "write", "other", "total")),
        stat("transactions", x.get("transactions", 0), x.get("tps", 0.0)),
        stat("queries", q.get("total", 0), qps.get("total", 0.0)),
        stat("ignored errors", ignored, ignored / max(seconds, 1e-9)),
        "",
        "General statistics:",
        f"    {'total time:':<37}{seconds:.4f}s",
        f"    {'total number of events:':<37}{events}",
        "",
        "Latency (ms):",
        f"         {'min:':<28}{(summary.min_us / 1000) if summary else 0:>16.2f}",
        f"         {'avg:':<28}{mean_ms:>16.2f}",
        f"         {'max:':<28}{(summary.max_us / 1000) if summary else 0:>16.2f}",
        f"         {f'{percentile:g}th percentile:':<28}{pct_ms:>16.2f}",
        f"         {'sum:':<28}{mean_ms * events:>16.2f}",
        "",
    ]


def histogram_lines(doc: ResultDocument, test: str) -> list[str]:
    """sysbench's --histogram table from the run's latency histogram: its 1024 logarithmic buckets
    (each latency to the nearest bucket value), the bar scaled to the fullest bucket."""
    summary = doc.operations.get(f"oltp_{test}")
    buckets: dict[int, int] = {}
    if summary is not None and summary.histogram:
        histogram = decode_histogram(summary.histogram)
        span = math.log(HIST_HIGH_MS / HIST_LOW_MS)
        for item in histogram.get_recorded_iterator():
            ms = max(HIST_LOW_MS, item.value_iterated_to / 1000)
            index = min(HIST_BUCKETS - 1, round(math.log(ms / HIST_LOW_MS) * (HIST_BUCKETS - 1) / span))
            buckets[index] = buckets.get(index, 0) + int(item.count_at_value_iterated_to)
    fullest = max(buckets.values(), default=1)
    lines = [
        "Latency histogram (values are in milliseconds)",
        "       value  ------------- distribution ------------- count",
    ]
    for index in sorted(buckets):
        value = HIST_LOW_MS * (HIST_HIGH_MS / HIST_LOW_MS) ** (index / (HIST_BUCKETS - 1))
        bar = "*" * max(1, round(buckets[index] * HIST_WIDTH / fullest))
        lines.append(f"{value:12.3f} |{bar:<{HIST_WIDTH}} {buckets[index]}")
    return [*lines, ""]
