"""Teardown: stop runners, delete the target (idempotent), then record the run's final status."""

from __future__ import annotations

from typing import Any

from benchwright.stages import stage_function
from benchwright.stages.outcome import record_outcome
from functions._common import dump, logger, metrics, parse_state, providers_for, tracer


@logger.inject_lambda_context(log_event=False)
@tracer.capture_lambda_handler
@metrics.log_metrics
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    state = parse_state(event)
    logger.append_keys(run_id=state.run_id, stage="teardown")
    providers = providers_for(state)
    state = record_outcome(stage_function("teardown")(state, providers), providers)
    for warning in providers.extras.get("warnings", []):
        logger.warning(warning)
    logger.info("torn down", extra={"status": state.status, "error_type": state.error_type})
    return dump(state)
