"""`make bench`: every benchmark script, one after another, against the local servers.

Each script prints its own figures and ratios against the peer tool it runs side by side.
Usage: .venv/bin/python benchmarks/run_all.py [NAME ...]   (NAME: ycsb, sql_workloads, redis, ...)
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import summary

HERE = Path(__file__).resolve().parent
# Order: the runner against the C tools first (issues #2, #3), then the service figures (#4, #5, #6).
ORDER = [
    "ycsb",
    "redis",
    "fidelity",  # YCSB's latencies vs redis-benchmark's on a server with a known delay (#12)
    "scaleout",  # N worker processes vs N x one process while the server is not the limit (#12)
    "worker_start",  # a phase's fixed cost where fork is unsafe: spawn vs forkserver (#28)
    "sql_workloads",
    "progress",
    "local_service",
    "store",
    "report",
    "workflow_cost",
    "ingest",
    "synth",
]


def main(names: list[str]) -> int:
    chosen = names or [n for n in ORDER if (HERE / f"bench_{n}.py").exists()]
    failed = []
    figures = Path(tempfile.mkstemp(prefix="bw-bench-", suffix=".jsonl")[1])
    env = {**os.environ, "BENCH_SUMMARY": str(figures)}
    load_before = os.getloadavg()
    for name in chosen:
        script = HERE / f"bench_{name}.py"
        print(f"\n===== {script.name} =====", flush=True)
        started = time.monotonic()
        code = subprocess.call([sys.executable, str(script)], cwd=HERE.parent, env=env)
        print(f"===== {script.name}: exit {code} after {time.monotonic() - started:.0f} s =====", flush=True)
        if code:
            failed.append(name)
    print(
        "\n===== ratios, ours / the C tool, side by side in this run (targets: throughput >= "
        f"{summary.THROUGHPUT_TARGET}x, client CPU per operation <= {summary.CPU_TARGET}x) ====="
    )
    for line in summary.table(figures):
        print(line)
    print(
        f"load average (1/5/15 min) before {' '.join(f'{x:.1f}' for x in load_before)}, "
        f"after {' '.join(f'{x:.1f}' for x in os.getloadavg())}; {os.cpu_count()} cores"
    )
    figures.unlink(missing_ok=True)
    if failed:
        print(f"\nfailed: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
