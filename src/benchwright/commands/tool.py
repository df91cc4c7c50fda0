"""`benchwright tool pgbench|sysbench|redis-benchmark|memtier [settings] [--json PATH] [-- TOOL ARGS]`.

Runs the native tool the user trusts and files its numbers in the same result document as our own
workloads (``measurement.source`` names the tool). Two ways: with our settings (flags below, built
into the tool's command line) or, after ``--``, the tool's own arguments passed through unchanged.
Progress lines stream to the terminal as the tool prints them.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Callable

from benchwright.commands import Subparsers
from benchwright.commands.paths import output_file
from benchwright.errors import SpecError
from benchwright.results import ResultDocument
from benchwright.runner.workloads.external import memtier, pgbench, redis_benchmark, sysbench
from benchwright.runner.workloads.external.common import (
    Parsed,
    build_document,
    check_exit,
    find_tool,
    run_tool,
    tool_version,
)
from benchwright.runner.workloads.redisbench.buckets import latency_buckets

TOOLS = {
    "pgbench": "pgbench",
    "sysbench": "sysbench",
    "redis-benchmark": "redis-benchmark",
    "memtier": "memtier_benchmark",
}
# flags whose value is a secret, in the forms the tools accept
_SECRET_FLAGS = re.compile(r"^(-a|--authenticate|--pass|--mysql-password|--pgsql-password)(=(?P<v>.*))?$")


def _echo(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def register(sub: Subparsers) -> None:
    p = sub.add_parser(
        "tool",
        help="run a native tool (pgbench, sysbench, redis-benchmark, memtier) into a result",
        description="benchwright tool TOOL [settings] [--json PATH] [-- TOOL ARGS]; "
        "`benchwright tool TOOL --help` lists a tool's settings.",
    )
    p.add_argument("tool", choices=TOOLS, help="which native tool")
    p.add_argument("rest", nargs=argparse.REMAINDER, help="settings, then -- and the tool's own arguments")
    p.set_defaults(handler=handle)


def tool_parser(tool: str) -> argparse.ArgumentParser:
    """The settings a tool accepts when Benchwright builds its command line."""
    if tool == "redis-benchmark":
        from benchwright.commands.redisbench import add_redis_flags

        rb = argparse.ArgumentParser(prog="benchwright tool redis-benchmark", add_help=False)
        add_redis_flags(rb)
        sp = rb
    elif tool == "pgbench":
        sp = argparse.ArgumentParser(prog="benchwright tool pgbench")
        sp.add_argument(
            "--url", default=os.environ.get("BENCHWRIGHT_PG_URL"), help="postgres.url ($BENCHWRIGHT_PG_URL)"
        )
        sp.add_argument("-i", "--init", action="store_true", help="initialise (the load phase)")
        sp.add_argument("-s", "--scale", type=int, default=1)
        sp.add_argument("-F", "--fillfactor", type=int, default=100)
        sp.add_argument(
            "-b", "--builtin", default="tpcb-like", help="tpcb-like | simple-update | select-only"
        )
        sp.add_argument("-S", dest="select_only", action="store_true", help="same as -b select-only")
        sp.add_argument("-f", "--file", help="custom script file")
        sp.add_argument("-c", "--client", type=int, default=1)
        sp.add_argument("-j", "--jobs", type=int, default=1)
        sp.add_argument("-T", "--time", type=int, default=10)
        sp.add_argument("-t", "--transactions", type=int)
        sp.add_argument("-M", "--protocol", default="simple")
        sp.add_argument("-P", "--progress", type=int, default=1)
        sp.add_argument("-R", "--rate", type=float)
        sp.add_argument("--no-log", action="store_true", help="skip the per-transaction log (no histogram)")
    elif tool == "sysbench":
        sp = argparse.ArgumentParser(prog="benchwright tool sysbench")
        sp.add_argument("test", nargs="?", default="oltp_read_write", choices=sysbench.TESTS)
        sp.add_argument("command", nargs="?", default="run", choices=("prepare", "run", "cleanup"))
        sp.add_argument("--engine", choices=("postgres", "mysql"), default="mysql")
        sp.add_argument(
            "--url", help="postgres.url / mysql.url (default $BENCHWRIGHT_PG_URL / $BENCHWRIGHT_MYSQL_URL)"
        )
        sp.add_argument("--tables", type=int, default=1)
        sp.add_argument("--table-size", type=int, default=10_000)
        sp.add_argument("--threads", type=int, default=1)
        sp.add_argument("--time", type=int, default=10)
        sp.add_argument("--report-interval", type=int, default=1)
    else:
        sp = argparse.ArgumentParser(prog="benchwright tool memtier")
        sp.add_argument("--host", default="127.0.0.1")
        sp.add_argument("--port", type=int, default=6379)
        sp.add_argument("-a", dest="password")
        sp.add_argument("--dbnum", type=int, default=0)
        sp.add_argument("--ratio", default="1:10")
        sp.add_argument("--threads", type=int, default=4)
        sp.add_argument("--clients", type=int, default=50)
        sp.add_argument("--requests", type=int, default=10_000)
        sp.add_argument("--test-time", type=int)
        sp.add_argument("--data-size", type=int, default=32)
        sp.add_argument("--key-maximum", type=int, default=10_000_000)
        sp.add_argument("--pipeline", type=int, default=1)
    if not any(a.dest == "json" for a in sp._actions):
        sp.add_argument("--json", type=output_file, metavar="PATH", help="write the result document here")
    sp.add_argument("--binary", help="path or name of the tool binary")
    return sp


def handle(args: argparse.Namespace) -> int:
    rest = list(args.rest or [])
    cut = rest.index("--") if "--" in rest else len(rest)
    settings_args, passthrough = rest[:cut], rest[cut + 1 :]
    opts = tool_parser(args.tool).parse_args(settings_args)
    opts.tool = args.tool
    doc = run_passthrough(args.tool, passthrough, opts.binary) if passthrough else run_with_settings(opts)
    if opts.json:
        doc.write(opts.json)
    print(summary_line(doc))
    return 0


def run_with_settings(args: argparse.Namespace) -> ResultDocument:
    from benchwright.commands.redisbench import connection_of, settings_of

    if args.tool == "pgbench":
        if not args.url:
            raise SpecError("--url", "give the PostgreSQL URL (or set BENCHWRIGHT_PG_URL)")
        settings = pgbench.PgbenchSettings(
            mode="init" if args.init else "run",
            builtin="select-only" if args.select_only else args.builtin,
            script=args.file,
            scale=args.scale,
            fillfactor=args.fillfactor,
            clients=args.client,
            jobs=args.jobs,
            time_s=args.time,
            transactions=args.transactions,
            protocol=args.protocol,
            progress_s=args.progress,
            rate=args.rate,
            transaction_log=not args.no_log,
        )
        return pgbench.run(settings, args.url, echo=_echo, binary=args.binary)
    if args.tool == "sysbench":
        env_key = "BENCHWRIGHT_PG_URL" if args.engine == "postgres" else "BENCHWRIGHT_MYSQL_URL"
        url = args.url or os.environ.get(env_key)
        if not url:
            raise SpecError("--url", f"give the {args.engine} URL (or set {env_key})")
        sb = sysbench.SysbenchSettings(
            test=args.test,
            command=args.command,
            tables=args.tables,
            table_size=args.table_size,
            threads=args.threads,
            time_s=args.time,
            report_interval_s=args.report_interval,
        )
        return sysbench.run(sb, args.engine, url, echo=_echo, binary=args.binary)
    if args.tool == "redis-benchmark":
        return redis_benchmark.run(settings_of(args), connection_of(args), echo=_echo, binary=args.binary)
    conn = {"redis.host": args.host, "redis.port": str(args.port), "redis.db": str(args.dbnum)}
    if args.password:
        conn["redis.password"] = args.password
    mt = memtier.MemtierSettings(
        ratio=args.ratio,
        threads=args.threads,
        clients=args.clients,
        requests=None if args.test_time else args.requests,
        test_time_s=args.test_time or 10,
        data_size=args.data_size,
        key_maximum=args.key_maximum,
        pipeline=args.pipeline,
    )
    return memtier.run(mt, conn, echo=_echo, binary=args.binary)


def secrets_in(argv: list[str]) -> list[str]:
    """Values of password flags in a passed-through command line (scrubbed from the document)."""
    found: list[str] = []
    for i, arg in enumerate(argv):
        m = _SECRET_FLAGS.match(arg)
        if m and m["v"]:
            found.append(m["v"])
        elif m and i + 1 < len(argv):
            found.append(argv[i + 1])
    return found + [v for k in ("PGPASSWORD", "BENCHWRIGHT_DB_PASSWORD") if (v := os.environ.get(k, ""))]


def _flag(argv: list[str], *names: str) -> str | None:
    for i, arg in enumerate(argv):
        for name in names:
            if arg == name and i + 1 < len(argv):
                return argv[i + 1]
            if name.startswith("--") and arg.startswith(name + "="):
                return arg.split("=", 1)[1]
    return None


def run_passthrough(tool: str, tool_args: list[str], binary: str | None = None) -> ResultDocument:
    """Run the tool with the user's own arguments and parse whatever it printed."""
    path = find_tool(TOOLS[tool], binary)
    secrets = secrets_in(tool_args)
    result = run_tool([path, *tool_args], echo=_echo)
    check_exit(result, tool, secrets)
    parse: Callable[[str], Parsed]
    engine, workload, phase = "redis", "redis-bench", "run"
    if tool == "pgbench":
        parse, engine, workload = pgbench.parse, "postgres", "tpcb"
        phase = "load" if "-i" in tool_args or "--initialize" in tool_args else "run"
    elif tool == "sysbench":
        test = next((a for a in tool_args if a in sysbench.TESTS), sysbench.OPERATION)

        def parse(out: str) -> Parsed:
            return sysbench.name_operation(sysbench.parse(out), test)

        workload = "oltp"
        engine = "postgres" if (_flag(tool_args, "--db-driver") or "mysql") == "pgsql" else "mysql"
        phase = "load" if "prepare" in tool_args else "run"
    elif tool == "redis-benchmark":
        n = int(_flag(tool_args, "-n") or 100_000)
        c = int(_flag(tool_args, "-c") or 50)

        def parse(out: str) -> Parsed:
            return redis_benchmark.parse(out, n, c)
    else:
        parse = memtier.parse
    host = _flag(tool_args, "-h", "--host", "--server", "--mysql-host", "--pgsql-host") or "default"
    port = _flag(tool_args, "-p", "--port", "--mysql-port", "--pgsql-port") or ""
    doc = build_document(
        tool=TOOLS[tool],
        workload=workload,
        engine=engine,
        phase=phase,
        parsed=parse(result.output),
        run=result,
        endpoint=f"{host}:{port}" if port else host,
        settings={"passthrough": "true"},
        secrets=secrets,
        version=tool_version(path),
    )
    if engine == "redis":
        doc.extra["latency_buckets"] = latency_buckets(doc)
    return doc


def summary_line(doc: ResultDocument) -> str:
    missing = doc.extra.get("not_reported", {})

    def avg(name: str, us: float) -> str:
        return "avg n/a" if "average_us" in missing.get(name, []) else f"avg {us / 1000:.3f} ms"

    ops = ", ".join(
        f"{n} {o.operations} ops {o.throughput:,.1f}/s {avg(n, o.average_us)}"
        for n, o in doc.operations.items()
    )
    flags = "".join(f"\n{f.severity}: {f.code}: {f.message}" for f in doc.validity)
    return f"{doc.measurement.source} {doc.workload} {doc.phase}: {ops}{flags}"
