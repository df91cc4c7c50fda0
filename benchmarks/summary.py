"""The ratios every benchmark script measures, gathered for `make bench`'s closing table.

A script runs each pair as ``alternated`` repetitions (ours, the tool; then the tool, ours; ...) and
calls ``record_pairs`` with them; when ``BENCH_SUMMARY`` names a file (run_all.py sets it) the
figures are appended to it as JSON lines and run_all.py prints them all at the end, against the
targets of issue 12 (client CPU per operation <= 1.5x the C tool's, throughput >= 0.9x). Ours is the
steady-state CPU of the measured window (worker processes, os.times); the tool's is its whole process
(wait4), whose start-up is negligible.

Why repetitions: on a shared 2-core host the speed of both sides drifts by 20-40% over a minute (the
same command, run three times in a row: 40,787-54,844 YCSB reads/s). One run of each side puts that
drift into the ratio. Each repetition's ratio compares two runs made next to each other, the order
flips every time so neither side always runs second, and the pair's figure is the median of those
ratios (as benchstat takes medians), printed with their range.
"""

from __future__ import annotations

import json
import os
import statistics
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

A = TypeVar("A")
B = TypeVar("B")
# Five: on this 2-core host the same C tool's throughput moved by up to 12% between back-to-back 5 s
# runs (pgbench -S: 41.8-46.9k selects a second, 2026-11-28), and a median of three let one such run
# decide a pair's ratio.
REPETITIONS = int(os.environ.get("BENCH_REPETITIONS", "5"))


def alternated(ours: Callable[[], A], tool: Callable[[], B], repetitions: int = 0) -> tuple[list[A], list[B]]:
    """``repetitions`` (default ``REPETITIONS``) runs of each side, ours first in the odd ones and
    the tool first in the even ones, so that each repetition is a pair of runs made back to back."""
    mine: list[A] = []
    theirs: list[B] = []
    for i in range(repetitions or REPETITIONS):
        if i % 2 == 0:
            mine.append(ours())
            theirs.append(tool())
        else:
            theirs.append(tool())
            mine.append(ours())
    return mine, theirs


CPU_TARGET = 1.5
THROUGHPUT_TARGET = 0.9


def client_model(method: str) -> str:
    """The client model a result document's ``measurement.method`` names, short: "threads", "event
    loop", or "event loop, C" when the loop's compiled hot path ran (which the table must show: the
    figures of the two differ severalfold)."""
    if "event loop" not in method:
        return "threads"
    return "event loop, C" if "hot path in C" in method else "event loop"


def record_pairs(
    pair: str,
    ours: list[tuple[float, float]],
    tool: list[tuple[float, float]],
    model: str = "",
) -> tuple[float, float]:
    """Repetitions of one pair, each side as (operations/s, client CPU us per operation): the pair's
    ratios are the medians of the repetitions' own ratios; the table shows their range too. Returns
    the (throughput, CPU) medians."""
    tput = [o[0] / t[0] for o, t in zip(ours, tool, strict=True) if t[0]]
    cpu = [o[1] / t[1] for o, t in zip(ours, tool, strict=True) if t[1]]
    if len(tput) != len(ours) or len(cpu) != len(ours) or not ours:
        raise ValueError(f"{pair}: a repetition of the C tool measured no operations or no CPU")
    line = {
        "pair": pair,
        "model": model,
        "repetitions": len(ours),
        "ours_ops_s": round(statistics.median(o[0] for o in ours), 1),
        "tool_ops_s": round(statistics.median(t[0] for t in tool), 1),
        "ours_cpu_us": round(statistics.median(o[1] for o in ours), 2),
        "tool_cpu_us": round(statistics.median(t[1] for t in tool), 2),
        "throughput_ratio": round(statistics.median(tput), 3),
        "cpu_ratio": round(statistics.median(cpu), 3),
        "throughput_range": [round(min(tput), 3), round(max(tput), 3)],
        "cpu_range": [round(min(cpu), 3), round(max(cpu), 3)],
    }
    path = os.environ.get("BENCH_SUMMARY")
    if path:
        with Path(path).open("a") as out:
            out.write(json.dumps(line) + "\n")
    return line["throughput_ratio"], line["cpu_ratio"]  # type: ignore[return-value]


def describe(ratios: list[float]) -> str:
    """Each repetition's ratio and their median, for a script's own lines."""
    return " ".join(f"{r:.2f}" for r in ratios) + f" (median {statistics.median(ratios):.2f})"


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
        f"{'ours us':>8} {'tool us':>8} {'CPU':>6}  repetitions: tput / CPU range",
        "(medians over the repetitions; each ratio is the median of the repetitions' ratios)",
    ]
    for r in rows:
        if "figure" in r:
            continue
        tput, cpu = r["throughput_ratio"], r["cpu_ratio"]
        mark = "" if (tput or 0) >= THROUGHPUT_TARGET and (cpu or 99) <= CPU_TARGET else "  <- off target"
        out.append(
            f"{r['pair']:<44} {r['model']:<13} {r['ours_ops_s']:>10,.0f} {r['tool_ops_s']:>10,.0f} "
            f"{tput:>5.2f}x {r['ours_cpu_us']:>8.2f} {r['tool_cpu_us']:>8.2f} {cpu:>5.2f}x"
            + (
                f"  {r['repetitions']}: {r['throughput_range'][0]:.2f}-{r['throughput_range'][1]:.2f}"
                f" / {r['cpu_range'][0]:.2f}-{r['cpu_range'][1]:.2f}"
                if "repetitions" in r
                else ""
            )
            + mark
        )
    for r in rows:
        if "figure" in r:
            out.append(f"{r['figure']}: {r['value']:g} {r['unit']}")
    return out
