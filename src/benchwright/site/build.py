"""Write the site: ``index.html`` and ``bench/<name>.html`` per benchmark, from a store's history.

The runs come from the store `show`, `history` and `table` read (SQLite, or a rehearsal's records
file imported in memory); each benchmark keeps its newest ``nights`` runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from benchwright.providers.local.sqlite_store import SQLiteResultStore
from benchwright.site.digest import Judged
from benchwright.site.nights import benchmarks
from benchwright.site.pages import benchmark_page, cell_views, index_page, slug

DEFAULT_NIGHTS = 365


@dataclass(frozen=True)
class Built:
    index: Path
    pages: int
    runs: int
    judged: list[Judged]  # each benchmark with its cells' verdicts: what the digest reads


def write_site(
    store: SQLiteResultStore, out: Path, nights: int = DEFAULT_NIGHTS, title: str = "Benchwright nightly"
) -> Built:
    """Write every page under ``out`` (created if needed) from each spec's newest ``nights`` runs;
    links between pages are relative."""
    (out / "bench").mkdir(parents=True, exist_ok=True)
    benches = benchmarks(store, nights, site_dir=out)
    names = [slug(b.name) for b in benches]
    if len(set(names)) != len(names):  # two names, one file: say so rather than overwrite one
        dup = sorted({n for n in names if names.count(n) > 1})
        raise ValueError(f"benchmark names {dup} map to the same page file; rename one spec")
    judged = [(bench, cell_views(bench)) for bench in benches]  # change points found once per cell
    for bench, views in judged:
        page = benchmark_page(bench, views, title)
        (out / "bench" / f"{slug(bench.name)}.html").write_text(page, encoding="utf-8")
    index = out / "index.html"
    index.write_text(index_page(judged, title), encoding="utf-8")
    runs = sum(len(b.runs) for b in benches)
    return Built(index, len(benches), runs, [Judged(bench, views) for bench, views in judged])
