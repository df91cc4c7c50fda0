"""AbortTeardown: an execution that ends ABORTED or TIMED_OUT never reaches its Catch -> Teardown
(Step Functions stops evaluating states), so an EventBridge rule on the two state machines' status
changes invokes this instead (infra/workflow.py).

From the event it takes the run id (the execution input's ``run_id``; a nightly suite started by the
scheduler has none, and then its run id is the execution name, as ExpandMatrix decides). It tears
down each cell from the last run state the execution's history holds (those carry the target and
runner handles), sweeps whatever else carries the run's tag (a create that was in flight when the
execution stopped), and records the run as ``aborted`` with the reason, so GET /runs/{id} and Slack
say what happened. Every step is idempotent: the API's cancel and this rule may both run.
"""

from __future__ import annotations

import json
from typing import Any

from aws_lambda_powertools.metrics import MetricUnit
from pydantic import ValidationError

from benchwright.api.backend import latest_run_states
from benchwright.errors import SpecError
from benchwright.providers.aws.janitor import sweep_run
from benchwright.runs import RunRecord
from benchwright.spec import BenchmarkSpec
from benchwright.stages import FinishState, stage_function
from benchwright.stages.finish import finish_run
from functions._common import clients, logger, metrics, parse_state, providers_for, tracer

ENDED = {"ABORTED", "TIMED_OUT"}


def execution_input(detail: dict[str, Any]) -> dict[str, Any]:
    """The execution's input from the event (a JSON string; absent when over EventBridge's limit)."""
    raw = detail.get("input")
    try:
        data = json.loads(raw) if isinstance(raw, str) and raw else {}
    except ValueError:
        data = {}
    return data if isinstance(data, dict) else {}


def run_id_of(detail: dict[str, Any]) -> str:
    """The execution input's run id, else the execution name (how ExpandMatrix names a nightly run)."""
    value = execution_input(detail).get("run_id") or detail.get("name")
    if not isinstance(value, str) or not value.strip():
        raise SpecError("detail.name", "the status-change event names no execution")
    return value.strip()


def history_states(execution_arn: str) -> list[dict[str, Any]]:
    """Each cell's newest run state in the execution history (ids and handles, never secrets)."""
    pages = (
        clients()("stepfunctions")
        .get_paginator("get_execution_history")
        .paginate(executionArn=execution_arn, reverseOrder=True, includeExecutionData=True)
    )
    return latest_run_states([event for page in pages for event in page.get("events", [])])


def tear_down_cell(raw: dict[str, Any], reason: str) -> str | None:
    """Run the teardown stage on one cell's last state and close a suite cell's own record; the
    problem as text (the tag sweep that follows deletes what this could not)."""
    state = parse_state(raw)
    problem = None
    if not state.torn_down:
        try:
            stage_function("teardown")(state, providers_for(state, "teardown"))
        except Exception as exc:
            problem = f"{state.run_id}: {type(exc).__name__}: {exc}"
    if state.suite_run_id:  # a suite's cell: its own record says aborted; the suite run is finished below
        mark_aborted(state.run_id, state.spec, state.spec_name, reason, suite_run_id=state.suite_run_id)
    return problem


def input_spec(inputs: dict[str, Any]) -> BenchmarkSpec | None:
    """The execution input's spec, validated; None when there is none or it does not validate (an
    execution stopped before ExpandMatrix refused it): the run is recorded as aborted all the same."""
    given = inputs.get("spec")
    if not isinstance(given, dict):
        return None
    try:
        return BenchmarkSpec.model_validate(given)
    except ValidationError as exc:
        logger.warning(f"the execution's spec does not validate ({exc.error_count()} problems)")
        return None


def mark_aborted(
    run_id: str, spec: BenchmarkSpec | None, spec_name: str, reason: str, suite_run_id: str | None = None
) -> RunRecord:
    """Finish the run as ``aborted`` with the reason (kept as is when it already finished), through the
    same finish stage every run ends with: final status, report, and the message ``notify.on`` asks
    for (a suite's cell, ``suite_run_id`` set, only closes its own record)."""
    state = FinishState(
        run_id=run_id,
        spec_name=spec_name,
        spec=spec,
        status="aborted",
        error=reason,
        suite_run_id=suite_run_id,
    )
    providers = providers_for(state, "finish_run")
    record = providers.store.get_run(run_id)
    if record is not None and record.status in ("succeeded", "invalid", "failed"):
        return record
    finished = finish_run(state, providers)
    for warning in finished.warnings:
        logger.warning(warning)
    return providers.store.get_run(run_id) or RunRecord(
        run_id=run_id, spec_name=spec_name, status="aborted", started_at=state.created_at
    )


def abort(event: dict[str, Any]) -> dict[str, Any]:
    detail = event.get("detail") or {}
    status = str(detail.get("status", ""))
    if status not in ENDED:
        return {"skipped": status or "no status"}
    run_id = run_id_of(detail)
    logger.append_keys(run_id=run_id)
    reason = f"execution {status.replace('_', ' ').lower()}: {detail.get('cause') or 'stopped outside the workflow'}"
    caught = {"Error": "Execution" + status.title().replace("_", ""), "Cause": reason}
    problems = [
        problem
        for raw in history_states(str(detail["executionArn"]))
        if (problem := tear_down_cell(dict(raw, caught=caught), reason))
    ]
    report = sweep_run(clients(), run_id)
    inputs = execution_input(detail)
    spec = input_spec(inputs)
    name = inputs.get("spec_name") or (spec.name if spec is not None else "run")
    record = mark_aborted(run_id, spec, str(name), reason)
    metrics.add_metric(name="AbortedRuns", unit=MetricUnit.Count, value=1)
    result = {"run_id": run_id, "status": record.status, "teardown_problems": problems, **report.as_dict()}
    logger.info("aborted run torn down", extra=result)
    return result


@logger.inject_lambda_context(log_event=False)
@tracer.capture_lambda_handler
@metrics.log_metrics
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    return abort(event or {})
