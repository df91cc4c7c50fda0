"""`benchwright runner --plan PLAN.json --out RESULT.json`: the runner's main program
(``benchwright.runner.main``) as a subcommand, for people running a plan by hand. Launchers start
``runner.entry.RUNNER_ENTRYPOINT`` instead, which does not load the CLI."""

from __future__ import annotations

import argparse

from benchwright.commands import Subparsers
from benchwright.runner.main import add_arguments


def register(subparsers: Subparsers) -> None:
    p = subparsers.add_parser("runner", help="run one matrix cell's phases from a plan file (used by `run`)")
    add_arguments(p)
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    from benchwright.runner.main import run

    return run(args)
