"""How long the StoreResults Lambda spends rendering the HTML report of a one-hour run (3,600 one-second
intervals plus CloudWatch series), and its peak Python heap, with ten earlier runs in the trend chart.

    .venv/bin/python benchmarks/bench_report.py [--seconds 3600]
"""

from __future__ import annotations

import argparse
import sys
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_ingest import one_hour

from benchwright.providers.aws.report import render, slim


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=int, default=3600)
    args = parser.parse_args()
    record = one_hour(args.seconds)
    history = []
    for i in range(10):
        earlier = slim(one_hour(args.seconds))
        earlier.run_id = f"earlier-{i}"
        history.append(earlier)
    tracemalloc.start()
    started = time.perf_counter()
    html = render(record, history)
    elapsed = time.perf_counter() - started
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    print(f"report of a {args.seconds}-second run: {len(html) / 1e6:.2f} MB of HTML in {elapsed:.2f} s, "
          f"rendering peak heap {peak / 1e6:.1f} MB (10 slimmed earlier runs in the trend chart)")  # fmt: skip


if __name__ == "__main__":
    main()
