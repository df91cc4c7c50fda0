"""Parsing a native tool's command line literally (`benchwright pgbench|sysbench ...`).

The top-level parser hands such a command its arguments untouched (``register_literal``); the
command parses them with a ``ToolParser``, which, like the native tools, exits 1 on a flag it does
not know and names it. Help is ``--help`` only: ``-h`` is pgbench's host and redis-benchmark's, and
a script that passes it must never get help text and exit 0 instead of a run.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

from benchwright.commands import Subparsers
from benchwright.errors import UsageError


class ToolParser(argparse.ArgumentParser):
    """An argparse parser whose errors are UsageError (exit 1, one line naming the flag)."""

    def __init__(self, prog: str, description: str, help_flags: Sequence[str] = ("--help",)) -> None:
        super().__init__(prog=prog, description=description, add_help=False, allow_abbrev=False)
        if help_flags:
            self.add_argument(*help_flags, action="help", help="show this help and exit")

    def parse_args(self, args: Sequence[str] | None = None, namespace: Any = None) -> Any:  # type: ignore[override]
        """Unknown flags are named first: argparse would complain of a missing positional
        argument before it got to them."""
        unknown = unknown_flags(self, list(args or []))
        if unknown:
            self.error(f"unrecognized arguments: {' '.join(unknown)}")
        return super().parse_args(args, namespace)

    def parse_intermixed_args(self, args: Sequence[str] | None = None, namespace: Any = None) -> Any:  # type: ignore[override]
        """Positional words anywhere among the options (sysbench: TESTNAME, options, COMMAND)."""
        unknown = unknown_flags(self, list(args or []))
        if unknown:
            self.error(f"unrecognized arguments: {' '.join(unknown)}")
        return super().parse_intermixed_args(args, namespace)

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{self.prog}: {message} (see {self.prog} --help)")


def unknown_flags(parser: argparse.ArgumentParser, argv: list[str]) -> list[str]:
    """The tokens of ``argv`` that look like options and that ``parser`` does not know (``-c4`` and
    ``--time=5`` count as the options they start with; negative numbers are values)."""
    known = parser._option_string_actions
    found = []
    for token in argv:
        if token == "--":
            break
        if len(token) < 2 or token[0] != "-" or token[1].isdigit() or token[1] == ".":
            continue
        if token.split("=", 1)[0] in known or (token[1] != "-" and token[:2] in known):
            continue
        found.append(token)
    return found


class NotImplementedFlag(argparse.Action):
    """A flag of the native tool that Benchwright's mirror does not implement: refused by name."""

    def __init__(self, option_strings: Sequence[str], dest: str, why: str = "", **kwargs: Any) -> None:
        self.why = why
        super().__init__(option_strings, dest, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, *args: Any, **kwargs: Any) -> None:
        hint = f": {self.why}" if self.why else ""
        raise argparse.ArgumentError(self, f"is not implemented by Benchwright's mirror{hint}")


def refuse(parser: argparse.ArgumentParser, *flags: str, takes_value: bool = True, why: str = "") -> None:
    """Declare a native flag we refuse, so the error says "not implemented", not "unrecognized"."""
    parser.add_argument(
        *flags,
        action=NotImplementedFlag,
        nargs=None if takes_value else 0,
        why=why,
        help=argparse.SUPPRESS,
    )


def register_literal(
    sub: Subparsers,
    name: str,
    help_text: str,
    handler: Callable[[argparse.Namespace], int],
    aliases: Sequence[str] = (),
) -> None:
    """A subcommand whose arguments reach ``handler`` as ``args.argv``, unparsed by argparse."""
    p = sub.add_parser(name, help=help_text, add_help=False, prefix_chars="\x00", aliases=list(aliases))
    p.add_argument("argv", nargs=argparse.REMAINDER)
    p.set_defaults(handler=handler)


def check_numbers(args: argparse.Namespace) -> None:
    """The top-level check (no negative or non-finite counts), on the namespace we parsed here."""
    from benchwright.cli import check_numbers as check

    check(args)
