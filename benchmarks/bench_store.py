"""How fast the local result store answers history over many runs (target: 1,000 runs under 1 s).

Fills a temporary store with N synthetic nightly runs (2 matrix cells, 60 s of 1 s intervals and
three host metric series each) and times: saving, the history table (`benchwright history`), the
newest 20 full records (what the automatic comparison reads) and one run's fetch.

    .venv/bin/python benchmarks/bench_store.py [--runs 1000]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from datetime import timedelta
from pathlib import Path

from benchwright.judge import compare_with_history
from benchwright.providers.local.sqlite_store import SQLiteResultStore
from benchwright.report.sample import EPOCH, make_run, noisy_series


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1000)
    args = parser.parse_args()
    base = [noisy_series(2000, 60, seed=1), noisy_series(5000, 60, seed=2)]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench.sqlite"
        store = SQLiteResultStore(path)
        t0 = time.perf_counter()
        last = None
        for i in range(args.runs):
            last = make_run(
                "nightly",
                f"run-{i:05d}",
                [("clients=8", {"clients": 8}, base[0]), ("clients=32", {"clients": 32}, base[1])],
                started_at=EPOCH + timedelta(days=i),
                seed=i,
            )
            store.save_run(last)
        save_s = time.perf_counter() - t0
        size_mb = path.stat().st_size / 1e6

        t0 = time.perf_counter()
        rows = store.history_rows("nightly", limit=args.runs)
        rows_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        records = store.history("nightly", limit=20)
        records_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        assert last is not None
        one = store.get_run(last.run_id)
        get_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        verdict = compare_with_history(last, records)
        compare_s = time.perf_counter() - t0
        store.close()

    print(f"runs stored                      {args.runs}  ({size_mb:.1f} MB on disk)")
    print(f"save, per run                    {save_s / args.runs * 1000:.2f} ms")
    print(f"history table over {len(rows)} runs    {rows_s * 1000:.1f} ms   (target < 1000 ms)")
    print(f"newest 20 full records           {records_s * 1000:.1f} ms")
    print(f"one run by id                    {get_s * 1000:.1f} ms   ({len(one.cells) if one else 0} cells)")
    print(f"verdict against 10 of history    {compare_s * 1000:.1f} ms   ({verdict.kind})")


if __name__ == "__main__":
    main()
