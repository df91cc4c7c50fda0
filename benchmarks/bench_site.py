"""The nightly site's build time and size (issue 26): 365 nights x 50 benchmarks, generated.

    PYTHONPATH=src .venv/bin/python benchmarks/bench_site.py [--nights 365] [--benchmarks 50]

Generates the history (site/sample.py: two cells, two repeats a night, a level shift in every fifth
benchmark, an engine change in every seventh, an invalid night in every third), saves it into a
fresh SQLite store, then times what `benchwright site --store` does: read the store, find the change
points, write the pages. Prints wall and CPU time (a shared machine's wall time includes waiting for
a core) and the figures against the targets (under 10 s, index under 1.5 MB).
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

from benchwright.providers.local.sqlite_store import SQLiteResultStore
from benchwright.site.build import write_site
from benchwright.site.sample import Plan, history

TARGET_S, TARGET_INDEX_MB = 10.0, 1.5


def plans(count: int, nights: int) -> list[Plan]:
    out = []
    for i in range(count):
        plan = Plan(f"bench-{i:03d}")
        if i % 5 == 0:
            plan.shifts = {nights * 2 // 3: 0.85}
        if i % 7 == 0:
            plan.context_at = nights // 2
        if i % 3 == 0:
            plan.invalid = (nights // 4,)
        out.append(plan)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nights", type=int, default=365)
    parser.add_argument("--benchmarks", type=int, default=50)
    parser.add_argument("--keep", type=Path, default=None, metavar="DB",
                        help="keep the generated store here and reuse it when it exists (generating takes minutes)")  # fmt: skip
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        db = args.keep or root / "store.db"
        if not db.exists():
            started = time.perf_counter()
            records = history(plans(args.benchmarks, args.nights), args.nights)
            with SQLiteResultStore(db) as store:
                for record in records:
                    store.save_run(record)
            print(f"generated and stored {len(records)} runs in {time.perf_counter() - started:.1f} s")
        started, cpu = time.perf_counter(), time.process_time()
        with SQLiteResultStore(db) as store:
            built = write_site(store, root / "site", args.nights)
        total_s, cpu_s = time.perf_counter() - started, time.process_time() - cpu
        index_mb = built.index.stat().st_size / 1e6
        pages = sorted((root / "site" / "bench").glob("*.html"))
        largest = max(p.stat().st_size for p in pages) / 1e6
        print(
            f"site: {built.pages} pages, {built.runs} runs ({args.nights} nights x {args.benchmarks} benchmarks)"
        )
        load = os.getloadavg()[0]
        print(
            f"build: {total_s:.2f} s wall, {cpu_s:.2f} s CPU, reading the store included "
            f"(target < {TARGET_S:.0f} s; load average {load:.1f} on {os.cpu_count()} CPUs)"
        )
        print(f"index.html: {index_mb:.3f} MB (target < {TARGET_INDEX_MB} MB); largest page {largest:.3f} MB")
        ok = total_s < TARGET_S and index_mb < TARGET_INDEX_MB
        print("within targets" if ok else "OUTSIDE the targets")


if __name__ == "__main__":
    main()
