"""Native redis-bench vs redis-benchmark (the C tool): GET and SET, without and with pipelining.

Same server (a private redis-server started here on a free loopback port, or $BENCH_REDIS_HOST/PORT),
same clients, same requests, same value size, in alternated repetitions (``summary.alternated``;
BENCH_REPETITIONS, default 5). Prints per repetition and test the throughput ratio (native / tool;
target >= 0.9) and the client CPU per request ratio (native / tool; target <= 1.5), then their
medians. Client CPU is user+sys of the client processes divided by requests: for the native runner the
worker processes' own CPU (os.times in each worker), for the tool its rusage from os.wait4.

    .venv/bin/python benchmarks/bench_redis.py [--requests 50000] [--pipelined-requests 2000000] [--clients 50]
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

import summary

from benchwright.results import ResultDocument
from benchwright.runner.workloads.external import redis_benchmark
from benchwright.runner.workloads.redisbench.sequential import RedisBenchSettings, run_redis_bench


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_server(tmp: str) -> tuple[subprocess.Popen[bytes], int]:
    binary = shutil.which("redis-server")
    if not binary:
        sys.exit("redis-server not found: scripts/local-servers install")
    port = free_port()
    proc = subprocess.Popen(
        [
            binary,
            "--bind",
            "127.0.0.1",
            "--port",
            str(port),
            "--dir",
            tmp,
            "--save",
            "",
            "--appendonly",
            "no",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return proc, port
        except OSError:
            time.sleep(0.05)  # readiness probe of a server we just started
    proc.kill()
    sys.exit("redis-server did not start")


def cpu_per_request(doc: ResultDocument) -> float:
    return (doc.client.cpu_user_s + doc.client.cpu_system_s) * 1e6 / max(1, doc.operations_total)


def compare(settings: RedisBenchSettings, conn: dict[str, str]) -> list[str]:
    """Alternated repetitions of both sides (``summary.alternated``): each repetition's figures, then
    per test the medians of the repetitions' ratios."""
    natives, tools = summary.alternated(
        lambda: run_redis_bench(settings, "redis", conn), lambda: redis_benchmark.run(settings, conn)
    )
    rows = []
    p = f"P={settings.pipeline:<3}"
    for i, (native, tool) in enumerate(zip(natives, tools, strict=True), 1):
        for name in ("SET", "GET"):
            n, t = native.operations[name], tool.operations[name]
            rows.append(
                f"{p} {i}. {name:<4} native {n.throughput:>11,.0f} req/s  redis-benchmark "
                f"{t.throughput:>11,.0f} req/s  throughput ratio {n.throughput / t.throughput:5.2f}  "
                f"p50 {n.p50_us / 1000:.3f} vs {t.p50_us / 1000:.3f} ms"
            )
        cpu_native, cpu_tool = cpu_per_request(native), cpu_per_request(tool)
        rows.append(
            f"{p} {i}. CPU  native {cpu_native:8.2f} us/req   redis-benchmark {cpu_tool:8.2f} us/req   "
            f"CPU-per-request ratio {cpu_native / cpu_tool:5.2f}"
            + ("   [native client saturated]" if native.client.saturated else "")
        )
    model = summary.client_model(natives[0].measurement.method)
    for name in ("SET", "GET"):
        tput, cpu = (
            summary.record_pairs(  # CPU per request over both tests of the phase (the document's figure)
                f"redis-bench {name} P={settings.pipeline} vs redis-benchmark",
                [(d.operations[name].throughput, cpu_per_request(d)) for d in natives],
                [(d.operations[name].throughput, cpu_per_request(d)) for d in tools],
                model,
            )
        )
        rows.append(
            f"{p} {name:<4} medians of {len(natives)} repetitions: throughput ratio {tput:.2f}, CPU ratio {cpu:.2f}"
        )
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--requests", type=int, default=50_000, help="requests per test without pipelining")
    # 2 million: at over a million requests a second, 400,000 ran 0.3-0.5 s per test, and the
    # first and last milliseconds (connections ramping up and draining) moved the ratio by 0.4
    ap.add_argument("--pipelined-requests", type=int, default=2_000_000, help="requests per test with -P 16")
    ap.add_argument("--clients", type=int, default=50)
    ap.add_argument("--datasize", type=int, default=100)
    ap.add_argument("--keyspace", type=int, default=100_000)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="bw-bench-redis-") as tmp:
        proc = None
        if os.environ.get("BENCH_REDIS_PORT"):
            conn = {
                "redis.host": os.environ.get("BENCH_REDIS_HOST", "127.0.0.1"),
                "redis.port": os.environ["BENCH_REDIS_PORT"],
            }
        else:
            proc, port = start_server(tmp)
            conn = {"redis.host": "127.0.0.1", "redis.port": str(port)}
        try:
            print(
                f"redis-bench vs redis-benchmark: {args.clients} clients, {args.datasize} B values, "
                f"-r {args.keyspace}, {os.cpu_count()} CPUs on this host (client and server share them)"
            )
            for pipeline, requests in ((1, args.requests), (16, args.pipelined_requests)):
                settings = RedisBenchSettings(
                    tests="set,get",
                    datasize=args.datasize,
                    keyspace=args.keyspace,
                    requests=requests,
                    clients=args.clients,
                    pipeline=pipeline,
                )
                for row in compare(settings, conn):
                    print(row, flush=True)
        finally:
            if proc is not None:
                proc.kill()
                proc.wait()


if __name__ == "__main__":
    main()
