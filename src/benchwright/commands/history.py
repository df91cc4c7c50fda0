"""`benchwright history NAME`: past runs of a spec, newest first, one line each.

Per run: start time, status, headline throughput and worst p99 per matrix cell (first repeat of
the measured phase; "!" marks an invalid cell), and the verdict against the runs before it. Every
cell is shown: below the width the table needs, a terminal gets one record per run.
"""

from __future__ import annotations

import argparse
from typing import Any

from rich import box
from rich.console import Console
from rich.table import Table

from benchwright.commands import Subparsers
from benchwright.commands.bucket_views import add_bucket_view_arguments, bucket_store
from benchwright.commands.show import add_store_argument, open_existing_store
from benchwright.errors import SpecError
from benchwright.providers.local.sqlite_store import StoreError
from benchwright.report.cell_names import short_ids
from benchwright.report.fit import Fitted, print_whole
from benchwright.report.text import VERDICT_STYLE, status_style
from benchwright.report.units import fmt_latency, fmt_rate


def register(sub: Subparsers) -> None:
    p = sub.add_parser("history", help="past runs of a spec", description=__doc__.splitlines()[0])
    p.add_argument("name", metavar="NAME", help="the spec's name")
    p.add_argument("--limit", type=int, default=20, help="newest N runs (default 20)")
    add_store_argument(p)
    add_bucket_view_arguments(p)
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    if args.limit < 1:
        raise SpecError("--limit", "must be at least 1 (the newest N runs)")
    with open_existing_store(bucket_store(args, [args.name], args.limit)) as store:
        rows = store.history_rows(args.name, limit=args.limit)
        if not rows:
            known = ", ".join(store.spec_names()) or "none yet"
            raise StoreError(f"{store.path}: no runs of spec {args.name!r} (specs with runs: {known})")
    print_history(Console(), args.name, rows)
    return 0


def print_history(console: Console, name: str, rows: list[Any]) -> None:
    """Every cell a column, headed by its short id; a table too wide for a terminal turns to one
    record per run (report/fit.py), and a log gets it at its full width: no cell is left out."""
    cells: list[str] = []
    for row in rows:
        cells += [c for c in row.cells if c not in cells]
    table = Table(title=f"history of {name} (newest first)", title_justify="left", box=box.SIMPLE_HEAD,
                  pad_edge=False, padding=(0, 1, 0, 0))  # fmt: skip
    table.add_column("started (UTC)", no_wrap=True)
    table.add_column("run", no_wrap=True, min_width=22)
    table.add_column("status", no_wrap=True)
    names = short_ids(cells)  # the store's keys are the full ids; `show RUN` lists them
    for cell in cells:
        table.add_column(f"{names[cell]}\nops/s | p99", justify="right", no_wrap=True)  # whole, or records
    table.add_column("verdict")
    for row in rows:
        values = []
        for cell in cells:
            if cell not in row.cells:
                values.append("-")
                continue
            ops, p99, valid = row.cells[cell]
            values.append(cell_value(ops, p99, valid))
        verdict = row.verdict or "-"
        table.add_row(
            row.started_at.strftime("%Y-%m-%d %H:%M"),
            row.run_id,
            f"[{status_style(row.status)}]{row.status}[/]",
            *values,
            f"[{VERDICT_STYLE.get(verdict, '')}]{verdict.replace('_', ' ')}[/]" if row.verdict else "-",
        )
    print_whole(console, Fitted(table))


def cell_value(ops: float, p99: float, valid: bool) -> str:
    """One cell of one run: its headline ops/s and worst p99, "!" when the cell was invalid."""
    return f"{fmt_rate(ops)} | {fmt_latency(p99)}{'' if valid else ' !'}"
