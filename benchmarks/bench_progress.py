"""The engine's hot path with and without live period aggregates (null driver, no database).

    .venv/bin/python benchmarks/bench_progress.py [--seconds 4] [--rounds 3] [--threads 4]

First the hot path alone, in this process: ``engine._thread_loop`` + ``Recorder.record`` over 2
million no-op operations (closed loop, one thread), best of 7, in ns per operation; that figure is
what a change to the loop or the recorder moves, and taking the best run keeps a busy shared
machine's noise out of it. Then whole phases: pgbench's select-only script on the null driver with
4 threads in 2 worker processes, closed loop, in rounds: a plain run (no progress callback) and a run
with a PeriodProgress(1 s) collecting the per-period aggregates, alternated so the machine's noise
hits both alike; each round's ops/s and client CPU per operation, then the medians. Run it against
an older tree with ``PYTHONPATH=/path/to/old/src`` (the periodic run is skipped there) to compare.
"""

from __future__ import annotations

import argparse
import statistics
import threading
import time
from typing import Any

from benchwright.runner import engine
from benchwright.runner.engine import PhaseConfig, run_phase
from benchwright.runner.measure import Recorder, Status


def hot_path_ns(ops: int = 2_000_000, repeats: int = 7) -> float:
    """Best ns per operation of the thread loop and recorder around a call that does nothing."""

    def call() -> Status:
        return Status.OK

    best = float("inf")
    for _ in range(repeats):
        recorder = Recorder(time.perf_counter_ns(), "service_time")
        operations = iter([("select-only", call)] * ops)
        started = time.perf_counter_ns()
        engine._thread_loop(operations, recorder, lambda: None, ops, 1 << 62, 0, 0, threading.Event(), {})
        best = min(best, (time.perf_counter_ns() - started) / ops)
    return best


def one_run(seconds: float, threads: int, periodic: bool) -> tuple[float, float, int]:
    """(ops/s, client CPU us per op, periods received)."""
    received: list[Any] = []
    progress = engine.PeriodProgress(1.0, on_period=received.append) if periodic else None
    doc = run_phase(
        PhaseConfig(
            workload="tpcb",
            phase="run",
            engine="null",
            properties={"tpcb.scale": "1", "tpcb.script": "select-only"},
            threads=threads,
            processes=min(threads, 2),
            max_seconds=seconds,
            seed=1,
        ),
        progress,
    )
    return doc.throughput, doc.client.cpu_us_per_op, len(received)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=4.0)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=4)
    args = parser.parse_args()
    print(f"hot path (_thread_loop + Recorder.record, 1 thread, no-op call): {hot_path_ns():.0f} ns/op")
    kinds = ["plain"] + (["periodic"] if hasattr(engine, "PeriodProgress") else [])
    figures: dict[str, list[tuple[float, float]]] = {k: [] for k in kinds}
    for round_no in range(1, args.rounds + 1):
        for kind in kinds:
            tput, cpu, periods = one_run(args.seconds, args.threads, kind == "periodic")
            figures[kind].append((tput, cpu))
            extra = f", {periods} period(s)" if kind == "periodic" else ""
            print(f"round {round_no} {kind:8s}: {tput:10.0f} ops/s, {cpu:6.2f} us CPU/op{extra}", flush=True)
    for kind, rows in figures.items():
        print(
            f"median {kind:8s}: {statistics.median(r[0] for r in rows):10.0f} ops/s, "
            f"{statistics.median(r[1] for r in rows):6.2f} us CPU/op"
        )


if __name__ == "__main__":
    main()
