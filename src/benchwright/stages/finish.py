"""The ``finish_run`` stage: the one place a run is finished, on every path, in both orchestrators.

It runs after ``teardown`` (the ASL's FinishRun; the local orchestrator once per run) and decides, in
this order, so that nothing later can lose what came before:

1. the final status (``failed`` / ``aborted`` stay; anything else that got here ``succeeded``, or
   ``invalid`` when any cell is: benchwright.outcome) and the error (for an invalid run: how many cells
   and why), written into the run record at once (durable first);
2. the verdict against history: earlier records of the same spec in the store (the SQLite store
   locally, the S3 run records on AWS; a time-series sink is never read), judged across nights by
   ``benchwright.judge.nightly`` exactly as ``benchwright compare`` and ``--fail-on`` do (a level
   change alarmed once, on its night; the series cut where the fingerprint changed);
3. the HTML report (``benchwright.report.html``, the only renderer), published through the artifact
   store next to the record;
4. on AWS, the site under ``site/`` of the results bucket (stages/finish_site.py: the touched
   benchmark's page and the index; a failure is a ``site_failed`` warning, never the run's status);
5. the notification, when the spec's ``notify.on`` asks for one (``should_notify``), with a link to the
   report that works for the reader (a presigned URL on AWS). A failed notification is noted on the
   record and in the state; it never fails the run;
6. on AWS, for a run of a suite, the suite's morning digest once its night is complete
   (stages/finish_digest.py: posted by the benchmark that finishes last; a failure is a warning).

A cell of an AWS suite (``suite_run_id`` set) is only one part of a run: its finish writes the cell
run's final status and stops; SummarizeSuite merges the cells and finishes the suite run with this same
stage, so a suite gets one verdict, one report and one message.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import TypeVar

from pydantic import ValidationError

from benchwright.outcome import BROKEN, FAILED, INVALID, SUCCEEDED, invalid_summary, judge_status
from benchwright.providers.base import Providers
from benchwright.runs import RunRecord, Verdict
from benchwright.spec import BenchmarkSpec, NotifySpec, ValidityPolicy, spec_dict
from benchwright.stages.finish_digest import post_digest
from benchwright.stages.finish_site import refresh_for
from benchwright.stages.state import FinishState, RunState

log = logging.getLogger(__name__)

HISTORY_LIMIT = 10  # earlier runs read for the verdict and the trend chart (each a whole record)
# A presigned link's lifetime: the API's own maximum (GET /runs/{id}/report gives a fresh one later).
# Signed with a Lambda's role credentials it also ends when that role session does.
REPORT_LINK_SECONDS = 12 * 3600
State = TypeVar("State", bound=FinishState)  # a cell's RunState, or a suite's / an abort's FinishState


def final_status(state: FinishState) -> str:
    """``failed`` and ``aborted`` are kept; a run that reached the finish any other way succeeded
    (unless every measured phase failed: see ``all_failed``; or a cell is invalid: ``judge_status``)."""
    return state.status if state.status in BROKEN else SUCCEEDED


def all_failed(record: RunRecord) -> str | None:
    """A run whose measured phases did nothing but fail is a failed run, whatever its throughput."""
    reasons = [
        f"{cell.cell_id}: {why}"
        for cell in record.cells
        for name, doc in cell.phases.items()
        if name == "run" and (why := doc.all_failed())
    ]
    runs = sum(1 for cell in record.cells if "run" in cell.phases)
    if runs and len(reasons) == runs:
        return "; ".join(reasons[:3])
    return None


def error_text(state: FinishState) -> str | None:
    """``"<ErrorType>: <message>"`` for the record, without repeating a type already in the message."""
    if state.error is None and state.error_type is None:
        return None
    message = state.error or ""
    if state.error_type and not message.startswith(state.error_type):
        message = f"{state.error_type}: {message}".rstrip(": ")
    return message or None


def keep_partial(record: RunRecord, state: RunState, providers: Providers) -> None:
    """A runner that failed mid-run may have written the phases it finished (the runner rewrites its
    output after every phase): keep them in the record, flagged invalid, instead of losing them."""
    from benchwright.results import ValidityFlag
    from benchwright.stages.steps import load_cell, record_results

    try:
        cell = load_cell(record_results(state, providers), providers)
    except Exception as exc:  # the record still says why the run failed
        log.warning("run %s: partial results not readable: %s: %s", state.run_id, type(exc).__name__, exc)
        return
    if cell.phases:
        from benchwright.experiments.availability import attach

        attach(cell, state.event_log)  # the events issued, and those the failure left "not issued"
        message = f"a partial result: {state.error or 'failed'}"
        cell.validity.append(ValidityFlag(code="aborted", severity="invalid", message=message))
        record.cells.append(cell)


def should_notify(on: str, record: RunRecord) -> bool:
    """The spec's ``notify.on`` for a finished record.

    always: every run. success: a run that succeeded. failure: a run that failed or was aborted.
    regression: a run that got slower than its history, or failed or was aborted (a run that could not
    be compared because it broke is the worst regression). An invalid run counts as a failure here: its
    numbers do not stand, and whoever asked to hear about failures wants to hear about it."""
    failed = record.status in (*BROKEN, INVALID)
    slower = record.verdict is not None and record.verdict.kind == "slower"
    rules = {"always": True, "success": not failed, "failure": failed, "regression": failed or slower}
    return rules.get(on, True)


def spec_of(state: FinishState, record: RunRecord) -> BenchmarkSpec | None:
    """The run's spec: the state's, else (an aborted execution whose input held none) the stored
    record's when it still validates; None means the spec's defaults (notify always, min_effect)."""
    if state.spec is not None:
        return state.spec
    if not record.spec:
        return None
    try:
        return BenchmarkSpec.model_validate(record.spec)
    except ValidationError:
        log.warning("run %s: the stored spec no longer validates; its defaults apply", record.run_id)
        return None


def load_record(state: FinishState, providers: Providers) -> RunRecord:
    record = providers.store.get_run(state.run_id)
    if record is None:  # failed before anything was stored: the record says why
        spec = state.spec
        record = RunRecord(
            run_id=state.run_id,
            spec_name=state.spec_name,
            spec=spec_dict(spec) if spec is not None else {},
            started_at=state.created_at,
            tags=dict(spec.tags) if spec is not None else {},
        )
    return record


def verdict_against(record: RunRecord, history: Sequence[RunRecord], spec: BenchmarkSpec | None) -> Verdict:
    """The verdict across nights (judge.nightly: the one `compare` and `--fail-on` give)."""
    from benchwright.judge.nightly import nightly_verdict

    validity = spec.validity if spec is not None else ValidityPolicy()
    return nightly_verdict(record, history, min_effect=validity.min_effect)


def publish_report(record: RunRecord, history: Sequence[RunRecord], providers: Providers) -> str:
    """Render (the one renderer) and store the report; returns its pointer."""
    from benchwright.report.html import render_html

    html = render_html(record, [h for h in history if h.run_id != record.run_id])
    return providers.artifacts.put_report(record.run_id, html)


def finish_run(state: State, providers: Providers) -> State:
    """Final status, verdict against history, report, notification (see the module docstring)."""
    status = final_status(state)
    record = load_record(state, providers)
    record.status = status  # type: ignore[assignment]
    record.error = error_text(state) or (record.error if status != SUCCEEDED else None)
    record.ended_at = datetime.now(UTC)
    if status != SUCCEEDED and not record.cells and isinstance(state, RunState) and state.runners:
        keep_partial(record, state, providers)
    failed = all_failed(record) if status == SUCCEEDED else None
    if failed:
        status, record.status, record.error = FAILED, FAILED, failed
    elif judge_status(status, record) == INVALID:
        status, record.status, record.error = INVALID, INVALID, invalid_summary(record)
    _ops_per_dollar(record)
    if state.suite_run_id:
        record.suite_run_id = state.suite_run_id
        providers.store.save_run(record)
        return state.advance("finish_run", status=status)
    providers.store.save_run(record)  # the outcome is durable before anything that can fail
    problems: list[str] = []
    history = _history(record, providers, problems)
    spec = spec_of(state, record)
    if record.cells:
        try:
            record.verdict = verdict_against(record, history, spec)
        except Exception as exc:  # a judge bug must not hide the run; it is reported, not dropped
            log.debug("run %s: no verdict", record.run_id, exc_info=True)  # the warning goes into the state
            problems.append(f"verdict failed: {type(exc).__name__}: {exc}")
    try:
        record.report = publish_report(record, history, providers)
    except Exception as exc:
        log.debug("run %s: no report", record.run_id, exc_info=True)  # the warning goes into the state
        problems.append(f"report not written ({type(exc).__name__}: {exc})")
    refreshed = refresh_for(record, providers, problems)  # AWS only; a failure is a warning, never the run's
    site_url = refreshed.index_url if refreshed is not None else None
    providers.store.save_run(record)
    notification = _notify(record, spec.notify if spec is not None else NotifySpec(), providers, site_url)
    record.environment["notification"] = notification
    if refreshed is not None and record.tags.get("suite"):  # the suite's morning digest, once per night
        record.environment["digest"] = post_digest(record, refreshed, providers, problems)
    providers.store.save_run(record)
    return state.advance(
        "finish_run",
        status=status,
        notification=notification,
        warnings=[*state.warnings, *problems, *_failed(notification)],
    )


def _ops_per_dollar(record: RunRecord) -> None:
    """The run's ops per dollar: every cell's measured operations over the run's total cost."""
    cost = record.cost
    if cost is None or cost.total <= 0 or cost.ops_per_dollar is not None:
        return
    operations = sum(c.measured.operations_total for c in record.cells if c.measured is not None)
    if operations:
        cost.ops_per_dollar = operations / cost.total


