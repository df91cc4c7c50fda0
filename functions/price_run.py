"""PriceRun: Cost of the cell from the Price List API: per run, ops per dollar, nightly per month.

The cell's estimate is also published as the CloudWatch metric ``RunCostUSD`` (namespace Benchwright,
only the ``service`` dimension) because the DailySpend alarm sums exactly that metric per day: a
dimension more (such as the ``stage`` the shared metrics carry) would make it a different metric.
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.metrics import MetricUnit, single_metric

from benchwright.providers.aws.names import METRIC_RUN_COST, METRICS_NAMESPACE
from functions._common import logger, metrics, run_stage, tracer

DIMENSIONS = {"service": "benchwright"}


def publish_cost(cost_total: float | None) -> bool:
    """One EMF record for the alarm; nothing when the run could not be priced."""
    if cost_total is None:
        return False
    with single_metric(
        name=METRIC_RUN_COST,
        unit=MetricUnit.NoUnit,
        value=float(cost_total),
        namespace=METRICS_NAMESPACE,
        default_dimensions=DIMENSIONS,
    ):
        pass
    return True


@logger.inject_lambda_context(log_event=False)
@tracer.capture_lambda_handler
@metrics.log_metrics
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    result = run_stage("price_run", event)
    publish_cost(result.get("cost_total"))
    return result
