"""`benchwright pgbench [OPTION]... [DBNAME]`: pgbench's own command line, run by Benchwright's tpcb.

A script written for pgbench runs with the binary name swapped: `-i [-I STEPS] [-s N] [-F N]`, the
connection as pgbench takes it (`-h HOST -p PORT -U USER DBNAME`, else $PGHOST, $PGPORT, $PGUSER,
$PGDATABASE; the password from $PGPASSWORD or ~/.pgpass, read by libpq), and the run's
`-c -j -T -t -P -R -L -M/--protocol -S -N -b NAME[@W] -f FILE[@W] -D -r -n --progress-timestamp
--random-seed`. Streams as pgbench's: init messages, the pre-run vacuum and progress lines on stderr;
the summary on stdout. A pgbench flag the mirror does not implement (-C, -l ...) is refused by name,
exit 1. Scripts: commands/pgbench_scripts.py.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from urllib.parse import quote

from benchwright import __version__
from benchwright.commands import Subparsers, pgbench_scripts
from benchwright.commands.literal import ToolParser, check_numbers, refuse, register_literal
from benchwright.commands.paths import output_file
from benchwright.commands.sql import run_and_write
from benchwright.errors import SpecError, UsageError
from benchwright.results import ResultDocument
from benchwright.runner.engine import PeriodProgress, PhaseConfig
from benchwright.runner.workloads.pgscript.report import summary_lines as script_summary_lines
from benchwright.runner.workloads.tpcb.pgbench_format import init_lines, progress_line, summary_lines
from benchwright.runner.workloads.tpcb.workload import DEFAULT_INIT_STEPS, init_steps

PROG = "benchwright pgbench"
DEFAULT_TRANSACTIONS = 10  # pgbench: -t 10 when neither -t nor -T is given
# options only -i takes, and options only a run takes (pgbench refuses each in the other mode)
INIT_ONLY = ("init_steps", "fillfactor", "foreign_keys", "quiet")
RUN_ONLY = (
    "client",
    "jobs",
    "time",
    "transactions",
    "progress",
    "rate",
    "latency_limit",
    "protocol",
    "scripts",
    "progress_timestamp",
    "report_per_command",
    "define",
)


def register(sub: Subparsers) -> None:
    register_literal(sub, "pgbench", "pgbench's command line, run by Benchwright (postgres)", handle)


def parser() -> ToolParser:
    p = ToolParser(
        PROG,
        "pgbench's command line, measured by Benchwright on pgbench's tables (PostgreSQL).",
        help_flags=("-?", "--help"),
    )
    init = p.add_argument_group("initialization options")
    init.add_argument("-i", "--initialize", action="store_true", help="invoke initialization mode")
    init.add_argument(
        "-I", "--init-steps", metavar="STEPS", help=f"steps to run (default {DEFAULT_INIT_STEPS})"
    )
    init.add_argument("-F", "--fillfactor", type=int, metavar="NUM", help="fill factor (default 100)")
    init.add_argument("-n", "--no-vacuum", action="store_true", help="do not run VACUUM")
    init.add_argument("-q", "--quiet", action="store_true", help="quiet logging")
    init.add_argument("-s", "--scale", type=int, metavar="NUM", help="scaling factor")
    init.add_argument("--foreign-keys", action="store_true", help="create foreign key constraints")
    for flag in ("--index-tablespace", "--partition-method", "--partitions", "--tablespace"):
        refuse(p, flag)
    refuse(p, "--unlogged-tables", takes_value=False)

    run = p.add_argument_group("benchmarking options")
    script = pgbench_scripts.ScriptArg
    run.add_argument(
        "-b", "--builtin", action=script, dest="scripts", metavar="NAME[@W]", help="built-in script"
    )
    run.add_argument(
        "-f", "--file", action=script, dest="scripts", metavar="FILENAME[@W]", help="script file"
    )
    run.add_argument("-D", "--define", action="append", metavar="VARNAME=VALUE", help="a script variable")
    run.add_argument(
        "-r",
        "--report-per-command",
        "--report-latencies",
        action="store_true",
        help="each command's mean latency and failures (timed in the client)",
    )
    run.add_argument(
        "-N", "--skip-some-updates", action=script, dest="scripts", nargs=0, help="-b simple-update"
    )
    run.add_argument("-S", "--select-only", action=script, dest="scripts", nargs=0, help="-b select-only")
    run.add_argument("-c", "--client", type=int, metavar="NUM", help="number of clients (default 1)")
    run.add_argument("-j", "--jobs", type=int, metavar="NUM", help="worker processes (default 1)")
    run.add_argument(
        "-L", "--latency-limit", type=float, metavar="NUM", help="count transactions over NUM ms"
    )
    run.add_argument("-M", "--protocol", choices=("simple", "extended", "prepared"), help="query mode")
    run.add_argument("-P", "--progress", type=int, metavar="NUM", help="progress report every NUM seconds")
    run.add_argument("-R", "--rate", type=float, metavar="NUM", help="target rate in transactions per second")
    run.add_argument("-t", "--transactions", type=int, metavar="NUM", help="transactions per client")
    run.add_argument("-T", "--time", type=int, metavar="NUM", help="duration of the benchmark in seconds")
    run.add_argument("--progress-timestamp", action="store_true", help="Unix epoch timestamps in progress")
    run.add_argument("--random-seed", metavar="SEED", help="an integer, or time / rand (unseeded)")
    run.add_argument(
        "--json", type=output_file, metavar="PATH", help="(Benchwright) write the result document"
    )
    for flags in (("-C", "--connect"), ("-v", "--vacuum-all"), ("--failures-detailed",), ("--show-script",)):
        refuse(p, *flags, takes_value=False)
    refuse(p, "--verbose-errors", takes_value=False)
    for flags in (("--aggregate-interval",), ("--log-prefix",), ("--max-tries",)):
        refuse(p, *flags)
    refuse(p, "--sampling-rate")
    refuse(p, "-l", "--log", takes_value=False, why="per-transaction logs: use --json for the full histogram")

    common = p.add_argument_group("common options")
    common.add_argument("-h", "--host", metavar="HOSTNAME", help="database server host or socket directory")
    common.add_argument("-p", "--port", metavar="PORT", help="database server port number")
    common.add_argument("-U", "--username", metavar="USERNAME", help="connect as this user")
    common.add_argument("-V", "--version", action="store_true", help="output version information, then exit")
    refuse(p, "-d", "--debug", takes_value=False)
    p.add_argument("dbname", nargs="?", help="database (default $PGDATABASE, else the user name)")
    return p


def handle(args: argparse.Namespace) -> int:
    opts = parser().parse_args(args.argv)
    check_numbers(opts)
    if opts.version:
        print(f"pgbench (benchwright {__version__})")
        return 0
    props = {"postgres.url": postgres_url(opts.host, opts.port, opts.username, opts.dbname)}
    mode_check(opts)
    if opts.initialize:
        return initialize(opts, props)
    return benchmark(opts, props)


def postgres_url(host: str | None, port: str | None, user: str | None, dbname: str | None) -> str:
    """A libpq URL of what was given; libpq fills the rest from $PGHOST... as it does for pgbench."""
    if port is not None and not port.isdigit():
        raise UsageError(f"{PROG}: -p: invalid port number {port!r}")
    query = ""
    if host and host.startswith("/"):  # a socket directory
        query, host = f"?host={quote(host, safe='')}", None
    netloc = f"{quote(user, safe='')}@" if user else ""
    netloc += quote(host or "", safe=":[]") + (f":{port}" if port else "")
    return f"postgresql://{netloc}/{quote(dbname or '', safe='')}{query}"


def mode_check(opts: argparse.Namespace) -> None:
    """pgbench's rule: init-only options need -i, benchmarking options refuse it."""
    given = [name for name in RUN_ONLY if getattr(opts, name) not in (None, False)]
    if opts.initialize and given:
        named = {"scripts": "/".join(dict.fromkeys(kind for kind, _ in opts.scripts or []))}
        flags = ", ".join(named.get(name) or f"--{name.replace('_', '-')}" for name in given)
        raise UsageError(f"{PROG}: {flags}: cannot be used in initialization (-i) mode")
    given = [name for name in INIT_ONLY if getattr(opts, name) not in (None, False)]
    if not opts.initialize and given:
        flags = ", ".join(f"--{name.replace('_', '-')}" for name in given)
        raise UsageError(f"{PROG}: {flags}: can only be used in initialization (-i) mode")