def _failed(notification: str) -> list[str]:
    return [f"notification {notification}"] if notification.startswith("failed") else []


def _history(record: RunRecord, providers: Providers, problems: list[str]) -> list[RunRecord]:
    try:
        return [
            r
            for r in providers.store.history(record.spec_name, limit=HISTORY_LIMIT + 1)
            if r.run_id != record.run_id
        ][:HISTORY_LIMIT]
    except Exception as exc:
        log.debug(
            "run %s: history unavailable", record.run_id, exc_info=True
        )  # the warning goes into the state
        problems.append(f"history unavailable: {type(exc).__name__}: {exc}")
        return []


def _notify(record: RunRecord, notify: NotifySpec, providers: Providers, site_url: str | None = None) -> str:
    """Send when ``notify.on`` says so; returns what happened ("sent", "skipped: ...", "failed: ...").
    ``site_url`` (the bucket site's presigned index) goes to the notifier only, never to the record."""
    on = notify.on
    if not should_notify(on, record):
        return f"skipped (notify.on: {on})"
    try:
        link = providers.artifacts.share(record.report, REPORT_LINK_SECONDS) if record.report else None
        if site_url is None:
            sent = providers.notifier.notify(record, link)
        else:
            sent = providers.notifier.notify(record, link, site_url=site_url)
    except Exception as exc:  # Slack down never loses a result
        log.warning("run %s: notification failed: %s", record.run_id, type(exc).__name__)
        return f"failed: {type(exc).__name__}: {exc}"
    return "sent" if sent else "not configured"
