"""How a phase's worker processes start, where forking is unsafe: spawn against forkserver.

    .venv/bin/python benchmarks/bench_worker_start.py [--phases 10] [--processes 2] [--rounds 2]

A thread is kept running, as pytest-xdist's I/O thread or a service embedding the runner would, so
``start_method()`` may not fork. Each round runs --phases short YCSB C phases on the null driver
(no server: what is timed is the phase's fixed cost) with --processes workers, once with spawn and
once with forkserver, alternating, and prints each side's wall seconds, the load average beside it
and the ratio spawn / forkserver.
"""

from __future__ import annotations

import argparse
import os
import threading
import time

from benchwright.runner.engine import PhaseConfig, run_phase
from benchwright.runner.workloads.ycsb.properties import load_properties


def phases(method: str, count: int, processes: int) -> float:
    """Wall seconds of ``count`` phases whose workers start by ``method``."""
    os.environ["BENCHWRIGHT_START_METHOD"] = method
    props = load_properties(["workloadc"], {"recordcount": "100", "operationcount": "200"})
    started = time.perf_counter()
    for _ in range(count):
        config = PhaseConfig(
            workload="ycsb", phase="run", engine="null", properties=props, threads=2, processes=processes
        )
        doc = run_phase(config)
        assert doc.operations_total == 200 and doc.failed_total == 0, "a phase must do all its work"
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--phases", type=int, default=10)
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    other = threading.Event()
    threading.Thread(target=other.wait, daemon=True).start()  # forking is now unsafe
    for round_no in range(1, args.rounds + 1):
        spawn = phases("spawn", args.phases, args.processes)
        forkserver = phases("forkserver", args.phases, args.processes)
        load = os.getloadavg()[0]
        print(
            f"round {round_no}: {args.phases} phases x {args.processes} workers: spawn {spawn:.1f} s, "
            f"forkserver {forkserver:.1f} s, ratio {spawn / forkserver:.1f} (load {load:.1f})"
        )
    other.set()


if __name__ == "__main__":
    main()
