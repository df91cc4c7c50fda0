"""The rows a run becomes in a time-series store, produced lazily (a one-hour run never sits in memory
twice). Both sinks (Timestream LiveAnalytics and InfluxDB) write these rows."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta

from benchwright.results import failed_name, is_failed
from benchwright.runs import RunRecord


@dataclass(frozen=True)
class Row:
    measurement: str  # interval | operation | metric
    time: datetime
    tags: dict[str, str]
    fields: dict[str, float | int]


def rows(record: RunRecord) -> Iterator[Row]:
    for cell in record.cells:
        base = {
            "run_id": record.run_id,
            "spec": record.spec_name,
            "cell": cell.cell_id,
            "repeat": str(cell.repeat),
        }
        measured_start = None
        for phase, doc in cell.phases.items():
            tags = {**base, "phase": phase, "workload": doc.workload, "engine": doc.engine}
            if phase == "run" or measured_start is None:
                measured_start = doc.started_at
            for sample in doc.intervals:
                fields: dict[str, float | int] = {
                    "throughput": float(sample.throughput),
                    "p50_us": float(sample.p50_us),
                    "p99_us": float(sample.p99_us),
                    "max_us": float(sample.max_us),
                    "errors": int(sample.errors),
                    "errors_per_s": float(sample.errors / doc.measurement.interval_s),
                }
                for op, count in sample.operations.items():
                    fields[f"ops_{op}"] = int(count)
                yield Row("interval", doc.started_at + timedelta(seconds=sample.t), tags, fields)
            for op, summary in doc.operations.items():
                if is_failed(op):  # failures: a count and a rate named as such, never "throughput"
                    errors = summary.statuses.get("ERROR", 0)
                    runtime_s = doc.runtime_ms / 1000
                    counts: dict[str, float | int] = {
                        "errors": int(errors),
                        "errors_per_s": float(errors / runtime_s) if runtime_s else 0.0,
                        "retries": int(summary.statuses.get("RETRY", 0)),
                    }
                else:
                    failed = doc.failed(op)
                    unsuccessful = doc.operations.get(failed_name(op))
                    tried = summary.operations + (unsuccessful.operations if unsuccessful else 0)
                    counts = {
                        "operations": int(summary.operations),
                        "throughput": float(summary.throughput),
                        "errors": int(failed),
                        "error_rate": float(failed / tried) if tried else 0.0,
                    }
                yield Row(
                    "operation",
                    doc.ended_at,
                    {**tags, "operation": op},
                    {
                        **counts,
                        "average_us": float(summary.average_us),
                        "p50_us": float(summary.p50_us),
                        "p95_us": float(summary.p95_us),
                        "p99_us": float(summary.p99_us),
                        "p999_us": float(summary.p999_us),
                        "max_us": float(summary.max_us),
                    },
                )
        if measured_start is None:
            continue
        for series in cell.metrics:
            tags = {**base, "metric": series.name, "source": series.source, "unit": series.unit}
            for point in series.points:
                yield Row(
                    "metric", measured_start + timedelta(seconds=point.t), tags, {"value": float(point.value)}
                )
