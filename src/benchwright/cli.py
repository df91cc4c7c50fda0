"""`benchwright` command line: one entry point, one module per command family in commands/.

Errors we raise on purpose (BenchwrightError) print one line naming the field, host or file and
exit non-zero without a traceback; anything else is a bug and keeps its traceback.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from benchwright import __version__
from benchwright.errors import BenchwrightError

# Each module has register(subparsers); the subcommand's handler is stored as args.handler.
# command name -> the module that registers it. Only the module of the command being run is imported,
# so `benchwright runner` does not pay for the CDK, API or report imports at start-up.
COMMANDS: dict[str, str] = {
    "ycsb": "benchwright.commands.ycsb",
    "tpcc": "benchwright.commands.tpcc",
    "tpcb": "benchwright.commands.tpcb",
    "oltp": "benchwright.commands.oltp",
    "sql": "benchwright.commands.sql",
    "redis-bench": "benchwright.commands.redisbench",
    "tool": "benchwright.commands.tool",
    "runner": "benchwright.commands.runner",
    "validate": "benchwright.commands.validate",
    "run": "benchwright.commands.run",
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
}
COMMAND_MODULES = list(dict.fromkeys(COMMANDS.values()))


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The full parser, or (``only``) one with just the module that registers that command."""
    parser = argparse.ArgumentParser(
        prog="benchwright", description="Benchmark databases end to end, honestly."
    )
    parser.add_argument("--version", action="version", version=f"benchwright {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    modules = [COMMANDS[only]] if only in COMMANDS else COMMAND_MODULES
    for module in modules:
        importlib.import_module(module).register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    first = next((a for a in args_list if not a.startswith("-")), None)
    parser = build_parser(first)
    args = parser.parse_args(args_list)
    try:
        return int(args.handler(args) or 0)
    except BenchwrightError as exc:
        print(f"benchwright: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("benchwright: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
