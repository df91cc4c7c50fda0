"""CheckOperations: one non-blocking step of the spec's operation benchmarks (snapshot restore, PITR,
scale-out); a failed operation is logged in the state, not raised."""

from __future__ import annotations

from typing import Any

from functions._common import logger, metrics, run_stage, tracer


@logger.inject_lambda_context(log_event=False)
@tracer.capture_lambda_handler
@metrics.log_metrics
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    return run_stage("check_operations", event)
