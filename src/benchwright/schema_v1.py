"""Reading a version 1 result document, which counted failed attempts inside their operation's entry
and in the throughput (results.py's ``ResultDocument.parse`` calls this; it sets the new version)."""

from __future__ import annotations

from typing import Any

from benchwright.failures import failed_name, is_failed


def from_version_1(raw: dict[str, Any]) -> dict[str, Any]:
    """A version 1 document counted failed operations inside their operation's entry and in the
    throughput. Read now, each failure count moves to its own -FAILED entry and the throughputs
    count successes only. The failures' latencies stayed mixed into the entry's histogram (version 1
    kept no separate one): the -FAILED entry has none, and an info flag says so."""
    raw = dict(raw)
    operations = {name: dict(entry) for name, entry in (raw.get("operations") or {}).items()}
    runtime_s = float(raw.get("runtime_ms") or 0.0) / 1000
    moved = failed_total = 0
    for name in list(operations):
        entry = operations[name]
        statuses = dict(entry.get("statuses") or {})
        unsuccessful = {k: int(statuses.pop(k)) for k in ("ERROR", "RETRY") if statuses.get(k)}
        errors = sum(unsuccessful.values())
        if not errors or is_failed(name):
            continue
        moved += errors
        failed_total += unsuccessful.get("ERROR", 0)
        count = int(entry.get("operations", 0))
        entry.update(statuses=statuses, operations=count - errors)
        entry["throughput"] = float(entry.get("throughput", 0.0)) * (count - errors) / count if count else 0.0
        operations[failed_name(name)] = {
            "operations": errors,
            "statuses": unsuccessful,
            "throughput": errors / runtime_s if runtime_s else 0.0,
            **dict.fromkeys(("average_us", "min_us", "max_us", "p50_us", "p90_us", "p95_us"), 0.0),
            **dict.fromkeys(("p99_us", "p999_us"), 0.0),
        }
    raw["operations"] = operations
    intervals = []
    for sample in raw.get("intervals") or []:
        sample = dict(sample)
        counted, errors = sum((sample.get("operations") or {}).values()), int(sample.get("errors", 0))
        if errors and counted:
            sample["throughput"] = float(sample.get("throughput", 0.0)) * max(0, counted - errors) / counted
        intervals.append(sample)
    raw["intervals"] = intervals
    if moved:
        total = int(raw.get("operations_total", 0))
        raw["operations_total"] = total - moved
        raw["failed_total"] = failed_total
        raw["throughput"] = float(raw.get("throughput", 0.0)) * (total - moved) / total if total else 0.0
        validity = list(raw.get("validity") or [])
        validity.append(
            {
                "code": "failures_mixed_v1",
                "severity": "info",
                "message": f"written by an older Benchwright: the {moved:,} "
                + ("failed operations'" if moved == failed_total else "failed or retried attempts'")
                + " latencies are mixed into their operation's percentiles (throughput here counts "
                "successes only)",
            }
        )
        raw["validity"] = validity
    return raw
