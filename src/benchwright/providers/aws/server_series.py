"""Per-second server-side series from AWS's own documents: Enhanced Monitoring's ``RDSOSMetrics`` JSON
and Performance Insights' GetResourceMetrics response, as ``MetricSeries`` on the result's time axis.

CloudWatch's 60 s points cannot explain a drop inside a 5-minute run; these can. Both are parsed
from the shapes AWS documents (RDS User Guide, "Viewing OS metrics in CloudWatch Logs" / "OS metrics
in Enhanced Monitoring"; the Performance Insights API reference), so the rehearsal's stand-in and AWS
go through the same code. ``t`` is seconds since the measured window's start, as every series is.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

from benchwright.results import MetricPoint, MetricSeries

EM_SOURCE = "enhanced_monitoring"
PI_SOURCE = "performance_insights"
DOC_BYTES = "em.document_bytes"  # each document's size: what CloudWatch Logs ingests (its cost)
PI_METRIC = "db.load.avg"  # average active sessions: the load PI breaks down by wait event
PI_GROUP = "db.wait_event"
PI_TOTAL = "db.load.avg"  # the ungrouped series' name; a wait event's is "db.load.avg NAME"


def _sum(items: Any, key: str) -> float | None:
    """A figure summed over the document's list (devices, interfaces); None when no item has it."""
    if not isinstance(items, list):
        return None
    values = [float(i[key]) for i in items if isinstance(i, dict) and isinstance(i.get(key), int | float)]
    return sum(values) if values else None


def _get(doc: dict[str, Any], section: str, key: str) -> float | None:
    value = (doc.get(section) or {}).get(key) if isinstance(doc.get(section), dict) else None
    return float(value) if isinstance(value, int | float) else None


# (series name, unit, how to read it from one document). RDS for MySQL/PostgreSQL's diskIO entries
# have readIOsPS/writeIOsPS/avgQueueLen/await; Aurora's have readIOsPS/writeIOsPS/diskQueueDepth.
OS_FIELDS: list[tuple[str, str, Any]] = [
    ("os.cpu.total", "Percent", lambda d: _get(d, "cpuUtilization", "total")),
    ("os.cpu.wait", "Percent", lambda d: _get(d, "cpuUtilization", "wait")),
    ("os.cpu.steal", "Percent", lambda d: _get(d, "cpuUtilization", "steal")),
    ("os.load.one", "Count", lambda d: _get(d, "loadAverageMinute", "one")),
    ("os.disk.iops", "Count/Second", lambda d: _iops(d.get("diskIO"))),
    (
        "os.disk.queue",
        "Count",
        lambda d: _sum(d.get("diskIO"), "avgQueueLen") or _sum(d.get("diskIO"), "diskQueueDepth"),
    ),
    ("os.disk.await", "Milliseconds", lambda d: _sum(d.get("diskIO"), "await")),
    ("os.net.rx", "Bytes/Second", lambda d: _sum(d.get("network"), "rx")),
    ("os.net.tx", "Bytes/Second", lambda d: _sum(d.get("network"), "tx")),
    ("os.memory.free", "Kilobytes", lambda d: _get(d, "memory", "free")),
]


def _iops(disks: Any) -> float | None:
    reads, writes = _sum(disks, "readIOsPS"), _sum(disks, "writeIOsPS")
    if reads is None and writes is None:
        return None
    return (reads or 0.0) + (writes or 0.0)


def parse_time(text: str) -> datetime:
    """RDSOSMetrics' ``timestamp`` (ISO 8601, ``Z``) as an aware UTC datetime."""
    stamp = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return stamp if stamp.tzinfo else stamp.replace(tzinfo=UTC)


def os_series(messages: Iterable[str], start: datetime, end: datetime, instance: str) -> list[MetricSeries]:
    """The OS series of one instance from its log events' messages, inside [start, end]; a message
    that is not a JSON object with a timestamp is skipped (the stream is the agent's, not ours)."""
    points: dict[str, list[MetricPoint]] = {name: [] for name, _unit, _read in OS_FIELDS}
    points[DOC_BYTES] = []
    for message in messages:
        try:
            doc = json.loads(message)
            stamp = parse_time(str(doc["timestamp"]))
        except (ValueError, KeyError, TypeError):
            continue
        if not isinstance(doc, dict) or stamp < start or stamp > end:
            continue
        t = (stamp - start).total_seconds()
        points[DOC_BYTES].append(MetricPoint(t=t, value=float(len(message.encode()))))
        for name, _unit, read in OS_FIELDS:
            value = read(doc)
            if value is not None:
                points[name].append(MetricPoint(t=t, value=value))
    units = {name: unit for name, unit, _read in OS_FIELDS} | {DOC_BYTES: "Bytes"}
    return [
        MetricSeries(
            name=name,
            unit=units[name],
            source=f"{EM_SOURCE}:{instance}",
            points=sorted(found, key=lambda p: p.t),
        )
        for name, found in points.items()
        if found
    ]


def pi_query(limit: int = 10) -> list[dict[str, Any]]:
    """GetResourceMetrics' MetricQueries: DB load in total and by wait event (the top ``limit``)."""
    return [{"Metric": PI_METRIC}, {"Metric": PI_METRIC, "GroupBy": {"Group": PI_GROUP, "Limit": limit}}]


def pi_series(responses: Iterable[dict[str, Any]], start: datetime, instance: str) -> list[MetricSeries]:
    """DB load series from GetResourceMetrics pages: the total and one per wait event; a data point
    without a value (PI leaves gaps where it has none) is left out, never read as zero."""
    found: dict[str, dict[float, float]] = {}
    for page in responses:
        for metric in page.get("MetricList", []):
            key = metric.get("Key") or {}
            if key.get("Metric") != PI_METRIC:
                continue
            dims = key.get("Dimensions") or {}
            name = PI_TOTAL
            if dims:
                # PostgreSQL's names carry their type ("IO:DataFileRead"), MySQL's are paths
                # ("io/table/sql/handler"), CPU is "CPU": the name alone says what it is
                name = f"{PI_TOTAL} {dims.get(f'{PI_GROUP}.name') or dims.get(f'{PI_GROUP}.type', '?')}"
            slot = found.setdefault(name, {})
            for point in metric.get("DataPoints", []):
                value = point.get("Value")
                stamp = point.get("Timestamp")
                if value is None or not isinstance(stamp, datetime):
                    continue
                stamp = stamp if stamp.tzinfo else stamp.replace(tzinfo=UTC)
                slot[(stamp - start).total_seconds()] = float(value)
    return [
        MetricSeries(
            name=name,
            unit="Sessions",
            source=f"{PI_SOURCE}:{instance}",
            points=[MetricPoint(t=t, value=v) for t, v in sorted(values.items())],
        )
        for name, values in sorted(found.items())
        if values
    ]