def _say(line: str, end: str = "\n") -> None:
    print(line, end=end, file=sys.stderr, flush=True)


def initialize(opts: argparse.Namespace, props: dict[str, str]) -> int:
    steps = opts.init_steps or DEFAULT_INIT_STEPS
    try:
        init_steps(steps)
    except SpecError as exc:
        raise UsageError(f"{PROG}: -I {steps}: {exc.detail}") from None
    if opts.no_vacuum:
        steps = steps.replace("v", "")
    if opts.foreign_keys and "f" not in steps:
        steps += "f"
    props["tpcb.init_steps"] = steps
    props["tpcb.scale"] = str(opts.scale if opts.scale is not None else 1)
    if opts.fillfactor is not None:
        props["tpcb.fillfactor"] = str(opts.fillfactor)
    config = PhaseConfig(
        workload="tpcb", phase="load", engine="postgres", properties=props, threads=2, seed=_seed(opts)
    )
    doc = run_and_write(config, opts.json)
    for line in init_lines(doc):
        _say(line)
    return 0


def _seed(opts: argparse.Namespace) -> int | None:
    seed = getattr(opts, "random_seed", None)
    if seed in (None, "time", "rand"):
        return None
    try:
        return int(seed)
    except ValueError:
        raise UsageError(f"{PROG}: --random-seed: expected an integer, time or rand, got {seed!r}") from None


