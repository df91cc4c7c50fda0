"""Merge the result documents of N fan-out runners into one per phase, exactly (the results layer:
any orchestrator's stages use it, local or cloud).

Histograms are added (HdrHistogram ``add``), so merged percentiles are those of all operations, not
an average of percentiles. Throughputs add (the runners ran over the same synchronised window);
interval samples add by index.
"""

from __future__ import annotations

from datetime import datetime

from benchwright.results import (
    FailureWindow,
    IntervalSample,
    OperationSummary,
    ResultDocument,
    ServerStats,
    StatGroup,
)
from benchwright.runner.measure import decode_histogram, encode_histogram, new_histogram


def _merge_operation(parts: list[OperationSummary]) -> OperationSummary:
    total = sum(p.operations for p in parts)
    statuses: dict[str, int] = {}
    for p in parts:
        for k, v in p.statuses.items():
            statuses[k] = statuses.get(k, 0) + v
    encoded = [p.histogram for p in parts if p.histogram]
    if len(encoded) == len(parts) and encoded:
        hist = new_histogram()
        for e in encoded:
            hist.add(decode_histogram(e))
        pct = {q: float(hist.get_value_at_percentile(q)) for q in (50, 90, 95, 99, 99.9)}
        return OperationSummary(
            operations=total,
            statuses=statuses,
            throughput=sum(p.throughput for p in parts),
            average_us=float(hist.get_mean_value()),
            min_us=float(hist.get_min_value()),
            max_us=float(hist.get_max_value()),
            stddev_us=float(hist.get_stddev()),
            p50_us=pct[50],
            p90_us=pct[90],
            p95_us=pct[95],
            p99_us=pct[99],
            p999_us=pct[99.9],
            histogram=encode_histogram(hist),
        )
    # Without histograms (some native tools) the best we can do is weight by operations and say so.
    weight = [p.operations / total if total else 1 / len(parts) for p in parts]
    return OperationSummary(
        operations=total,
        statuses=statuses,
        throughput=sum(p.throughput for p in parts),
        average_us=sum(w * p.average_us for w, p in zip(weight, parts, strict=True)),
        min_us=min(p.min_us for p in parts),
        max_us=max(p.max_us for p in parts),
        p50_us=max(p.p50_us for p in parts),
        p90_us=max(p.p90_us for p in parts),
        p95_us=max(p.p95_us for p in parts),
        p99_us=max(p.p99_us for p in parts),
        p999_us=max(p.p999_us for p in parts),
    )


def _merge_intervals(series: list[list[IntervalSample]]) -> list[IntervalSample]:
    merged: list[IntervalSample] = []
    for i in range(max((len(s) for s in series), default=0)):
        parts = [s[i] for s in series if i < len(s)]
        ops: dict[str, int] = {}
        for p in parts:
            for k, v in p.operations.items():
                ops[k] = ops.get(k, 0) + v
        merged.append(
            IntervalSample(
                t=max(p.t for p in parts),
                operations=ops,
                errors=sum(p.errors for p in parts),
                throughput=sum(p.throughput for p in parts),
                p50_us=max(p.p50_us for p in parts),  # upper bound: exact merging needs histograms
                p99_us=max(p.p99_us for p in parts),
                max_us=max(p.max_us for p in parts),
            )
        )
    return merged


def merge_server_stats(stats: list[ServerStats]) -> ServerStats | None:
    """Several runners snapshot the same server: the earliest "before" and the latest "after" cover
    every runner's phase (counters are server-wide, so the deltas are the whole cell's)."""
    if len(stats) <= 1:
        return stats[0] if stats else None
    first = min(stats, key=lambda s: s.before_at)
    last = max(stats, key=lambda s: s.after_at)
    groups = {
        name: StatGroup(
            before=first.groups[name].before if name in first.groups else group.before,
            after=group.after,
            delta={
                k: round(
                    v - (first.groups[name].before if name in first.groups else group.before).get(k, 0.0), 6
                )
                for k, v in group.after.items()
            },
        )
        for name, group in last.groups.items()
    }
    return last.model_copy(
        update={
            "before_at": first.before_at,
            "groups": groups,
            "notes": sorted({n for s in stats for n in s.notes}),
            "top_statements": last.top_statements if first is last else [],
        }
    )


def _merge_windows(docs: list[ResultDocument], started: datetime) -> list[FailureWindow]:
    """Every runner's failure windows on the merged clock; client numbers made distinct."""
    out: list[FailureWindow] = []
    offset_clients = 0
    for d in docs:
        shift = (d.started_at - started).total_seconds()
        for w in d.failure_windows:
            out.append(
                w.model_copy(
                    update={
                        "client": w.client + offset_clients,
                        "start_s": round(w.start_s + shift, 6),
                        "end_s": None if w.end_s is None else round(w.end_s + shift, 6),
                    }
                )
            )
        offset_clients += d.measurement.threads
    return sorted(out, key=lambda w: w.start_s)


def merge_documents(docs: list[ResultDocument]) -> ResultDocument:
    """One document for one phase measured by several runners."""
    if len(docs) == 1:
        return docs[0]
    first = docs[0]
    names = sorted({name for d in docs for name in d.operations})
    operations = {n: _merge_operation([d.operations[n] for d in docs if n in d.operations]) for n in names}
    started = min(d.started_at for d in docs)
    ended = max(d.ended_at for d in docs)
    merged = first.model_copy(
        update={
            "started_at": started,
            "ended_at": ended,
            "runtime_ms": (ended - started).total_seconds() * 1000,
            "operations_total": sum(d.operations_total for d in docs),
            "throughput": sum(d.throughput for d in docs),
            "failed_total": sum(d.failed_total for d in docs),
            "operations": operations,
            "intervals": _merge_intervals([d.intervals for d in docs]),
            "endpoints": sorted({e for d in docs for e in d.endpoints}),
            "measurement": first.measurement.model_copy(
                update={
                    "processes": sum(d.measurement.processes for d in docs),
                    "threads": sum(d.measurement.threads for d in docs),
                }
            ),
            "validity": [f for d in docs for f in d.validity],
            "aborted": any(d.aborted for d in docs),
            "extra": {**first.extra, "runners": len(docs)},
            "server_stats": merge_server_stats([d.server_stats for d in docs if d.server_stats]),
            "failure_windows": _merge_windows(docs, started),
        }
    )
    merged.validity = []
    for d in docs:
        for f in d.validity:
            if f.code not in _RECOUNTED:
                merged.flag(f.code, f.severity, f.message)
    merged.flag_errors()  # the error rate of all runners together, not the first runner's
    return merged


_RECOUNTED = frozenset({"error_rate", "no_operations"})  # judged again on the merged counts


def merge_runner_results(per_runner: list[list[ResultDocument]]) -> list[ResultDocument]:
    """Group by phase (in the order the first runner ran them) and merge each group."""
    order: list[str] = []
    groups: dict[str, list[ResultDocument]] = {}
    for docs in per_runner:
        for doc in docs:
            if doc.phase not in groups:
                order.append(doc.phase)
                groups[doc.phase] = []
            groups[doc.phase].append(doc)
    return [merge_documents(groups[phase]) for phase in order]
