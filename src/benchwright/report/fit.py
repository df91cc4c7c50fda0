"""Tables that never lose a column: ``Fitted(table)`` renders a rich table whole, whatever the width.

Rich squeezes a table wider than the console by cropping cells (``12.3…``) and shrinking columns
to nothing: at 80 columns p95, p99 and RunTime vanished and ``max`` was cut mid-number. Instead:
- the table fits: printed as it is;
- it does not, on a terminal: one record per row, one ``heading | value`` line per field, as
  psql's ``\\x`` prints them (nothing cropped, every value whole);
- output that is not a terminal (a CI log, a pipe, a file): the table at the width it needs, since
  nothing there wraps lines for the reader (printed with ``print_whole``: rich crops lines to the
  console's width otherwise).
A table whose text columns can wrap to fit (long cell ids) is printed wrapped on a terminal; a word
too long for its column (a cell id has no blanks) is folded onto the next line, never cut with an
ellipsis: ten cell ids cut to ``redis.comma…`` read as ten identical rows.
"""

from __future__ import annotations

import re

from rich.console import Console, ConsoleOptions, RenderResult
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text


class Fitted:
    """A rich renderable wrapping one table (see the module's docstring)."""

    def __init__(self, table: Table) -> None:
        self.table = table

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        least, whole = needed_width(console, options, self.table)
        if whole <= options.max_width:
            yield self.table
        elif not console.is_terminal:  # print it with crop=False (print_whole)
            yield from console.render(self.table, options.update(width=whole, max_width=whole))
        elif least <= options.max_width:  # wrapping its text columns keeps every value whole
            yield folded(self.table)
        else:
            yield from vertical(self.table)

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return Measurement.get(console, options, self.table).clamp(max_width=options.max_width)


UNBOUNDED = 10_000  # columns: wider than any table we print


WRAPPED_TEXT = 12  # columns a wrapped text cell (a long cell id) may be narrowed to
NUMBER = re.compile(r"^[-+~<>=]?[\d.,]+\s?[a-zA-Zµ%/$]*$|^-$")


def needed_width(console: Console, options: ConsoleOptions, table: Table) -> tuple[int, int]:
    """(the least width at which no value of ``table`` is cut: numbers and unwrappable columns
    whole, headings unbroken, other text wrapped to WRAPPED_TEXT; the width at which every row is
    one line). Rich clamps a measure to the width: measured unbounded."""
    wide = options.update(width=UNBOUNDED, max_width=UNBOUNDED)
    whole = Measurement.get(console, wide, table).maximum
    headings, rows = cell_texts(table)
    full = least = 0
    for i, (heading, column) in enumerate(zip(headings, table.columns, strict=True)):
        values = [row[i] for row in rows]
        longest = max((len(line) for v in values for line in v.splitlines()), default=0)
        word = max((len(w) for w in heading.split()), default=0)
        full += max(longest, _widest_line(column.header))  # a heading of two lines is as wide as its wider
        numeric = all(NUMBER.match(v.strip()) for v in values if v.strip())
        least += max(word, longest if column.no_wrap or numeric else min(longest, WRAPPED_TEXT))
    return whole - full + least, whole


def _widest_line(header: object) -> int:
    text = Text.from_markup(header).plain if isinstance(header, str) else str(header)
    return max((len(line) for line in text.splitlines()), default=0)


def folded(table: Table) -> Table:
    """``table`` with every column folding what does not fit instead of cropping it (rich's default
    overflow is an ellipsis). Set on the table itself: a ``Fitted`` table is built to be printed."""
    for column in table.columns:
        column.overflow = "fold"
    return table


def print_whole(console: Console, renderable: object) -> None:
    """Print without cropping lines to the console's width: where output is not a terminal,
    ``Fitted`` tables come at the width they need (a CI log keeps every column)."""
    console.print(renderable, crop=console.is_terminal)


def cell_texts(table: Table) -> tuple[list[str], list[list[str]]]:
    """The table's headings and its rows as plain text (what the vertical layout prints)."""
    headings = [
        Text.from_markup(c.header).plain if isinstance(c.header, str) else str(c.header)
        for c in table.columns
    ]
    columns = [[_plain(cell) for cell in column.cells] for column in table.columns]
    rows = [list(row) for row in zip(*columns, strict=True)] if columns else []
    return [h.replace("\n", " ") for h in headings], rows


def _plain(cell: object) -> str:
    if isinstance(cell, Text):
        return cell.plain
    if isinstance(cell, str):
        return Text.from_markup(cell).plain
    return str(cell)


def vertical(table: Table) -> list[Text]:
    """psql's ``\\x`` layout: ``-[ RECORD n ]-`` then ``heading | value`` for each non-empty field
    (a row continuing the previous one, with its first cells empty, keeps those cells' values)."""
    headings, rows = cell_texts(table)
    width = max((len(h) for h in headings), default=0)
    title = table.title if isinstance(table.title, str) else None
    out = [Text(Text.from_markup(title).plain, style="italic")] if title else []
    carried = [""] * len(headings)
    for n, row in enumerate(rows, 1):
        out.append(Text(f"-[ RECORD {n} ]-", style="bold"))
        for i, (heading, value) in enumerate(zip(headings, row, strict=True)):
            carried[i] = value if value or i >= len(headings) - 1 else carried[i]
            shown = value or (carried[i] if i < _first_filled(row) else "")
            if shown:
                out.append(Text(f"{heading:<{width}} | {shown}"))
    return out


def _first_filled(row: list[str]) -> int:
    return next((i for i, v in enumerate(row) if v), len(row))
