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
COMMAND_MODULES = [
    "benchwright.commands.redisbench",
    "benchwright.commands.tool",
    "benchwright.commands.ycsb",
    "benchwright.commands.tpcc",
    "benchwright.commands.tpcb",
    "benchwright.commands.oltp",
    "benchwright.commands.sql",
    "benchwright.commands.runner",
    "benchwright.commands.validate",
    "benchwright.commands.run",
    "benchwright.commands.history",
    "benchwright.commands.show",
    "benchwright.commands.compare",
    "benchwright.commands.report",
    "benchwright.commands.cloud",
]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="benchwright", description="Benchmark databases end to end, honestly."
    )
    parser.add_argument("--version", action="version", version=f"benchwright {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for module in COMMAND_MODULES:
        importlib.import_module(module).register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
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
