"""Synthetic runs whose answers are known: for tests, demos (``benchwright report --demo``) and the
store benchmark. Every number is derived from a seeded generator, so the same call gives the same run.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from benchwright.results import (
    ClientStats,
    IntervalSample,
    Measurement,
    MetricPoint,
    MetricSeries,
    OperationSummary,
    ResultDocument,
    failed_name,
    is_failed,
)
from benchwright.runs import CellResult, RunRecord

EPOCH = datetime(2026, 1, 1, tzinfo=UTC)


def noisy_series(level: float, seconds: int, noise: float = 0.03, seed: int = 0) -> list[float]:
    """``seconds`` values around ``level`` with relative Gaussian noise."""
    rng = random.Random(seed)
    return [max(0.0, level * (1.0 + rng.gauss(0.0, noise))) for _ in range(seconds)]


def step_series(
    before: float, after: float, at: int, seconds: int, noise: float = 0.03, seed: int = 0
) -> list[float]:
    """A level that drops (or rises) from ``before`` to ``after`` at second ``at``: a drained bucket."""
    rng = random.Random(seed)
    return [max(0.0, (before if i < at else after) * (1.0 + rng.gauss(0.0, noise))) for i in range(seconds)]


def make_document(
    throughput: Sequence[float],
    *,
    operations: dict[str, float] | None = None,
    latency_us: float = 800.0,
    phase: str = "run",
    engine: str = "postgres",
    workload: str = "ycsb",
    started_at: datetime = EPOCH,
    errors: int = 0,
    saturated: bool = False,
    metrics: Sequence[MetricSeries] = (),
    seed: int = 0,
) -> ResultDocument:
    """A phase document whose interval series is ``throughput`` (one value per second). ``errors`` of
    the operations failed: each type's share of them is its own ``-FAILED`` entry, as the runner
    records failures, and the totals and throughputs count the successes only."""
    rng = random.Random(seed)
    mix = operations or {"READ": 0.5, "UPDATE": 0.5}
    seconds = len(throughput)
    total = int(sum(throughput))
    intervals = []
    for i, tps in enumerate(throughput):
        # latency rises when throughput falls (Little's law at a fixed concurrency)
        base = latency_us * (max(throughput) / max(tps, 1.0)) ** 0.5 if throughput else latency_us
        intervals.append(
            IntervalSample(
                t=float(i + 1),
                operations={op: int(tps * share) for op, share in mix.items()},
                errors=0,
                throughput=tps,
                average_us={op: base * (1.1 if op != "READ" else 1.0) for op in mix},
                p50_us=base * 0.9,
                p99_us=base * (2.5 + 0.3 * rng.random()),
                max_us=base * 6,
            )
        )
    summaries = {}
    for op, share in mix.items():
        ops = int(total * share)
        failed = int(errors * share)
        factor = 1.1 if op != "READ" else 1.0
        if failed:
            summaries[failed_name(op)] = OperationSummary(
                operations=failed,
                statuses={"ERROR": failed},
                throughput=failed / max(seconds, 1),
                average_us=0.0,
                min_us=0.0,
                max_us=0.0,
                p50_us=0.0,
                p90_us=0.0,
                p95_us=0.0,
                p99_us=0.0,
                p999_us=0.0,
            )
        summaries[op] = OperationSummary(
            operations=ops - failed,
            statuses={"OK": ops - failed},
            throughput=(ops - failed) / max(seconds, 1),
            average_us=latency_us * factor,
            min_us=latency_us * 0.2,
            max_us=latency_us * 9,
            p50_us=latency_us * 0.9 * factor,
            p90_us=latency_us * 1.6 * factor,
            p95_us=latency_us * 2.0 * factor,
            p99_us=latency_us * 2.8 * factor,
            p999_us=latency_us * 5 * factor,
        )
    return ResultDocument(
        workload=workload,
        phase=phase,
        engine=engine,
        endpoints=["127.0.0.1:15432"],
        properties={"recordcount": "1000", "postgres.url": "postgresql://bench:***@127.0.0.1:15432/bench"},
        measurement=Measurement(latency="service_time", method="synthetic", threads=8),
        started_at=started_at,
        ended_at=started_at + timedelta(seconds=seconds),
        runtime_ms=seconds * 1000.0,
        operations_total=sum(s.operations for op, s in summaries.items() if not is_failed(op)),
        throughput=sum(s.operations for op, s in summaries.items() if not is_failed(op)) / max(seconds, 1),
        failed_total=sum(s.operations for op, s in summaries.items() if is_failed(op)),
        operations=dict(sorted(summaries.items())),
        intervals=intervals,
        metrics=list(metrics),
        client=ClientStats(saturated=saturated, max_process_cpu_share=0.95 if saturated else 0.3),
    )


def host_metrics(seconds: int, cpu: float = 60.0, iops: float = 900.0, seed: int = 0) -> list[MetricSeries]:
    """CPUUtilization / ReadIOPS / WriteIOPS series named as the local /proc sampler (and CloudWatch) name them."""
    rng = random.Random(seed)

    def series(name: str, unit: str, level: float) -> MetricSeries:
        points = [
            MetricPoint(t=float(i + 1), value=max(0.0, level * (1 + rng.gauss(0, 0.05))))
            for i in range(seconds)
        ]
        return MetricSeries(name=name, unit=unit, source="proc:host", points=points)

    return [
        series("CPUUtilization", "Percent", cpu),
        series("ReadIOPS", "Count/Second", iops),
        series("WriteIOPS", "Count/Second", iops / 2),
    ]


def make_run(
    spec_name: str = "demo",
    run_id: str = "run-0001",
    cells: Sequence[tuple[str, dict[str, Any], Sequence[float]]] = (),
    *,
    repeats: int = 1,
    started_at: datetime = EPOCH,
    status: str = "succeeded",
    with_metrics: bool = True,
    seed: int = 0,
) -> RunRecord:
    """A run of ``cells`` (id, matrix parameters, throughput series); each repeat reseeds the noise.

    Repeat ``r`` of a cell scales the series by a small seeded factor, like run-to-run variation.
    """
    rng = random.Random(seed)
    results = []
    for cell_id, params, series in cells:
        for r in range(repeats):
            factor = 1.0 + rng.gauss(0.0, 0.01) if repeats > 1 else 1.0
            scaled = [v * factor for v in series]
            load = make_document([max(series) * 0.8] * 5, operations={"INSERT": 1.0}, phase="load", seed=seed)
            run = make_document(scaled, started_at=started_at, seed=seed + r, metrics=())
            metrics = host_metrics(len(series), seed=seed + r) if with_metrics else []
            results.append(CellResult(cell_id=cell_id, parameters=dict(params), repeat=r,
                                      phases={"load": load, "run": run}, metrics=metrics))  # fmt: skip
    return RunRecord(
        run_id=run_id,
        spec_name=spec_name,
        spec={"name": spec_name, "target": {"engine": "postgres", "provider": "local"}, "repeats": repeats},
        status=status,  # type: ignore[arg-type]
        started_at=started_at,
        ended_at=started_at + timedelta(seconds=max((len(c[2]) for c in cells), default=0) + 5),
        cells=results,
        environment={"host": "test-host", "cpus": 2, "benchwright": "0.1.0"},
    )


def sweep_run(
    spec_name: str = "sweep", run_id: str = "sweep-0001", seconds: int = 30, seed: int = 0
) -> RunRecord:
    """A concurrency sweep (1, 4, 16, 64 clients) whose throughput saturates, like experiment 3."""
    cells = []
    for i, clients in enumerate((1, 4, 16, 64)):
        level = 3000.0 * clients / (1 + clients / 12)
        cells.append(
            (f"clients={clients}", {"clients": clients}, noisy_series(level, seconds, seed=seed + i))
        )
    return make_run(spec_name, run_id, cells, seed=seed)
