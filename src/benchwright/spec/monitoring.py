"""``target.monitoring`` (RDS and Aurora): the server's own per-second series for the measured window.

CloudWatch's 60-second points cannot explain a drop inside a 5-minute run; Enhanced Monitoring (OS
metrics every 1-60 s, into CloudWatch Logs ``RDSOSMetrics``) and Performance Insights (DB load by
wait event in 1 s periods) can. The intervals are the ones RDS accepts for ``MonitoringInterval``.
"""

from __future__ import annotations

from pydantic import Field, field_validator

from benchwright.spec._base import StrictModel

# https://docs.aws.amazon.com/AmazonRDS/latest/APIReference/API_CreateDBInstance.html (MonitoringInterval)
ENHANCED_INTERVALS_S = (0, 1, 5, 10, 15, 30, 60)


class Monitoring(StrictModel):
    """``enhanced_s``: Enhanced Monitoring's interval (0 = off); ``performance_insights``: DB load."""

    enhanced_s: int = Field(default=0)
    performance_insights: bool = False

    @field_validator("enhanced_s")
    @classmethod
    def _interval(cls, v: int) -> int:
        if v not in ENHANCED_INTERVALS_S:
            allowed = ", ".join(str(i) for i in ENHANCED_INTERVALS_S)
            raise ValueError(f"{v} is not an Enhanced Monitoring interval RDS accepts ({allowed} seconds)")
        return v

    @property
    def enabled(self) -> bool:
        return self.enhanced_s > 0 or self.performance_insights
