"""Judge a run by its numbers, not by its status: every test that runs an example uses this.

A run that "succeeded" can still have measured nothing honest: failed operations, a load that did not
put every record in place, a phase with no throughput. These checks say which cell and phase, and how.
"""

from __future__ import annotations

from typing import Any

from benchwright.results import ResultDocument
from benchwright.runs import RunRecord

MAX_P99_US = 60_000_000  # a p99 above a minute on a quick local run is a broken measurement


def expected_loaded(doc: ResultDocument) -> int | None:
    """How many records a load phase must have inserted (None: the workload does not say)."""
    if doc.phase != "load" or doc.workload != "ycsb":
        return None
    count = doc.properties.get("insertcount") or doc.properties.get("recordcount")
    return int(count) if count else None


def problems_of(record: RunRecord | dict[str, Any]) -> list[str]:
    """Every reason not to trust a run's numbers, one line each (empty: the numbers hold)."""
    run = record if isinstance(record, RunRecord) else RunRecord.model_validate(record)
    out: list[str] = []
    if not run.cells:
        out.append(f"{run.run_id}: no cell measured")
    for cell in run.cells:
        if cell.measured is None:
            out.append(f"{cell.cell_id}: no measured phase")
        for phase, doc in cell.phases.items():
            where = f"{cell.cell_id} [{phase}]"
            if doc.failed():
                kinds = doc.extra.get("error_kinds", {})
                out.append(f"{where}: {doc.failed():,} of {doc.attempted:,} operations failed {kinds}")
            if doc.operations_total <= 0 or doc.throughput <= 0:
                out.append(f"{where}: no successful operation")
            loaded = expected_loaded(doc)
            if loaded is not None and doc.operations_total != loaded:
                out.append(f"{where}: loaded {doc.operations_total:,} of {loaded:,} records")
            for name, summary in doc.succeeded().items():
                if summary.operations and not 0 < summary.p99_us <= MAX_P99_US:
                    out.append(f"{where}: {name} p99 {summary.p99_us} us out of range")
            invalid = [f"{f.code}: {f.message}" for f in doc.validity if f.severity == "invalid"]
            if invalid:
                out.append(f"{where}: invalid ({'; '.join(invalid)})")
        invalid = [f"{f.code}: {f.message}" for f in cell.validity if f.severity == "invalid"]
        if invalid:
            out.append(f"{cell.cell_id}: invalid ({'; '.join(invalid)})")
    return out


def assert_numbers_hold(record: RunRecord | dict[str, Any]) -> None:
    problems = problems_of(record)
    assert not problems, "\n".join(problems)
