"""`benchwright redis-bench -h HOST -p PORT -a PASS -t set,get -d 3000 -r 100000 -n 100000 -c 50 -P 1`.

Flags are redis-benchmark's own letters, so ``-h`` is the host: help is ``--help``. The password may
also come from $BENCHWRIGHT_DB_PASSWORD (it is never written into the result). Tests run one after
another, each with all clients, and print redis-benchmark-style summaries plus the latency buckets
experiment 4 tabulates (share of requests within 1/5/50/100/300/500 ms, and the max).
"""

from __future__ import annotations

import argparse
import sys

from benchwright.commands import Subparsers
from benchwright.commands.literal import ToolParser, check_numbers, refuse, register_literal
from benchwright.commands.paths import output_file
from benchwright.commands.redisbench_live import LiveLines
from benchwright.results import ResultDocument
from benchwright.runner.engine import ensure_complete
from benchwright.runner.workloads.redisbench.buckets import format_buckets
from benchwright.runner.workloads.redisbench.commands import TITLES
from benchwright.runner.workloads.redisbench.sequential import RedisBenchSettings, run_redis_bench

ENGINES = ("redis", "null", "postgres", "mysql")  # the non-Redis ones exist to fail clearly


def add_redis_flags(p: argparse.ArgumentParser) -> None:
    """redis-benchmark's flags (shared with `benchwright tool redis-benchmark`)."""
    p.add_argument("--help", action="help", help="show this help and exit")
    p.add_argument("-h", dest="host", default="127.0.0.1", help="server hostname (default 127.0.0.1)")
    p.add_argument("-p", dest="port", type=int, default=6379, help="server port (default 6379)")
    p.add_argument("-a", dest="password", help="password (or $BENCHWRIGHT_DB_PASSWORD)")
    p.add_argument("--dbnum", type=int, default=0, help="SELECT this database number (default 0)")
    p.add_argument("--tls", action="store_true", help="connect with TLS")
    p.add_argument("-t", dest="tests", default="set,get", help="comma list of tests (default set,get)")
    p.add_argument(
        "-n", dest="requests", type=int, default=100_000, help="requests per test (default 100000)"
    )
    p.add_argument("-c", dest="clients", type=int, default=50, help="parallel clients (default 50)")
    p.add_argument("-d", dest="datasize", type=int, default=3, help="SET/GET value size in bytes (default 3)")
    p.add_argument(
        "-r", dest="keyspace", type=int, default=0, help="random keys in [0, N) (default: one key)"
    )
    p.add_argument("-P", dest="pipeline", type=int, default=1, help="pipeline N requests (default 1)")
    p.add_argument("--json", type=output_file, metavar="PATH", help="write the result document here")


def register(sub: Subparsers) -> None:
    register_literal(
        sub,
        "redis-bench",
        "redis-benchmark's tests natively (-h host -p port -t set,get -n -c -d -r -P -q --csv)",
        handle,
        aliases=("redis-benchmark",),
    )


def parser() -> ToolParser:
    """redis-benchmark's command line: an option it does not know is refused by name, exit 1."""
    p = ToolParser(
        "benchwright redis-benchmark",
        "redis-benchmark semantics on Benchwright's runner (one result document).",
        help_flags=(),
    )
    add_redis_flags(p)
    p.add_argument("-q", dest="quiet", action="store_true", help="quiet: just the requests per second")
    p.add_argument("--csv", action="store_true", help="output in CSV format, as redis-benchmark's")
    p.add_argument("--engine", choices=ENGINES, default="redis", help="driver (default redis)")
    p.add_argument("--processes", type=int, help="worker processes (default: min(clients, 2 x cores))")
    for flag in ("-s", "-u", "--user", "-k", "-l", "-I", "--threads", "--cluster", "--precision", "-x"):
        refuse(p, flag, takes_value=flag not in ("-l", "-I", "--cluster", "-x"))
    for flag in ("--enable-tracking", "--insecure", "-e", "--seed"):
        refuse(p, flag, takes_value=flag == "--seed")
    for flag in (
        "--cacert",
        "--cacertdir",
        "--cert",
        "--key",
        "--tls-ciphers",
        "--tls-ciphersuites",
        "--sni",
    ):
        refuse(p, flag)
    return p