def benchmark(opts: argparse.Namespace, props: dict[str, str]) -> int:
    if opts.time is not None and opts.transactions is not None:
        raise UsageError(f"{PROG}: -T and -t: specify only one of them (pgbench's rule)")
    if opts.latency_limit is not None and opts.rate is not None:
        raise UsageError(f"{PROG}: -L with -R: skipping late transactions is not implemented")
    clients = opts.client if opts.client is not None else 1
    if clients < 1:
        raise UsageError(f"{PROG}: -c: invalid number of clients: {clients}")
    chosen = pgbench_scripts.chosen_scripts(opts)
    if opts.scale is not None and any(c.builtin for c in chosen):
        _say(f"{PROG}: warning: scale option ignored, using count from pgbench_branches table")
    script = pgbench_scripts.one_builtin(chosen, opts)
    if script is not None:
        props.update({"tpcb.script": script, "tpcb.protocol": opts.protocol or "simple"})
    else:
        props.update(pgbench_scripts.script_properties(chosen, opts))
        if opts.report_per_command and all(c.builtin for c in chosen):
            _say(pgbench_scripts.EXECUTOR_NOTE)
    if not opts.no_vacuum:
        vacuum(props)
    per_client = None if opts.time is not None else (opts.transactions or DEFAULT_TRANSACTIONS)
    jobs = min(clients, opts.jobs or 1)
    config = PhaseConfig(
        workload="tpcb" if script is not None else "pgbench-script",
        phase="run",
        engine="postgres",
        properties=props,
        threads=clients,
        processes=jobs,
        target=opts.rate,
        operation_count=None if per_client is None else per_client * clients,
        max_seconds=opts.time,
        seed=_seed(opts),
    )
    stamp = opts.progress_timestamp

    def show(period: object) -> None:
        line = progress_line(period)  # type: ignore[arg-type]
        if stamp:  # pgbench: the Unix time of the report instead of the elapsed seconds
            line = f"progress: {time.time():.3f} s," + line.split(" s,", 1)[1]
        _say(line)

    live = PeriodProgress(opts.progress, show) if opts.progress else None
    doc = run_and_write(config, opts.json, live)
    print(header(doc))
    stddev = bool(opts.progress or opts.rate or opts.latency_limit is not None)
    lines = summary_lines if script is not None else script_summary_lines
    for line in lines(doc, clients, jobs, per_client, opts.latency_limit, stddev):
        print(line)
    return failed_exit(doc)


def failed_exit(doc: ResultDocument) -> int:
    """pgbench's exit status for a run with errors: 2. pgbench stops a client at its first error;
    the mirror rolls the transaction back, counts it failed (never as throughput) and goes on, but
    a script checking ``$?`` must still see that the run was not clean."""
    if not doc.failed_total:
        return 0
    _say(
        f"benchwright: {doc.failed_total} transaction(s) failed (counted apart from the processed ones); exit 2"
    )
    return 2


def header(doc: ResultDocument) -> str:
    """pgbench's first line names its own version and the server's when they differ."""
    found = re.match(r"PostgreSQL (\S+(?: \([^)]*\))?)", doc.server_version or "")
    server = f", server {found[1]}" if found else ""
    return f"pgbench (benchwright {__version__}{server})"


def vacuum(props: dict[str, str]) -> None:
    """pgbench's pre-run step: vacuum branches and tellers, empty the history. Tables that are
    missing are left to the run's own check, which names them and the init command."""
    from benchwright.runner.drivers import new_driver
    from benchwright.runner.workloads.sqlscript.sqlkit import sql_driver

    driver = new_driver("postgres", props, 0)
    driver.connect()
    try:
        db = sql_driver(driver, "tpcb")
        if not all(db.table_exists(t) for t in ("pgbench_branches", "pgbench_tellers", "pgbench_history")):
            return
        _say("starting vacuum...", end="")
        for statement in (
            "vacuum pgbench_branches",
            "vacuum pgbench_tellers",
            "truncate pgbench_history",
        ):
            db.execute(statement)
        _say("end.")
    finally:
        driver.close()
