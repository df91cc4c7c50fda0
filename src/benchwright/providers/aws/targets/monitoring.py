"""CreateDBInstance's monitoring arguments from ``target.monitoring`` (spec/monitoring.py).

Enhanced Monitoring needs a role RDS assumes to write ``RDSOSMetrics`` (the stack's monitoring role,
``BENCHWRIGHT_MONITORING_ROLE_ARN``); without one the instance cannot be created with an interval,
so that is refused before the create call rather than an instance created without the series.
"""

from __future__ import annotations

from typing import Any

from benchwright.errors import ProvisioningFailed
from benchwright.spec.monitoring import Monitoring

# Performance Insights' free tier: 7 days of retention (the only period without a retention charge)
PI_RETENTION_DAYS = 7


def monitoring_args(monitoring: Monitoring | None, role_arn: str | None) -> dict[str, Any]:
    """MonitoringInterval/MonitoringRoleArn and EnablePerformanceInsights for one DB instance."""
    if monitoring is None or not monitoring.enabled:
        return {}
    args: dict[str, Any] = {}
    if monitoring.enhanced_s > 0:
        if not role_arn:
            raise ProvisioningFailed(
                "target.monitoring.enhanced_s needs the stack's Enhanced Monitoring role "
                "(BENCHWRIGHT_MONITORING_ROLE_ARN is not set): deploy the current stack"
            )
        args["MonitoringInterval"] = monitoring.enhanced_s
        args["MonitoringRoleArn"] = role_arn
    if monitoring.performance_insights:
        args["EnablePerformanceInsights"] = True
        args["PerformanceInsightsRetentionPeriod"] = PI_RETENTION_DAYS
    return args
