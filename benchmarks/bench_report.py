"""What the FinishRun Lambda holds and spends on a one-hour run (3,600 one-second intervals plus
CloudWatch series): ten whole earlier runs read for the verdict and the trend chart, the verdict
against them (benchwright.judge.compare) and the HTML report (benchwright.report.html). Prints the
time of each step and the peak Python heap, which sizes the function's memory (infra/workflow.py).

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

from benchwright.report.html import render_html
from benchwright.runs import RunRecord
from benchwright.stages.finish import HISTORY_LIMIT, verdict_against


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=int, default=3600)
    args = parser.parse_args()
    tracemalloc.start()
    record = one_hour(args.seconds)
    history: list[RunRecord] = []
    for i in range(HISTORY_LIMIT):
        earlier = one_hour(args.seconds)
        earlier.run_id = f"earlier-{i}"
        earlier.started_at = earlier.started_at.replace(year=earlier.started_at.year - 1)
        history.append(earlier)
    loaded = tracemalloc.get_traced_memory()[0]
    started = time.perf_counter()
    verdict = verdict_against(record, history, record.spec)
    judged = time.perf_counter()
    html = render_html(record, history)
    rendered = time.perf_counter()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    print(f"finish of a {args.seconds}-second run with {HISTORY_LIMIT} whole earlier runs: "
          f"records {loaded / 1e6:.1f} MB of heap; verdict {verdict.kind} in {judged - started:.2f} s; "
          f"report {len(html) / 1e6:.2f} MB of HTML in {rendered - judged:.2f} s; peak heap {peak / 1e6:.1f} MB")  # fmt: skip


if __name__ == "__main__":
    main()
