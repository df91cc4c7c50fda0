"""Tables never lose a value: below the width a table needs, a terminal gets one record per row
(psql's \\x); a log (not a terminal) gets the table at its full width; nothing is cropped."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from benchwright.judge import judge_run
from benchwright.report.fit import Fitted, print_whole
from benchwright.report.sample import make_run, noisy_series
from benchwright.report.table import seed_views
from benchwright.report.text import print_summary, seed_table
from benchwright.runs import RunRecord


@pytest.fixture(scope="module")
def wide_run() -> RunRecord:
    """Three matrix parameters and seven-digit rates: the YCSB table needs ~105 columns."""
    cells = [
        (f"datatype={dt},fieldlength={fl},threads={th}", {"datatype": dt, "fieldlength": fl, "threads": th},
         noisy_series(3_000_000, 30))
        for dt in ("string", "hash") for fl in (1000, 40000) for th in (16, 256)
    ]  # fmt: skip
    return judge_run(make_run("exp2-redis-ycsb-local", "20261128-101010-abcdef", cells))


def rendered(run: RunRecord, width: int, terminal: bool) -> str:
    out = io.StringIO()
    print_summary(run, Console(width=width, file=out, force_terminal=terminal, color_system=None))
    return out.getvalue()


def every_value(run: RunRecord) -> list[str]:
    return [str(v) for view in seed_views(run) for line in view.grid() for v in line if str(v)]


@pytest.mark.parametrize(("width", "terminal"), [(80, True), (80, False), (200, True), (200, False)])
def test_every_value_and_heading_appears_whole(wide_run: RunRecord, width: int, terminal: bool) -> None:
    text = rendered(wide_run, width, terminal)
    assert "…" not in text
    for heading in ("p95", "p99", "RunTime", "max"):
        assert heading in text
    words = set(text.replace("|", " ").replace("│", " ").split())
    for value in every_value(wide_run):
        assert all(part in words for part in value.split()), value  # whole, never cut mid-number


def test_a_terminal_too_narrow_gets_records_and_a_wide_one_the_table(wide_run: RunRecord) -> None:
    narrow, wide = rendered(wide_run, 80, True), rendered(wide_run, 200, True)
    assert "-[ RECORD 1 ]-" in narrow and "RunTime     | " in narrow
    assert "-[ RECORD" not in wide
    assert max(len(line) for line in narrow.splitlines()) <= 80


def test_a_log_gets_each_row_on_one_line_at_full_width(wide_run: RunRecord) -> None:
    text = rendered(wide_run, 80, False)
    assert "-[ RECORD" not in text
    header = next(line for line in text.splitlines() if "RunTime" in line and "p99" in line)
    assert header.index("p95") < header.index("p99") < header.index("RunTime")
    assert any(len(line) > 80 for line in text.splitlines())


def test_a_table_that_fits_is_printed_as_it_is(wide_run: RunRecord) -> None:
    view = seed_views(wide_run)[0]
    out = io.StringIO()
    print_whole(
        Console(width=300, file=out, force_terminal=True, color_system=None), Fitted(seed_table(view))
    )
    lines = out.getvalue().splitlines()
    assert sum("string" in line for line in lines) == sum(1 for row in view.grid() if "string" in row)


def _column_values(text: str, column: int) -> list[str]:
    """Each row's value in ``column`` of a boxed table, its folded lines joined (a row starts where
    the first column, the row number, is filled)."""
    values: list[str] = []
    for line in text.splitlines():
        fields = line.split("│")
        if len(fields) < column + 2 or set(line) <= set("─┼│├┤└┘┴ "):
            continue
        if fields[1].strip():
            values.append("")
        if values:
            values[-1] += fields[column + 1].strip()
    return values


@pytest.mark.parametrize("spec", ["exp2-redis-ycsb-datatypes.local.yaml", "exp4-redis-bench.local.yaml"])
def test_validate_at_80_columns_on_a_terminal_shows_every_cell_id_whole(spec: str) -> None:
    # given the example's matrix, wrapped to fit a terminal of 80 columns
    from benchwright.commands.validate import matrix_table
    from benchwright.report.fit import cell_texts
    from benchwright.spec import load_suite

    bench = load_suite(f"examples/{spec}").benchmarks[0]
    table, _ = matrix_table(bench)
    ids = [row[1] for row in cell_texts(table)[1]]
    out = io.StringIO()
    print_whole(Console(width=80, file=out, force_terminal=True, color_system=None), Fitted(table))
    text = out.getvalue()
    # then no id is cut to an ellipsis (which made ten ids read `redis.comma…`, ten identical rows)
    assert "…" not in text and max(len(line) for line in text.splitlines()) <= 80
    assert _column_values(text, 1) == ids and len(set(ids)) == len(ids) > 1
