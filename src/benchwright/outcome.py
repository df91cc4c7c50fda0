"""How a run ended, in one place: its status, why an invalid run is invalid, and the CLI's exit codes.

A run that finished its stages ``succeeded`` only when every cell passed the validity policy; one
invalid cell (a flag of severity ``invalid`` on the cell or on one of its phases: load, warm-up,
measured) makes the whole run ``invalid``, with the count and the reasons. ``failed`` and ``aborted``
come first: a run that broke is reported as broken, whatever its cells say.

Older records (written before ``invalid`` existed) read as they were stored; ``judge_status`` gives
what such a record would end as now.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from benchwright.judge.validity import own_flags
from benchwright.runs import CellResult, RunRecord

SUCCEEDED: Final = "succeeded"
INVALID: Final = "invalid"
FAILED: Final = "failed"
ABORTED: Final = "aborted"
FINISHED = (SUCCEEDED, INVALID, FAILED, ABORTED)
BROKEN = (FAILED, ABORTED)  # the run did not finish its work

# `benchwright run` / `compare` exit codes (README, `benchwright run --help`)
EXIT_OK = 0
EXIT_FAILED = 1  # a run failed (or a bad spec, a store problem: any error)
EXIT_FAIL_ON = 3  # a --fail-on condition held (a regression, an invalid candidate)
EXIT_INVALID = 4  # the run finished but some cell is invalid (validity.fail_on_invalid, --allow-invalid)
EXIT_NO_VERDICT = 5  # --fail-on regression, and no verdict is possible (too few earlier runs)
EXIT_FILES = 6  # the run is in the store, but files of its output directory were not written (disk full)
EXIT_INTERRUPTED = 130  # Ctrl-C


@dataclass(frozen=True)
class InvalidCell:
    """One invalid cell (one repeat of a matrix cell) and each invalid flag as "<where> <code>: <message>"."""

    label: str
    reasons: tuple[str, ...]


def cell_label(cell: CellResult) -> str:
    return cell.cell_id if cell.repeat == 0 else f"{cell.cell_id} r{cell.repeat}"


def cell_reasons(cell: CellResult) -> list[str]:
    """Every invalid flag of the cell's phases (load, warm-up, measured: a phase the judge found invalid
    makes the cell invalid) and of the cell itself, named by where it was raised."""
    reasons = []
    for name, doc in cell.phases.items():
        reasons += [f"{name} {f.code}: {f.message}" for f in doc.validity if f.severity == "invalid"]
    reasons += [f"{f.code}: {f.message}" for f in own_flags(cell) if f.severity == "invalid"]
    return list(dict.fromkeys(reasons))


def invalid_cells(record: RunRecord) -> list[InvalidCell]:
    out = []
    for cell in record.cells:
        reasons = cell_reasons(cell)
        if reasons:
            out.append(InvalidCell(cell_label(cell), tuple(reasons)))
    return out


def invalid_headline(record: RunRecord) -> str | None:
    """``"invalid: 2 of 6 cells"``, or None when every cell is valid."""
    invalid = invalid_cells(record)
    if not invalid:
        return None
    return f"invalid: {len(invalid)} of {len(record.cells)} cell{'s' if len(record.cells) != 1 else ''}"


def invalid_summary(record: RunRecord, limit: int = 5) -> str | None:
    """The headline and each invalid cell's reasons (the first ``limit`` cells): what the record's
    ``error`` says for an invalid run, so every output that shows the error shows why."""
    invalid = invalid_cells(record)
    headline = invalid_headline(record)
    if headline is None:
        return None
    parts = [f"{c.label}: {'; '.join(c.reasons)}" for c in invalid[:limit]]
    more = f" (and {len(invalid) - limit} more)" if len(invalid) > limit else ""
    return f"{headline} ({' | '.join(parts)}){more}"


def judge_status(status: str, record: RunRecord) -> str:
    """The status a finished run ends with: ``failed`` / ``aborted`` kept; otherwise ``invalid`` when
    any cell is, else ``succeeded``."""
    if status in BROKEN:
        return status
    return INVALID if invalid_cells(record) else SUCCEEDED


def is_success(status: str) -> bool:
    """Only ``succeeded`` is a success: ``invalid`` finished, but its numbers do not stand."""
    return status == SUCCEEDED


def shown_status(record: RunRecord) -> str:
    """The status every output shows: the stored one, except that a record stored ``succeeded`` by an
    older Benchwright (before ``invalid`` existed) with an invalid cell shows as ``invalid``."""
    return INVALID if record.status == SUCCEEDED and invalid_cells(record) else record.status


def shown_error(record: RunRecord) -> str | None:
    """The record's error, or (an older record shown as invalid) why it is invalid."""
    if record.error is None and shown_status(record) == INVALID:
        return invalid_summary(record)
    return record.error
