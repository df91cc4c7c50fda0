"""ExpandMatrix: validate the spec at the suite's edge and expand it into one run state per cell."""

from __future__ import annotations

from typing import Any

from benchwright.stages.suite import expand
from functions._common import logger, metrics, tracer


@logger.inject_lambda_context(log_event=False)
@tracer.capture_lambda_handler
@metrics.log_metrics
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    result = expand(event)
    logger.info("matrix expanded", extra={"run_id": result["run_id"], "cells": len(result["cells"])})
    return result
