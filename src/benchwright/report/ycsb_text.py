"""YCSB's own summary format, so existing parsers and spreadsheets keep working.

With a target rate, ``[READ]`` lines are service time, as YCSB prints them by default, and
``[Intended-READ]`` lines are latency from the intended start (YCSB's ``measurement.interval=both``).
Without a rate there is only service time.
"""

from __future__ import annotations

from benchwright.results import OperationSummary, ResultDocument, is_failed
from benchwright.runner.measure import decode_histogram


def _lines(label: str, op: OperationSummary, failed: int = 0) -> list[str]:
    lines = [
        f"[{label}], Operations, {op.operations}",
        f"[{label}], AverageLatency(us), {op.average_us}",
        f"[{label}], MinLatency(us), {op.min_us:g}",
        f"[{label}], MaxLatency(us), {op.max_us:g}",
        f"[{label}], 95thPercentileLatency(us), {op.p95_us:g}",
        f"[{label}], 99thPercentileLatency(us), {op.p99_us:g}",
    ]
    lines += [f"[{label}], Return={status}, {n}" for status, n in op.statuses.items()]
    if failed:  # as YCSB: the failures' latencies are [READ-FAILED]'s, their count also READ's Return=ERROR
        lines.append(f"[{label}], Return=ERROR, {failed}")
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
    """YCSB's block; ``Throughput(ops/sec)`` counts successful operations only (YCSB counts every
    operation), and ``[OVERALL], Failed`` says how many were left out."""
    lines = [
        f"[OVERALL], RunTime(ms), {doc.runtime_ms:.0f}",
        f"[OVERALL], Throughput(ops/sec), {doc.throughput}",
    ]
    if doc.failed_total:
        lines.append(f"[OVERALL], Failed, {doc.failed_total}")
    paced = doc.measurement.latency == "response_time"
    for name, op in doc.operations.items():
        failed = 0 if is_failed(name) else doc.failed(name)
        lines += _lines(name, _service_view(op) if paced else op, failed)
        if paced:
            lines += _lines(f"Intended-{name}", op, failed)
    for flag in doc.validity:
        lines.append(f"[VALIDITY], {flag.code}, {flag.severity}: {flag.message}")
    return "\n".join(lines) + "\n"
