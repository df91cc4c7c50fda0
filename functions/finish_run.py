"""FinishRun: final status, verdict against the S3 history, HTML report, Slack when notify.on says so."""

from __future__ import annotations

from typing import Any

from functions._common import logger, metrics, run_stage, tracer


@logger.inject_lambda_context(log_event=False)
@tracer.capture_lambda_handler
@metrics.log_metrics
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    return run_stage("finish_run", event)
