"""Fidelity: YCSB's latencies against redis-benchmark's, on a server with a known delay (issue 12).

    .venv/bin/python benchmarks/bench_fidelity.py [--delay-ms 2] [--clients 4] [--requests 4000]
        [--rounds 4] [--rates 0.5,1.25]

A RESP server of this script's own (delay_server.py, 127.0.0.1, a free port) answers every GET
--delay-ms after it arrived. redis-benchmark (-t get) and `benchwright ycsb run redis` (workload C,
string datatype, the event loop) each send --requests GETs from --clients connections; both
measure from sending a request to reading its reply. Prints each side's average and p99, what the
server says it served each side (DELAYSTATS), and the ratio of the medians over alternating rounds
(target: within 5%). Then, for each of --rates (fractions of the server's capacity, clients /
delay), YCSB C with -target against the schedule's arithmetic for latency from the intended start
(``paced``). On a loaded host a client that is descheduled while its replies wait adds that wait to
its latencies: read the ratios with the load printed beside each round (or run the whole script
under `chrt -f 10`, which shields server and both clients alike from other work).
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from statistics import median
from typing import Any

import summary

ROOT = Path(__file__).resolve().parents[1]
HERE = Path(__file__).resolve().parent
TARGET = 0.05  # the "averages and p99 within 5% of redis-benchmark's"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_server(delay_ms: float, script: str) -> tuple[subprocess.Popen[bytes], int]:
    port = free_port()
    proc = subprocess.Popen([sys.executable, script, str(port), str(delay_ms)])
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return proc, port
        except OSError:
            time.sleep(0.05)  # readiness probe of the server this script just started
    proc.kill()
    raise SystemExit("the delay server did not start")


def tool(port: int, clients: int, requests: int) -> tuple[float, float]:
    """redis-benchmark's GET average and p99, in microseconds (its CSV prints milliseconds)."""
    out = subprocess.run(
        [
            *("redis-benchmark", "-h", "127.0.0.1", "-p", str(port), "-t", "get", "-c", str(clients)),
            *("-n", str(requests), "-r", "20000", "-d", "100", "--csv"),
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    header, row = None, None
    for line in out.splitlines():
        cells = [c.strip('"') for c in line.split('","')]
        if cells[0] == "test":
            header = cells
        elif cells[0] == "GET":
            row = cells
    if not header or not row:
        raise SystemExit(f"redis-benchmark printed no GET row: {out[-300:]}")
    fields = dict(zip(header, row, strict=True))
    return float(fields["avg_latency_ms"]) * 1000, float(fields["p99_latency_ms"]) * 1000


def served(port: int) -> tuple[float, float] | None:
    """The average and p99 (us) the delay server actually served since the last call, or None from
    a server without DELAYSTATS."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.sendall(b"*1\r\n$10\r\nDELAYSTATS\r\n")
        reply = s.recv(4096).decode()
    if not reply.startswith("$"):
        return None
    _, avg, p99, _ = reply.split("\r\n")[1].split()
    return float(avg), float(p99)


def ycsb(port: int, clients: int, requests: int, target: float | None = None) -> dict[str, Any]:
    """`benchwright ycsb run redis -P workloadc` against the delay server: its result document."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "r.json"
        props = {"redis.port": str(port), "redis.datatype": "string", "fieldcount": "1"}
        props |= {"recordcount": "20000", "requestdistribution": "uniform", "operationcount": str(requests)}
        args = [a for k, v in props.items() for a in ("-p", f"{k}={v}")]
        subprocess.run(
            [
                *(sys.executable, "-m", "benchwright.cli", "ycsb", "run", "redis", "-P", "workloadc"),
                *args,
                *("-threads", str(clients), "--json", str(out)),
                *(("-target", f"{target:g}") if target else ()),
            ],
            cwd=ROOT,
            capture_output=True,
            check=True,
        )
        doc: dict[str, Any] = json.loads(out.read_text())
    return doc


def ours(port: int, clients: int, requests: int) -> tuple[float, float, str]:
    """YCSB workload C's READ average and p99 (us), and the client model that ran."""
    doc = ycsb(port, clients, requests)
    read = doc["operations"]["READ"]
    model = summary.client_model(doc["measurement"]["method"])
    return read["average_us"], read["p99_us"], model


def paced(port: int, clients: int, requests: int, delay_ms: float, fraction: float) -> None:
    """Intended-time latency at ``fraction`` of the server's capacity (``clients`` / delay), against
    what the schedule's arithmetic says it must be. Each client is due to send every ``pace`` =
    clients / target seconds; ``s`` is the mean service time and ``c`` the mean time between one
    client's sends (run time / requests per client), both measured in the same run, ``n`` the
    requests per client. Below capacity (c = pace) nothing waits, so the latency from the intended
    start is the service time. Above it the k-th request starts k * (c - pace) late, so the average
    is s + (n - 1) / 2 * (c - pace) and the p99 s + 0.99 * (n - 1) * (c - pace). A recorder that
    timed from the actual send would read s; one that lost part of the lag, less than the formula."""
    from benchwright.runner.measure import decode_histogram

    target = fraction * clients / (delay_ms / 1000)
    doc = ycsb(port, clients, requests, target)
    read = doc["operations"]["READ"]
    service = decode_histogram(read["service_time_histogram"])
    s_avg, s_p99 = service.get_mean_value(), float(service.get_value_at_percentile(99))
    pace_us = clients / target * 1e6
    n = requests / clients
    cycle_us = doc["runtime_ms"] * 1000 / n
    late = cycle_us - pace_us if s_avg > pace_us else 0.0
    expected = (s_avg + (n - 1) / 2 * late, s_p99 if not late else s_avg + 0.99 * (n - 1) * late)
    measured = (read["average_us"], read["p99_us"])
    ratios = [m / e for m, e in zip(measured, expected, strict=True)]
    print(
        f"  target {target:7.0f}/s ({fraction:g}x capacity, {doc['measurement']['latency']}): "
        f"avg {measured[0]:9.1f} us (expected {expected[0]:9.1f}), p99 {measured[1]:9.1f} us "
        f"(expected {expected[1]:9.1f}); service avg {s_avg:.1f} us, cycle {cycle_us:.1f} us | "
        f"load {os.getloadavg()[0]:.1f}",
        flush=True,
    )
    for name, ratio in zip(("average", "p99"), ratios, strict=True):
        verdict = "within" if abs(ratio - 1) <= TARGET else "OUTSIDE"
        print(f"    intended-time {name:<8} measured / expected {ratio:.3f}  ({verdict} {TARGET:.0%})")
        summary.note(
            f"fidelity, intended-time {name} at {fraction:g}x capacity vs arithmetic", round(ratio, 3), "x"
        )


def compare(port: int, args: argparse.Namespace) -> None:
    """Alternating rounds of redis-benchmark and ours (the order flips each round); the medians'
    ratios."""
    mine: list[tuple[float, float]] = []
    theirs: list[tuple[float, float]] = []
    for r in range(args.rounds):
        # the order flips every round (as summary.alternated's), so neither side always runs second
        first_tool = r % 2 == 0
        served(port)  # resets the server's counts: what follows is this round's
        if first_tool:
            theirs.append(tool(port, args.clients, args.requests))
            theirs_served = served(port)
        avg, p99, model = ours(port, args.clients, args.requests)
        ours_served = served(port)
        if not first_tool:
            theirs.append(tool(port, args.clients, args.requests))
            theirs_served = served(port)
        mine.append((avg, p99))
        print(
            f"  round {r + 1} ({'redis-benchmark' if first_tool else 'ours'} first): benchwright ycsb C ({model})"
            f" avg {avg:8.1f} p99 {p99:8.1f} us | redis-benchmark avg {theirs[-1][0]:8.1f} p99 {theirs[-1][1]:8.1f}"
            f" us | load {os.getloadavg()[0]:.1f}",
            flush=True,
        )
        if theirs_served and ours_served:  # what each client added to what it was served
            print(
                f"           served avg/p99: redis-benchmark {theirs_served[0]:7.1f}/{theirs_served[1]:7.1f} us, "
                f"ours {ours_served[0]:7.1f}/{ours_served[1]:7.1f} us | client's own share of the average: "
                f"redis-benchmark {theirs[-1][0] - theirs_served[0]:+6.1f} us, ours {avg - ours_served[0]:+6.1f} us"
            )
    for i, name in enumerate(("average", "p99")):
        ratio = median([m[i] for m in mine]) / median([t[i] for t in theirs])
        verdict = "within" if abs(ratio - 1) <= TARGET else "OUTSIDE"
        print(f"  median {name:<8} ours / redis-benchmark {ratio:.3f}  ({verdict} {TARGET:.0%})")
        label = f"fidelity, median {name} latency vs redis-benchmark ({args.delay_ms:g} ms server)"
        summary.note(label, round(ratio, 3), "x")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--delay-ms", type=float, default=2.0)
    p.add_argument("--clients", type=int, default=4)
    p.add_argument("--requests", type=int, default=4000)
    p.add_argument(
        "--rounds",
        type=int,
        default=4,
        help="alternating runs of each side (the order flips each round); medians compared",
    )
    p.add_argument(
        "--rates",
        default="0.5,1.25",
        help="target rates as fractions of the server's capacity (clients / delay) for the "
        "intended-time check; empty: skip it",
    )
    p.add_argument("--server", default=str(HERE / "delay_server.py"), help=argparse.SUPPRESS)
    args = p.parse_args()
    proc, port = start_server(args.delay_ms, args.server)
    print(
        f"fidelity: GET against a server answering after {args.delay_ms:g} ms, {args.clients} clients, "
        f"{args.requests} requests a run, {args.rounds} alternating rounds, {os.cpu_count()} cores"
    )
    try:
        compare(port, args)
        for fraction in (float(f) for f in args.rates.split(",") if f.strip()):
            paced(port, args.clients, args.requests, args.delay_ms, fraction)
    finally:
        proc.kill()
        proc.wait()


if __name__ == "__main__":
    main()
