"""Latency buckets as experiment 4 tabulates them: share of requests within 1, 5, 50, 100, 300 and
500 ms, and the maximum. Computed from the per-operation HdrHistograms in a result document, so the
same function serves the native workload, the redis-benchmark wrapper and stored documents."""

from __future__ import annotations

from typing import Any

from benchwright.results import ResultDocument
from benchwright.runner.measure import decode_histogram

BUCKETS_MS = (1, 5, 50, 100, 300, 500)


def buckets_from_histogram(encoded: str) -> dict[str, float]:
    """``{"1": share, "5": share, ..., "max_ms": max}`` with shares in 0..1 (values <= the bound)."""
    hist = decode_histogram(encoded)
    total = hist.get_total_count()
    within = dict.fromkeys(BUCKETS_MS, 0)
    for item in hist.get_recorded_iterator():
        value_us = item.value_iterated_to
        for bound in BUCKETS_MS:
            if value_us <= bound * 1000:
                within[bound] += item.count_at_value_iterated_to
    out: dict[str, float] = {str(b): round(n / total, 6) if total else 0.0 for b, n in within.items()}
    out["max_ms"] = round(hist.get_max_value() / 1000, 3)
    return out


def latency_buckets(doc: ResultDocument) -> dict[str, dict[str, float]]:
    """Buckets per operation (SET, GET ...) of every operation that carries a histogram."""
    return {
        name: buckets_from_histogram(summary.histogram)
        for name, summary in doc.succeeded().items()
        if summary.histogram and summary.operations
    }


def format_buckets(buckets: dict[str, dict[str, Any]]) -> str:
    """A small table: one row per operation, the columns experiment 4 reports."""
    head = f"{'test':<12}" + "".join(f"{'<=' + str(b) + 'ms':>10}" for b in BUCKETS_MS) + f"{'max ms':>10}"
    rows = [head]
    for name, b in buckets.items():
        cells = "".join(f"{100 * float(b[str(x)]):>9.2f}%" for x in BUCKETS_MS)
        rows.append(f"{name:<12}{cells}{float(b['max_ms']):>10.3f}")
    return "\n".join(rows)
