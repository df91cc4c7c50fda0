"""``run --resume RUN``: run again only the cells of a stored run that have no successful result.

The spec is the one the run stored (already ``--quick``-sized if it was), so the cells and their ids
are the same. A cell counts as done when it has a measured phase that was neither cut short (an
``aborted`` flag: a partial result) nor made only of failed operations; every other (cell, repeat)
of the matrix, including the ones that never started, is run again into the same run id and store,
next to the cells already written. An invalid but complete measurement (too short, saturated) is a
result: resuming does not re-roll it.
"""

from __future__ import annotations

from pathlib import Path

from benchwright.errors import SpecError
from benchwright.runs import CellResult, RunRecord
from benchwright.spec import BenchmarkSpec, expand_matrix


def succeeded(cell: CellResult) -> bool:
    measured = cell.measured
    if measured is None or measured.aborted or measured.all_failed():
        return False
    return not any(flag.code == "aborted" for flag in cell.validity)


def stored_spec(record: RunRecord) -> BenchmarkSpec:
    try:
        return BenchmarkSpec.model_validate(record.spec)
    except ValueError as exc:
        raise SpecError(
            "--resume", f"run {record.run_id}: its stored spec no longer validates ({exc})"
        ) from None


def cells_to_resume(spec: BenchmarkSpec, record: RunRecord) -> set[tuple[str, int]]:
    """(cell id, repeat) pairs of the matrix without a successful result in ``record``."""
    done = {(c.cell_id, c.repeat) for c in record.cells if succeeded(c)}
    wanted = {(c.cell_id, r) for c in expand_matrix(spec) for r in range(spec.repeats)}
    return wanted - done


def resume_dir(record: RunRecord, default_root: Path) -> Path:
    """Where the run wrote its files (its report's directory), else the default per-run directory."""
    if record.report and "://" not in record.report:
        return Path(record.report).parent
    return default_root / record.run_id
