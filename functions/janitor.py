"""Janitor (scheduled): delete every tagged resource past its expires-at, across each service we use."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.metrics import MetricUnit

from benchwright.providers.aws.janitor import sweep
from functions._common import clients, logger, metrics, settings, tracer


@logger.inject_lambda_context(log_event=False)
@tracer.capture_lambda_handler
@metrics.log_metrics
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    report = sweep(clients(), owner=settings().owner, dry_run=bool(event.get("dry_run", False)))
    metrics.add_metric(name="LeakedResources", unit=MetricUnit.Count, value=len(report.deleted))
    logger.info("janitor sweep", extra=report.as_dict())
    return report.as_dict()
