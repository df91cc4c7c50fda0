"""`benchwright` command line: one entry point, one module per command family in commands/.

Errors we raise on purpose (BenchwrightError) print one line naming the field, host or file and
exit non-zero without a traceback; anything else is a bug and keeps its traceback.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import math
import signal
import sys
from collections.abc import Sequence
from types import FrameType

from benchwright import __version__
from benchwright.errors import BenchwrightError, SpecError

# Each module has register(subparsers); the subcommand's handler is stored as args.handler.
# command name -> the module that registers it. Only the module of the command being run is imported,
# so `benchwright runner` does not pay for the CDK, API or report imports at start-up.
COMMANDS: dict[str, str] = {
    "ycsb": "benchwright.commands.ycsb",
    "tpcc": "benchwright.commands.tpcc",
    "tpcb": "benchwright.commands.tpcb",
    "pgbench": "benchwright.commands.pgbench",
    "oltp": "benchwright.commands.oltp",
    "sysbench": "benchwright.commands.sysbench",
    "sql": "benchwright.commands.sql",
    "redis-bench": "benchwright.commands.redisbench",
    "redis-benchmark": "benchwright.commands.redisbench",
    "tool": "benchwright.commands.tool",
    "runner": "benchwright.commands.runner",
    "validate": "benchwright.commands.validate",
    "run": "benchwright.commands.run",
    "rehearse": "benchwright.commands.rehearse",
    "history": "benchwright.commands.history",
    "show": "benchwright.commands.show",
    "compare": "benchwright.commands.compare",
    "table": "benchwright.commands.table",
    "report": "benchwright.commands.report",
    "deploy": "benchwright.commands.cloud",
    "destroy": "benchwright.commands.cloud",
    "submit": "benchwright.commands.cloud",
    "status": "benchwright.commands.cloud",
    "results": "benchwright.commands.cloud",
    "pull": "benchwright.commands.pull",
    "cleanup": "benchwright.commands.cleanup",
    "site": "benchwright.commands.site",
}
COMMAND_MODULES = list(dict.fromkeys(COMMANDS.values()))
# What `benchwright --help` lists, without importing a command module (each pulls pydantic, the
# spec models or boto3): a test holds these lines equal to the help each module registers.
SUMMARIES: dict[str, str] = {
    "ycsb": "YCSB core workloads (load or run) against postgres, redis, mysql",
    "tpcc": "TPC-C: load warehouses, run the five transactions (postgres, mysql)",
    "tpcb": "pgbench-compatible TPC-B: init tables, run tpcb-like / simple-update / select-only",
    "pgbench": "pgbench's command line, run by Benchwright (postgres)",
    "oltp": "sysbench-style OLTP: prepare / run / cleanup sbtest tables (postgres, mysql)",
    "sysbench": "sysbench's command line, run by Benchwright (mysql, pgsql)",
    "sql": "run a SQL statement file from N clients for T seconds (postgres, mysql)",
    "redis-bench": "redis-benchmark's tests natively (-h host -p port -t set,get -n -c -d -r -P -q --csv)",
    "tool": "run a native tool (pgbench, sysbench, redis-benchmark, memtier) into a result",
    "runner": "run one matrix cell's phases from a plan file (used by `run`)",
    "validate": "validate a spec and print its matrix with an estimated duration",
    "run": "run a spec locally: throwaway servers, runner, report, teardown",
    "rehearse": "run a cloud spec through the whole AWS path locally (moto, runner container)",
    "history": "past runs of a spec",
    "show": "one stored run's summary",
    "compare": "statistical verdict of run B against run A",
    "table": "a stored result as its seed experiment's table",
    "report": "write a run's HTML report",
    "site": "a static site across nights",
    "deploy": "deploy the service into your AWS account (cdk deploy)",
    "destroy": "remove the deployed service (results bucket is kept)",
    "submit": "submit a spec or suite file to the deployed API",
    "status": "status, summary, validity and cost of a cloud run",
    "results": "a cloud run's results and a link to its report",
    "pull": "copy cloud runs' records into the local store",
    "cleanup": "stop servers and runners a killed `benchwright run` left, and mark its run aborted",
}
ALIASES: dict[str, str] = {"redis-benchmark": "redis-bench"}  # alias -> the name it stands for


def build_parser(only: str | None = None, *, full: bool = False) -> argparse.ArgumentParser:
    """The parser of one command (``only``: only its module is imported), of every command
    (``full``: for tests and docs), or else the command list alone (--help, --version, a typo)."""
    parser = argparse.ArgumentParser(
        prog="benchwright", description="Benchmark databases end to end, honestly."
    )
    parser.add_argument("--version", action="version", version=f"benchwright {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    if full or only in COMMANDS:
        for module in COMMAND_MODULES if full else [COMMANDS[str(only)]]:
            importlib.import_module(module).register(sub)
        return parser
    for name, summary in SUMMARIES.items():
        aliases = [alias for alias, of in ALIASES.items() if of == name]
        sub.add_parser(name, help=summary, aliases=aliases, add_help=False)
    return parser


def _interrupt(signum: int, frame: FrameType | None) -> None:
    """SIGTERM and SIGHUP end a command the way Ctrl-C does: teardown, partial result stored."""
    raise KeyboardInterrupt


def _stop_signals_as_ctrl_c() -> None:
    with contextlib.suppress(ValueError):  # not the main thread (tests calling main())
        for sig in (signal.SIGTERM, signal.SIGHUP):
            if signal.getsignal(sig) in (signal.SIG_DFL, None):
                signal.signal(sig, _interrupt)


def _reap_orphans(command: str | None) -> None:
    """What a SIGKILLed `benchwright run` left (servers, runners) is stopped by the next command,
    then the local servers a killed test or script of this checkout left (``stray``)."""
    if command in ("runner", "cleanup", None):
        return
    from benchwright.providers.local import stray
    from benchwright.providers.local.pidfiles import live_dir, reap_orphans

    def say(line: str) -> None:
        print(f"benchwright: {line}", file=sys.stderr)

    with contextlib.suppress(OSError):
        if any(live_dir().iterdir()):
            reap_orphans(say)
    stray.sweep(say)


SIGNED = frozenset({"seed"})  # the only numeric options that may be negative


def check_numbers(args: argparse.Namespace) -> None:
    """No command takes a negative or non-finite count, size, duration or rate (`tpcb -R -10` used
    to run and report nonsense latency); refused before anything connects."""
    for dest, value in vars(args).items():
        if isinstance(value, bool) or not isinstance(value, (int, float)) or dest in SIGNED:
            continue
        if not math.isfinite(value) or value < 0:
            raise SpecError(f"--{dest.replace('_', '-')}", f"must be a finite number >= 0, got {value}")


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    first = next((a for a in args_list if not a.startswith("-")), None)
    parser = build_parser(first)
    args = parser.parse_args(args_list)
    _stop_signals_as_ctrl_c()
    try:
        check_numbers(args)
        _reap_orphans(args.command)
        return int(args.handler(args) or 0)
    except BenchwrightError as exc:
        from benchwright.results import redact_text

        print(f"benchwright: error: {redact_text(str(exc))}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("benchwright: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
