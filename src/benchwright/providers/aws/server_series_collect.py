"""Collect a target's per-second server series (spec ``target.monitoring``) for the measured window.

Enhanced Monitoring: the instance's log stream in ``RDSOSMetrics`` (the stream is named by the
instance's DbiResourceId). Performance Insights: GetResourceMetrics on ``db-...`` (the same id),
``db.load.avg`` grouped by ``db.wait_event`` in 1-second periods. Parsing is server_series.py.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from benchwright.errors import RetryableIngestError
from benchwright.providers.aws.common import Clients, aws_call
from benchwright.providers.aws.server_series import os_series, pi_query, pi_series
from benchwright.providers.base import MetricsWindow
from benchwright.results import MetricSeries
from benchwright.spec.monitoring import Monitoring

OS_LOG_GROUP = "RDSOSMetrics"
MAX_PAGES = 500  # a run of hours at 1 s is ~10 pages of log events; bounded all the same
PI_MAX_RESULTS = 25  # GetResourceMetrics' MaxResults: metric entries per page (its maximum)


def _ms(window: MetricsWindow) -> tuple[int, int]:
    return int(window.start.timestamp() * 1000), int(window.end.timestamp() * 1000) + 999


def resource_id(clients: Clients, instance: str) -> str:
    """The instance's DbiResourceId (``db-...``): the name of its log stream and of its PI resource."""
    found = aws_call(
        f"rds instance {instance}",
        clients("rds").describe_db_instances,
        DBInstanceIdentifier=instance,
        retryable=RetryableIngestError,
    )["DBInstances"]
    return str(found[0]["DbiResourceId"])


def os_messages(clients: Clients, stream: str, window: MetricsWindow) -> Iterator[str]:
    """The stream's log event messages inside the window (FilterLogEvents, paginated)."""
    logs = clients("logs")
    start, end = _ms(window)
    token: str | None = None
    for _ in range(MAX_PAGES):
        args: dict[str, Any] = {
            "logGroupName": OS_LOG_GROUP,
            "logStreamNames": [stream],
            "startTime": start,
            "endTime": end,
        }
        if token:
            args["nextToken"] = token
        page = aws_call(
            "logs filter_log_events RDSOSMetrics",
            logs.filter_log_events,
            **args,
            retryable=RetryableIngestError,
        )
        yield from (str(e.get("message", "")) for e in page.get("events", []))
        token = page.get("nextToken")
        if not token:
            return


def pi_pages(clients: Clients, ident: str, window: MetricsWindow) -> Iterator[dict[str, Any]]:
    """GetResourceMetrics pages of DB load by wait event, 1-second periods."""
    pi = clients("pi")
    token: str | None = None
    for _ in range(MAX_PAGES):
        args: dict[str, Any] = {
            "ServiceType": "RDS",
            "Identifier": ident,
            "MetricQueries": pi_query(),
            "StartTime": window.start,
            "EndTime": window.end,
            "PeriodInSeconds": 1,
            "MaxResults": PI_MAX_RESULTS,
        }
        if token:
            args["NextToken"] = token
        page = aws_call(
            "pi get_resource_metrics", pi.get_resource_metrics, **args, retryable=RetryableIngestError
        )
        yield page
        token = page.get("NextToken")
        if not token:
            return


def collect_server_series(
    clients: Clients, instances: list[str], monitoring: Monitoring | None, window: MetricsWindow
) -> list[MetricSeries]:
    """Each instance's OS and DB-load series for the window (nothing when monitoring is off)."""
    if monitoring is None or not monitoring.enabled:
        return []
    out: list[MetricSeries] = []
    for instance in instances:
        ident = resource_id(clients, instance)
        if monitoring.enhanced_s > 0:
            out += os_series(os_messages(clients, ident, window), window.start, window.end, instance)
        if monitoring.performance_insights:
            out += pi_series(pi_pages(clients, ident, window), window.start, instance)
    return out
