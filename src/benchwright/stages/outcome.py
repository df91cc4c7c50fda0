"""After teardown: the run's final status goes into its record, so a failure is reported durably
(the execution's Fail state says *that* it failed; the record in S3 says why), and a failed run is
announced the same way a finished one is (the Notify state is skipped on the failure path)."""

from __future__ import annotations

import logging
from datetime import UTC, datetime

from benchwright.providers.base import Providers
from benchwright.runs import RunRecord
from benchwright.stages import RunState

log = logging.getLogger(__name__)


def _keep_partial(record: RunRecord, state: RunState, providers: Providers) -> None:
    """A runner that failed mid-run may have written the phases it finished (the runner rewrites its
    output after every phase): keep them in the record, flagged invalid, instead of losing them."""
    from benchwright.results import ValidityFlag
    from benchwright.stages.steps import load_cell, record_results

    try:
        cell = load_cell(record_results(state, providers), providers)
    except Exception as exc:  # the record still says why the run failed
        log.warning("partial results not readable: %s: %s", type(exc).__name__, exc)
        return
    if cell.phases:
        cell.validity.append(
            ValidityFlag(
                code="aborted", severity="invalid", message=f"a partial result: {state.error or 'failed'}"
            )
        )
        record.cells.append(cell)


def record_outcome(state: RunState, providers: Providers) -> RunState:
    failed = state.status == "failed"
    record = providers.store.get_run(state.run_id)
    if record is None:
        record = RunRecord(
            run_id=state.run_id, spec_name=state.spec_name, spec=state.spec, started_at=state.created_at
        )
    record.status = "failed" if failed else "succeeded"
    if failed:
        record.error = f"{state.error_type or 'Error'}: {state.error or ''}".strip()
        if not record.cells and state.runners:
            _keep_partial(record, state, providers)
    record.ended_at = datetime.now(UTC)
    providers.store.save_run(record)
    if not failed:
        return state.model_copy(update={"status": "succeeded"})
    try:
        providers.notifier.notify(record)
    except Exception as exc:  # a notification never changes the outcome
        providers.extras.setdefault("warnings", []).append(
            f"notification failed: {type(exc).__name__}: {exc}"
        )
    return state
