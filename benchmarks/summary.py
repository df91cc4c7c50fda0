"""The ratios every benchmark script measures, gathered for `make bench`'s closing table.

A script calls ``record`` for each pair it ran side by side; when ``BENCH_SUMMARY`` names a file
(run_all.py sets it) the figures are appended to it as JSON lines and run_all.py prints them all at
the end, against the targets of issue 12 (client CPU per operation <= 1.5x the C tool's, throughput
>= 0.9x). Ours is the steady-state CPU of the measured window (worker processes, os.times); the
tool's is its whole process (wait4), whose start-up is negligible.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

CPU_TARGET = 1.5
THROUGHPUT_TARGET = 0.9


def client_model(method: str) -> str:
    """The client model a result document's ``measurement.method`` names, short: "threads", "event
    loop", or "event loop, C" when the loop's compiled hot path ran (which the table must show: the
    figures of the two differ severalfold)."""
    if "event loop" not in method:
        return "threads"
    return "event loop, C" if "hot path in C" in method else "event loop"


def record(
    pair: str,
    ours_ops_s: float,
    tool_ops_s: float,
    ours_cpu_us: float,
    tool_cpu_us: float,
    model: str = "",
) -> None:
    """One side-by-side pair: throughputs (operations/s) and client CPU per operation (us)."""
    path = os.environ.get("BENCH_SUMMARY")
    if not path:
        return
    line = {
        "pair": pair,
        "model": model,
        "ours_ops_s": round(ours_ops_s, 1),
        "tool_ops_s": round(tool_ops_s, 1),
        "ours_cpu_us": round(ours_cpu_us, 2),
        "tool_cpu_us": round(tool_cpu_us, 2),
        "throughput_ratio": round(ours_ops_s / tool_ops_s, 3) if tool_ops_s else None,
        "cpu_ratio": round(ours_cpu_us / tool_cpu_us, 3) if tool_cpu_us else None,
    }
    with Path(path).open("a") as out:
        out.write(json.dumps(line) + "\n")


def note(name: str, value: float, unit: str) -> None:
    """A single figure (peak RSS) for the closing table."""
    path = os.environ.get("BENCH_SUMMARY")
    if path:
        with Path(path).open("a") as out:
            out.write(json.dumps({"figure": name, "value": value, "unit": unit}) + "\n")


def table(path: Path) -> list[str]:
    """The closing table: one line per pair, with the targets marked."""
    rows = (
        [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.exists() else []
    )
    out = [
        f"{'pair':<44} {'client':<13} {'ours/s':>10} {'tool/s':>10} {'tput':>6} "
        f"{'ours us':>8} {'tool us':>8} {'CPU':>6}"
    ]
    for r in rows:
        if "figure" in r:
            continue
        tput, cpu = r["throughput_ratio"], r["cpu_ratio"]
        mark = "" if (tput or 0) >= THROUGHPUT_TARGET and (cpu or 99) <= CPU_TARGET else "  <- off target"
        out.append(
            f"{r['pair']:<44} {r['model']:<13} {r['ours_ops_s']:>10,.0f} {r['tool_ops_s']:>10,.0f} "
            f"{tput:>5.2f}x {r['ours_cpu_us']:>8.2f} {r['tool_cpu_us']:>8.2f} {cpu:>5.2f}x{mark}"
        )
    for r in rows:
        if "figure" in r:
            out.append(f"{r['figure']}: {r['value']:g} {r['unit']}")
    return out
