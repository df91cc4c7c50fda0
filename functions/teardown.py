"""Teardown: stop runners and delete the target (idempotent); FinishRun records the outcome next."""

from __future__ import annotations

from typing import Any

from functions._common import logger, metrics, run_stage, tracer


@logger.inject_lambda_context(log_event=False)
@tracer.capture_lambda_handler
@metrics.log_metrics
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    return run_stage("teardown", event)
