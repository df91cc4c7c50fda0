"""YCSB's own summary format, so existing parsers and spreadsheets keep working.

With a target rate, ``[READ]`` lines are service time, as YCSB prints them by default, and
``[Intended-READ]`` lines are latency from the intended start (YCSB's ``measurement.interval=both``).
Without a rate there is only service time.
"""

from __future__ import annotations

from benchwright.results import OperationSummary, ResultDocument
from benchwright.runner.measure import decode_histogram


def _lines(label: str, op: OperationSummary) -> list[str]:
    lines = [
        f"[{label}], Operations, {op.operations}",
        f"[{label}], AverageLatency(us), {op.average_us}",
        f"[{label}], MinLatency(us), {op.min_us:g}",
        f"[{label}], MaxLatency(us), {op.max_us:g}",
        f"[{label}], 95thPercentileLatency(us), {op.p95_us:g}",
        f"[{label}], 99thPercentileLatency(us), {op.p99_us:g}",
    ]
    lines += [f"[{label}], Return={status}, {n}" for status, n in op.statuses.items()]
    return lines


def _service_view(op: OperationSummary) -> OperationSummary:
    if not op.service_time_histogram:
        return op
    h = decode_histogram(op.service_time_histogram)
    return op.model_copy(
        update={
            "average_us": round(h.get_mean_value(), 3),
            "min_us": float(h.get_min_value()),
            "max_us": float(h.get_max_value()),
            "p95_us": float(h.get_value_at_percentile(95)),
            "p99_us": float(h.get_value_at_percentile(99)),
        }
    )


def ycsb_summary(doc: ResultDocument) -> str:
    lines = [
        f"[OVERALL], RunTime(ms), {doc.runtime_ms:.0f}",
        f"[OVERALL], Throughput(ops/sec), {doc.throughput}",
    ]
    paced = doc.measurement.latency == "response_time"
    for name, op in doc.operations.items():
        lines += _lines(name, _service_view(op) if paced else op)
        if paced:
            lines += _lines(f"Intended-{name}", op)
    for flag in doc.validity:
        lines.append(f"[VALIDITY], {flag.code}, {flag.severity}: {flag.message}")
    return "\n".join(lines) + "\n"
