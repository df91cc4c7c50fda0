"""Scale-out: N worker processes against one process, while the server is not the limit (issue 12).

    .venv/bin/python benchmarks/bench_scaleout.py [--processes 1,2,4] [--clients 4] [--seconds 4]

Two servers that cannot be what limits the run, so that what is measured is the runner:
- the delay server (delay_server.py, 127.0.0.1, every GET answered after --delay-ms): each
  connection is latency-bound, so N processes of --clients connections each should give N times one
  process's throughput for as long as the client host has CPU to spare;
- the null driver (no server at all): each process is CPU-bound, so throughput grows with N only up
  to the cores the host gives the runner; beyond that the result must say the runner limited the run
  (``client.saturated``, the ``client_saturated`` flag), which this script prints beside each figure.
Prints throughput, N-times efficiency (throughput(N) / (N x throughput(1))) and the saturation
flag for each N, with the load average: on a shared host the null driver's figures follow the free
cores, not the runner.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import summary
from bench_fidelity import start_server

ROOT = Path(__file__).resolve().parents[1]
HERE = Path(__file__).resolve().parent


def run(engine: str, props: dict[str, str], processes: int, threads: int, seconds: float) -> dict[str, Any]:
    """`benchwright ycsb run ENGINE -P workloadc` for ``seconds``: its result document."""
    props = {**props, "operationcount": "0", "maxexecutiontime": f"{seconds:g}", "recordcount": "20000"}
    props |= {"requestdistribution": "uniform", "fieldcount": "1"}
    args = [a for k, v in props.items() for a in ("-p", f"{k}={v}")]
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "r.json"
        subprocess.run(
            [
                *(sys.executable, "-m", "benchwright.cli", "ycsb", "run", engine, "-P", "workloadc"),
                *args,
                *("-threads", str(threads), "--processes", str(processes), "--json", str(out)),
            ],
            cwd=ROOT,
            capture_output=True,
            check=True,
        )
        doc: dict[str, Any] = json.loads(out.read_text())
    return doc


def series(name: str, engine: str, props: dict[str, str], args: argparse.Namespace) -> None:
    base = 0.0
    for n in (int(p) for p in args.processes.split(",")):
        doc = run(engine, props, n, n * args.clients, args.seconds)
        client = doc["client"]
        throughput = float(doc["throughput"])
        base = base or throughput / n
        efficiency = throughput / (n * base)
        model = summary.client_model(doc["measurement"]["method"])
        print(
            f"  {name:<22} {n} process(es) x {args.clients} clients ({model}): {throughput:9.0f} ops/s, "
            f"{efficiency:5.2f} of {n}x one process | busiest process {client['max_process_cpu_share']:.0%} "
            f"of a core + {client.get('max_process_cpu_wait_share', 0):.0%} waiting, timer lag p99 "
            f"{client['schedule_lag_p99_ms']:.0f} ms, saturated={client['saturated']} | load {os.getloadavg()[0]:.1f}",
            flush=True,
        )
        if n > 1:
            summary.note(f"scale-out, {name}, {n} processes vs {n}x one process", round(efficiency, 3), "x")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--processes", default="1,2,4", help="process counts, the first one the baseline")
    p.add_argument("--clients", type=int, default=4, help="connections (threads) per process")
    p.add_argument("--seconds", type=float, default=4.0)
    p.add_argument(
        "--delay-ms",
        type=float,
        default=10.0,
        help="long enough that the delay server's own CPU is not the limit",
    )
    args = p.parse_args()
    print(
        f"scale-out: YCSB C, {args.clients} clients per process, {args.seconds:g} s runs, {os.cpu_count()} cores"
    )
    proc, port = start_server(args.delay_ms, str(HERE / "delay_server.py"))
    try:
        series(
            f"delay server {args.delay_ms:g} ms",
            "redis",
            {"redis.port": str(port), "redis.datatype": "string"},
            args,
        )
    finally:
        proc.kill()
        proc.wait()
    series("null driver", "null", {}, args)


if __name__ == "__main__":
    main()
