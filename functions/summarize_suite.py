"""SummarizeSuite: merge the cells' run records into the suite run's record in S3."""

from __future__ import annotations

from typing import Any

from benchwright.providers.aws import aws_providers
from benchwright.stages.suite import summarize
from functions._common import clients, logger, metrics, settings, tracer


@logger.inject_lambda_context(log_event=False)
@tracer.capture_lambda_handler
@metrics.log_metrics
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    summary = summarize(event, aws_providers({}, settings(), clients=clients(), ingest=False).store)
    logger.info("suite summarized", extra=summary)
    return summary
