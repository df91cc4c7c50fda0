"""CollectMetrics: CloudWatch metrics of the measured window, stored in S3 as a pointer."""

from __future__ import annotations

from typing import Any

from functions._common import logger, metrics, run_stage, tracer


@logger.inject_lambda_context(log_event=False)
@tracer.capture_lambda_handler
@metrics.log_metrics
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    return run_stage("collect_metrics", event)
