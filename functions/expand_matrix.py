"""ExpandMatrix: validate the spec at the suite's edge and expand it into target groups (one provisioned
target each) of cells (one run state per cell and repeat)."""

from __future__ import annotations

from typing import Any

from benchwright.stages.suite import expand
from functions._common import logger, metrics, tracer


@logger.inject_lambda_context(log_event=False)
@tracer.capture_lambda_handler
@metrics.log_metrics
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    result = expand(event)
    cells = sum(len(group["cells"]) for group in result["groups"])
    extra = {"run_id": result["run_id"], "cells": cells, "target_groups": len(result["groups"])}
    logger.info("matrix expanded", extra=extra)
    return result
