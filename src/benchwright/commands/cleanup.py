"""`benchwright cleanup`: stop what a killed `benchwright run` left behind, from this tool's pid files,
and the local servers whose creator (a test, a script) exited without stopping them (``stray``).

Every other command does the same on start; this one says so even when there is nothing to do.
"""

from __future__ import annotations

import argparse

from benchwright.commands import Subparsers


def register(subparsers: Subparsers) -> None:
    p = subparsers.add_parser(
        "cleanup", help="stop servers and runners a killed `benchwright run` left, and mark its run aborted"
    )
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    from benchwright.providers.local import stray
    from benchwright.providers.local.pidfiles import live_dir, reap_orphans

    cleaned = reap_orphans(print) + len(stray.sweep(print))
    if not cleaned:
        print(f"cleanup: nothing left behind ({live_dir()})")
    return 0
