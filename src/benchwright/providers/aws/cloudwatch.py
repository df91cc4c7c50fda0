"""CloudWatch metrics of the run window: GetMetricData per target kind, 60-second data, padded window.

Also the two judgements that only cloud metrics allow: the burst-credit regime (full / draining /
exhausted: the silent throughput collapse of experiment 3) and "the window is too short for
60-second data to say anything".
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from benchwright.errors import RetryableIngestError
from benchwright.judge.credits import CLOUDWATCH_PERIOD_S
from benchwright.providers.aws.common import Clients, aws_call
from benchwright.providers.aws.server_series_collect import collect_server_series
from benchwright.providers.base import MetricsSource, MetricsWindow, Target
from benchwright.results import MetricPoint, MetricSeries

PERIOD_S = CLOUDWATCH_PERIOD_S  # the judgement of a window and the queries agree on it
DEFAULT_PAD_S = 120.0

RDS_METRICS = [
    ("CPUUtilization", "Percent"),
    ("ReadIOPS", "Count/Second"),
    ("WriteIOPS", "Count/Second"),
    ("ReadLatency", "Seconds"),
    ("WriteLatency", "Seconds"),
    ("BurstBalance", "Percent"),
    ("CPUCreditBalance", "Count"),
    ("EBSIOBalance%", "Percent"),
    ("EBSByteBalance%", "Percent"),
    ("DatabaseConnections", "Count"),
    ("FreeableMemory", "Bytes"),
    ("NetworkReceiveThroughput", "Bytes/Second"),
    ("NetworkTransmitThroughput", "Bytes/Second"),
    ("DiskQueueDepth", "Count"),
]
CACHE_METRICS = [
    ("EngineCPUUtilization", "Percent"),
    ("CPUUtilization", "Percent"),
    ("CurrConnections", "Count"),
    ("NetworkBytesIn", "Bytes"),
    ("NetworkBytesOut", "Bytes"),
    ("NetworkBandwidthInAllowanceExceeded", "Count"),
    ("NetworkBandwidthOutAllowanceExceeded", "Count"),
    ("CPUCreditBalance", "Count"),
    ("DatabaseMemoryUsagePercentage", "Percent"),
]
EC2_METRICS = [
    ("CPUUtilization", "Percent"),
    ("CPUCreditBalance", "Count"),
    ("EBSIOBalance%", "Percent"),
    ("EBSByteBalance%", "Percent"),
    ("NetworkIn", "Bytes"),
    ("NetworkOut", "Bytes"),
]
EBS_METRICS = [
    ("BurstBalance", "Percent"),
    ("VolumeReadOps", "Count/Second"),
    ("VolumeWriteOps", "Count/Second"),
    ("VolumeQueueLength", "Count"),  # I/O requests waiting, averaged over the period
]
# An Aurora cluster's billed storage I/Os (each point the count of a 5-minute period): what the cost
# stage prices Aurora Standard's I/O requests by (providers/aws/targets/kinds/aurora/usage.py).
AURORA_CLUSTER_METRICS = [("VolumeReadIOPs", "Count"), ("VolumeWriteIOPs", "Count")]
NAMESPACE_METRICS = {
    "AWS/RDS": RDS_METRICS,
    "AWS/ElastiCache": CACHE_METRICS,
    "AWS/MemoryDB": CACHE_METRICS,
    "AWS/EC2": EC2_METRICS,
    "AWS/EBS": EBS_METRICS,
}
SUM_METRICS = {
    "NetworkBytesIn",
    "NetworkBytesOut",
    "NetworkBandwidthInAllowanceExceeded",
    "NetworkBandwidthOutAllowanceExceeded",
    "VolumeReadOps",
    "VolumeWriteOps",
    "NetworkIn",
    "NetworkOut",
    "VolumeReadIOPs",
    "VolumeWriteIOPs",
}

# AWS/EBS reports operations as a count per period (Sum): divided by the period they are IOPS, what
# RDS's ReadIOPS/WriteIOPS already are and what a plot next to them must show.
PER_SECOND_METRICS = {"VolumeReadOps", "VolumeWriteOps"}


def queries_for(dimension_sets: list[tuple[str, dict[str, str]]]) -> list[dict[str, Any]]:
    """One MetricDataQuery per (namespace, dimensions, metric); ids are m0, m1 ... in order."""
    queries: list[dict[str, Any]] = []
    for namespace, dims in dimension_sets:
        metrics = NAMESPACE_METRICS.get(namespace, [])
        if namespace == "AWS/RDS" and "DBClusterIdentifier" in dims:
            metrics = metrics + AURORA_CLUSTER_METRICS
        for name, _unit in metrics:
            queries.append(
                {
                    "Id": f"m{len(queries)}",
                    "Label": f"{namespace}|{name}|" + ",".join(f"{k}={v}" for k, v in sorted(dims.items())),
                    "MetricStat": {
                        "Metric": {
                            "Namespace": namespace,
                            "MetricName": name,
                            "Dimensions": [{"Name": k, "Value": v} for k, v in sorted(dims.items())],
                        },
                        "Period": PERIOD_S,
                        "Stat": "Sum" if name in SUM_METRICS else "Average",
                    },
                    "ReturnData": True,
                }
            )
    return queries


class CloudWatchMetrics(MetricsSource):
    def __init__(self, clients: Clients, runner_instances: list[str] | None = None) -> None:
        self.clients = clients
        self.runner_instances = runner_instances or []

    def watch_runners(self, handles: list[Any]) -> None:
        """The run's EC2 runner hosts: their CPU, credits and network are collected with the target's
        (a saturated or credit-starved client is a result about the client, not the database)."""
        self.runner_instances = [h.id for h in handles if h.details.get("kind") == "ec2"]

    def collect(self, target: Target, window: MetricsWindow) -> list[MetricSeries]:
        dims: list[tuple[str, dict[str, str]]] = list(getattr(target, "metric_dimensions", list)())
        dims += [("AWS/EC2", {"InstanceId": i}) for i in self.runner_instances]
        # the server's own per-second series (spec target.monitoring: Enhanced Monitoring, PI)
        server = collect_server_series(
            self.clients,
            list(getattr(target, "monitored_instances", list)()),
            getattr(getattr(target, "spec", None), "monitoring", None),
            window,
        )
        queries = queries_for(dims)
        if not queries:
            return server
        pad = timedelta(seconds=window.pad_s or DEFAULT_PAD_S)
        start = (window.start - pad).replace(second=0, microsecond=0)
        end = window.end + pad
        cw = self.clients("cloudwatch")
        results: dict[str, dict[str, list[Any]]] = {}
        for i in range(0, len(queries), 500):  # GetMetricData takes up to 500 queries
            token: str | None = None
            while True:
                args: dict[str, Any] = {
                    "MetricDataQueries": queries[i : i + 500],
                    "StartTime": start,
                    "EndTime": end,
                    "ScanBy": "TimestampAscending",
                }
                if token:
                    args["NextToken"] = token
                page = aws_call(
                    "cloudwatch get_metric_data", cw.get_metric_data, **args, retryable=RetryableIngestError
                )
                for r in page.get("MetricDataResults", []):
                    slot = results.setdefault(r["Id"], {"t": [], "v": []})
                    slot["t"].extend(r.get("Timestamps", []))
                    slot["v"].extend(r.get("Values", []))
                token = page.get("NextToken")
                if not token:
                    break
        known = [*NAMESPACE_METRICS.values(), AURORA_CLUSTER_METRICS]
        units = {name: unit for metrics in known for name, unit in metrics}
        out: list[MetricSeries] = []
        for q in queries:
            data = results.get(q["Id"])
            if not data or not data["t"]:
                continue
            namespace, name, dims_text = q["Label"].split("|", 2)
            points = sorted(
                (
                    MetricPoint(
                        t=(ts - window.start).total_seconds(),
                        value=float(v) / PERIOD_S if name in PER_SECOND_METRICS else float(v),
                    )
                    for ts, v in zip(data["t"], data["v"], strict=True)
                ),
                key=lambda p: p.t,
            )
            out.append(
                MetricSeries(
                    name=name,
                    unit=units.get(name, "None"),
                    source=f"cloudwatch:{namespace}:{dims_text}",
                    points=points,
                )
            )
        return out + server
