"""`history` shows every cell of every run: no column cap; at 80 columns on a terminal one record per
run, in a log the table at its full width, and every run's every value whole either way."""

from __future__ import annotations

import io
from datetime import timedelta

import pytest
from rich.console import Console

from benchwright.commands.history import cell_value, print_history
from benchwright.judge import judge_run
from benchwright.providers.local.sqlite_store import SQLiteResultStore
from benchwright.report.cell_names import short_ids
from benchwright.report.sample import EPOCH, make_run, noisy_series

CELLS = [f"threads={t},recordcount={r}" for t in (1, 4, 16, 64, 256) for r in (1000, 100000)]  # 10


@pytest.fixture(scope="module")
def history_rows(tmp_path_factory: pytest.TempPathFactory) -> list[object]:
    path = tmp_path_factory.mktemp("store") / "results.sqlite"
    with SQLiteResultStore(path) as store:
        for n in range(3):
            cells = [
                (cell, {}, noisy_series(1000.0 * (i + 1), 10, seed=n * 100 + i))
                for i, cell in enumerate(CELLS)
            ]
            store.save_run(
                judge_run(make_run("wide", f"night-{n}", cells, started_at=EPOCH + timedelta(days=n)))
            )
        rows = store.history_rows("wide", limit=10)
    assert len(rows) == 3 and all(len(r.cells) == len(CELLS) for r in rows)
    return rows  # type: ignore[return-value]


def rendered(rows: list[object], width: int, terminal: bool) -> str:
    out = io.StringIO()
    print_history(Console(width=width, file=out, force_terminal=terminal, color_system=None), "wide", rows)
    return out.getvalue()


@pytest.mark.parametrize(("width", "terminal"), [(80, True), (80, False), (200, True), (200, False)])
def test_every_cell_of_every_run_appears_whole(
    history_rows: list[object], width: int, terminal: bool
) -> None:
    text = rendered(history_rows, width, terminal)
    assert "…" not in text
    for short in short_ids(CELLS).values():
        assert short in text, short
    for row in history_rows:
        assert row.run_id in text  # type: ignore[attr-defined]
        for ops, p99, valid in row.cells.values():  # type: ignore[attr-defined]
            assert cell_value(ops, p99, valid) in text, cell_value(ops, p99, valid)


def test_a_narrow_terminal_gets_one_record_per_run(history_rows: list[object]) -> None:
    narrow = rendered(history_rows, 80, True)
    assert narrow.count("-[ RECORD ") == len(history_rows)
    assert max(len(line) for line in narrow.splitlines()) <= 80
    log = rendered(history_rows, 80, False)
    assert "-[ RECORD " not in log
    assert max(len(line) for line in log.splitlines()) > 80  # the table at the width it needs