def settings_of(args: argparse.Namespace, processes: int | None = None) -> RedisBenchSettings:
    return RedisBenchSettings(
        tests=args.tests,
        datasize=args.datasize,
        keyspace=args.keyspace,
        requests=args.requests,
        clients=args.clients,
        pipeline=args.pipeline,
        processes=processes,
    )


def connection_of(args: argparse.Namespace) -> dict[str, str]:
    conn = {"redis.host": args.host, "redis.port": str(args.port), "redis.db": str(args.dbnum)}
    if args.password:
        conn["redis.password"] = args.password
    if args.tls:
        conn["redis.tls"] = "true"
    return conn


def summary_text(doc: ResultDocument, quiet: bool = False) -> str:
    """redis-benchmark-like text: per test throughput and latency summary, then the bucket table."""
    clients = doc.measurement.threads
    size = doc.properties.get("redisbench.datasize", "?")
    lines: list[str] = []
    for operation, op in doc.succeeded().items():
        name = title(operation)
        ms = {k: getattr(op, f"{k}_us") / 1000 for k in ("average", "min", "p50", "p95", "p99", "max")}
        if quiet:
            lines.append(f"{name}: {op.throughput:.2f} requests per second, p50={ms['p50']:.3f} msec")
            continue
        seconds = op.operations / op.throughput if op.throughput else 0.0
        errors = doc.failed(operation)
        lines += [
            f"====== {name} ======",
            f"  {op.operations} requests completed in {seconds:.2f} seconds",
            f"  {clients} parallel clients",
            f"  {size} bytes payload",
            *([f"  {errors} requests failed"] if errors else []),
            "",
            "Summary:",
            f"  throughput summary: {op.throughput:.2f} requests per second",
            "  latency summary (msec):",
            "          avg       min       p50       p95       p99       max",
            "    " + "".join(f"{ms[k]:>10.3f}" for k in ("average", "min", "p50", "p95", "p99", "max")),
            "",
        ]
    if not quiet and doc.extra.get("latency_buckets"):
        lines += [
            "Latency buckets (share of requests within):",
            format_buckets(doc.extra["latency_buckets"]),
            "",
        ]
    for flag in doc.validity:
        lines.append(f"{flag.severity}: {flag.code}: {flag.message}")
    return "\n".join(lines) + "\n"


def csv_text(doc: ResultDocument) -> str:
    """redis-benchmark --csv: a header, then one quoted row per test (milliseconds, 3 decimals)."""
    head = ["test", "rps", *(f"{k}_latency_ms" for k in ("avg", "min", "p50", "p95", "p99", "max"))]
    rows = [",".join(f'"{h}"' for h in head)]
    for name, op in doc.succeeded().items():
        ms = [getattr(op, f"{k}_us") / 1000 for k in ("average", "min", "p50", "p95", "p99", "max")]
        cells = [title(name), f"{op.throughput:.2f}", *(f"{v:.3f}" for v in ms)]
        rows.append(",".join(f'"{c}"' for c in cells))
    return "\n".join(rows) + "\n"


def title(operation: str) -> str:
    """redis-benchmark's name for a test's operation (``LRANGE_100 (first 100 elements)``)."""
    return TITLES.get(operation.lower(), operation)


def handle(argv: argparse.Namespace) -> int:
    args = parser().parse_args(argv.argv)
    check_numbers(args)
    settings = settings_of(args, args.processes)
    lines = LiveLines(settings.pipeline, sys.stderr, sys.stderr.isatty())
    live = None if args.quiet or args.csv else lines.for_test
    try:
        doc = run_redis_bench(settings, args.engine, connection_of(args), live=live)
    finally:
        lines.close()
    if args.json:
        doc.write(args.json)
    sys.stdout.write(csv_text(doc) if args.csv else summary_text(doc, args.quiet))
    if args.csv:  # validity flags still reach the reader, on stderr
        for flag in doc.validity:
            print(f"{flag.severity}: {flag.code}: {flag.message}", file=sys.stderr)
    ensure_complete(doc)
    return 0
