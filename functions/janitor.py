"""Janitor: scheduled, delete every tagged resource past its expires-at whose run's execution has
ended (Step Functions is asked; a suite may outlive its estimate), across each service we use;
invoked with ``{"run_id": ...}`` (the API's cancel), delete that run's resources at once.

A cancelled execution never reaches its Catch -> Teardown, and the API's own Teardown call works
from the last state it can read; the run-id sweep catches whatever that state did not know about.
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.metrics import MetricUnit

from benchwright.errors import SpecError
from benchwright.providers.aws.executions import RunningExecutions
from benchwright.providers.aws.janitor import sweep, sweep_run
from benchwright.providers.aws.names import METRIC_LEAKED
from functions._common import clients, logger, metrics, settings, tracer


def run_id_of(event: dict[str, Any]) -> str | None:
    """The run to sweep, or None for a scheduled sweep; a present but unusable value is an error
    (an empty string must not silently turn a cancel into a no-op)."""
    if "run_id" not in event:
        return None
    value = event["run_id"]
    if not isinstance(value, str) or not value.strip() or len(value) > 128:
        raise SpecError("run_id", "the janitor needs a non-empty run id string (at most 128 characters)")
    return value.strip()


@logger.inject_lambda_context(log_event=False)
@tracer.capture_lambda_handler
@metrics.log_metrics
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    event = event or {}
    dry_run = bool(event.get("dry_run", False))
    run_id = run_id_of(event)
    if run_id is not None:
        logger.append_keys(run_id=run_id)
        report = sweep_run(clients(), run_id, dry_run=dry_run)
        metrics.add_metric(name="CancelledResources", unit=MetricUnit.Count, value=len(report.deleted))
        logger.info("janitor run sweep", extra={**report.as_dict(), "reason": str(event.get("reason", ""))})
        return {"run_id": run_id, **report.as_dict()}
    config = settings()
    machines = [m for m in (config.benchmark_state_machine, config.suite_state_machine) if m]
    running = RunningExecutions(clients(), machines)
    report = sweep(clients(), owner=config.owner, dry_run=dry_run, running=running)
    metrics.add_metric(name=METRIC_LEAKED, unit=MetricUnit.Count, value=len(report.deleted))
    logger.info("janitor sweep", extra=report.as_dict())
    return report.as_dict()
