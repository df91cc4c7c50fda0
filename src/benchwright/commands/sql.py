"""`benchwright sql postgres|mysql -f FILE -c N -T SECONDS [--init FILE] [--url URL] [--json PATH]`.

Runs a statement file from N clients for T seconds (ysql_bench / pgbench -f style). Also holds the
helpers the other SQL command families (tpcc, tpcb, oltp) share: connection flags, engine from the
URL, running a phase and writing the result document.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

from benchwright.commands import Subparsers
from benchwright.commands.paths import output_file
from benchwright.errors import SpecError
from benchwright.results import ResultDocument
from benchwright.runner.engine import PhaseConfig, ensure_complete, run_phase
from benchwright.runner.fingerprint import stamp
from benchwright.runner.floor import network_floor
from benchwright.runner.plan import PlanContext
from benchwright.runner.workloads.registry import check_capability

SQL_ENGINES = ("postgres", "mysql")
URL_KEYS = {"postgres": "postgres.url", "mysql": "mysql.url", "null": "null.url"}


# ---------------------------------------------------------------- shared by the SQL command families
def add_connection_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--url",
        help="postgresql://user@host:port/db or mysql://user@host:port/db "
        "(password: in the URL or $BENCHWRIGHT_DB_PASSWORD)",
    )
    p.add_argument(
        "-p",
        "--property",
        dest="overrides",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="set a connection or workload property (e.g. postgres.url=...)",
    )
    p.add_argument("--json", type=output_file, metavar="PATH", help="write the result document here")
    p.add_argument("--seed", type=int, help="random seed for a repeatable sequence of inputs")


def engine_from_url(url: str | None) -> str | None:
    if not url:
        return None
    scheme = url.split("://", 1)[0].lower() if "://" in url else ""
    if scheme in ("postgres", "postgresql"):
        return "postgres"
    if scheme in ("mysql", "mariadb"):
        return "mysql"
    return None


def connection_properties(
    engine: str | None, url: str | None, overrides: list[str]
) -> tuple[str, dict[str, str]]:
    """(engine, properties) from the flags; the engine may come from the URL's scheme."""
    props: dict[str, str] = {}
    for pair in overrides:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise SpecError("-p", f"expected KEY=VALUE, got {pair!r}")
        props[key.strip()] = value.strip()
    from_url = engine_from_url(url)
    if engine is None:
        engine = from_url or next((e for e, k in URL_KEYS.items() if k in props), None)
    if engine is None:
        raise SpecError("--url", "give --url postgresql://... or mysql://... (or --engine)")
    if url:
        scheme = url.split("://", 1)[0] if "://" in url else ""
        if (from_url and from_url != engine) or (scheme and not from_url and engine != "null"):
            raise SpecError("--url", f"a {from_url or scheme}:// URL was given for engine {engine}")
        props[URL_KEYS.get(engine, f"{engine}.url")] = url
    if engine in ("postgres", "mysql") and URL_KEYS[engine] not in props:
        raise SpecError("--url", f"no {engine} connection: give --url or -p {URL_KEYS[engine]}=...")
    return engine, props


def run_and_write(
    config: PhaseConfig, json_path: Path | None, progress: Callable[[float, int, float], None] | None = None
) -> ResultDocument:
    """Refuse an engine without the capability before anything runs, run the phase, write the
    document (even a partial one), then raise RunAborted if it was cut short."""
    check_capability(config.workload, config.engine)
    floor, no_floor = network_floor(config)
    doc = run_phase(config, progress)
    stamp(doc, PlanContext(), floor, no_floor)  # this machine, against the endpoint given
    if json_path is not None:
        doc.write(json_path)
    report_flags(doc)
    ensure_complete(doc)
    return doc


def report_flags(doc: ResultDocument) -> None:
    for flag in doc.validity:
        if flag.severity != "info":
            print(f"benchwright: {flag.severity}: {flag.message}", file=sys.stderr)


def print_lines(lines: list[str]) -> None:
    for line in lines:
        print(line)


# ---------------------------------------------------------------- `benchwright sql`
def register(subparsers: Subparsers) -> None:
    p = subparsers.add_parser(
        "sql",
        help="run a SQL statement file from N clients for T seconds (postgres, mysql)",
        description="Run a file of statements with {{uuid}}, {{int:LOW:HIGH}}, {{string:LEN}} substitutions.",
    )
    p.add_argument("engine", choices=SQL_ENGINES)
    p.add_argument("-f", "--file", required=True, type=Path, help="statement file (statements end with ';')")
    p.add_argument("--init", type=Path, help="statements run once before the clients start")
    p.add_argument("-c", "--client", type=int, default=1, help="concurrent clients (default 1)")
    p.add_argument("-j", "--jobs", type=int, help="worker processes (default: min(clients, 2 x cores))")
    p.add_argument("-T", "--time", type=float, default=10.0, help="seconds to run (default 10)")
    p.add_argument("-t", "--transactions", type=int, help="passes per client instead of a duration")
    p.add_argument("-R", "--rate", type=float, help="target passes per second over all clients")
    p.add_argument("--transaction", action="store_true", help="run each pass in one transaction")
    add_connection_flags(p)
    p.set_defaults(handler=handle)


def _read(path: Path, flag: str) -> str:
    from benchwright.yamlload import read_text

    try:
        return read_text(path, "SQL file", 16 << 20)
    except SpecError as exc:
        raise SpecError(flag, f"{path}: {exc.detail}") from None


def handle(args: argparse.Namespace) -> int:
    engine, props = connection_properties(args.engine, args.url, args.overrides)
    props["sql.script"] = _read(args.file, "-f")
    props["sql.file"] = str(args.file)
    if args.init:
        props["sql.init"] = _read(args.init, "--init")
        props["sql.init_file"] = str(args.init)
    if args.transaction:
        props["sql.transaction"] = "true"
    if args.client < 1:
        raise SpecError("-c", "needs at least one client")
    config = PhaseConfig(
        workload="sql",
        phase="run",
        engine=engine,
        properties=props,
        threads=args.client,
        processes=args.jobs,
        target=args.rate,
        operation_count=args.transactions * args.client if args.transactions else None,
        max_seconds=None if args.transactions else args.time,
        seed=args.seed,
    )
    doc = run_and_write(config, args.json)
    x = doc.extra
    print(f"script: {args.file} ({x.get('statements_per_pass', 0)} statement(s) per pass)")
    print(f"number of clients: {args.client}")
    print(f"duration: {doc.runtime_ms / 1000:.1f} s")
    print(f"passes: {x.get('passes', 0)}, statements: {x.get('statements', 0)}")
    lat = x.get("latency_ms", {})
    print(
        f"latency average = {lat.get('avg_ms', 0):.3f} ms, p90 = {lat.get('p90_ms', 0):.3f} ms, "
        f"p99 = {lat.get('p99_ms', 0):.3f} ms"
    )
    print(f"tps = {x.get('tps', 0):.3f} (statements/s = {x.get('statements_per_second', 0):.3f})")
    return 0
