"""ValidateSpec: Validate the cell's spec at the workflow's edge; a bad spec fails before anything exists.

The spec goes through ``parse_spec`` first, the one door of the CLI, the API and the suite's
ExpandMatrix: its raw-data guards (no secret written in the spec, text fit to store) run before the
model sees the data. An execution started directly (not through the API) is held to them too.
"""

from __future__ import annotations

from typing import Any

from benchwright.spec import parse_spec
from functions._common import logger, metrics, run_stage, tracer


@logger.inject_lambda_context(log_event=False)
@tracer.capture_lambda_handler
@metrics.log_metrics
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    parse_spec(event.get("spec"), prefix="spec")  # SpecError naming the field, never the value
    return run_stage("validate_spec", event)
