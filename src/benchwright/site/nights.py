"""A benchmark's history as nightly points per matrix cell: the figures the site and the digest show,
read from the store `show`, `table` and `history` read (SQLite, or a records file imported in memory).

One point per run and cell: the mean over the cell's repeats of the measured phase, with the repeats
kept for the noise floor. An invalid cell stays in the series, marked, so a page can grey it. The
figures come from the store's broken-out tables (as `history` reads them) and the cost and
fingerprint from the columns store schema 3 writes at save time: a year of nights is read without
parsing one document.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from benchwright.providers.local.sqlite_store import ALL_OPERATIONS, SQLiteResultStore
from benchwright.results import Fingerprint

CHUNK = 500  # run ids per query (SQLite's parameter limit is 999 on old builds)


@dataclass(frozen=True)
class Night:
    """One cell of one run: the headline throughput (mean of repeats) and what the page plots."""

    run_id: str
    at: datetime
    valid: bool
    throughput: float  # successful operations per second, mean over repeats
    repeats: tuple[float, ...]  # each repeat's throughput: the noise floor within a night
    p99_ms: float | None
    error_rate: float  # failed / (succeeded + failed) operations
    cost: float | None
    ops_per_dollar: float | None
    fingerprint: Fingerprint | None
    report: str | None  # a link relative to the site, or a URL; None when the run kept no report
    context: str = "unknown"  # fingerprint.key(): nights of different keys are never one level
    aa: bool = False  # the spec said ``noise: aa``: its first two repeats are an A/A pair


@dataclass
class RunSummary:
    run_id: str
    at: datetime
    status: str  # as every output shows it (``invalid`` when a cell is)
    cost: float | None
    report: str | None
    suite: str | None
    noise: str | None = None  # the spec's ``noise`` setting (repeats | aa), None when not written


@dataclass
class Benchmark:
    name: str
    cells: dict[str, list[Night]] = field(default_factory=dict)  # oldest first
    runs: list[RunSummary] = field(default_factory=list)  # oldest first

    @property
    def last(self) -> RunSummary | None:
        return self.runs[-1] if self.runs else None


def report_link(location: str | None, site_dir: Path | None) -> str | None:
    """A URL as it is; a local report file relative to the site (links stay relative); else None."""
    if not location:
        return None
    if location.startswith(("http://", "https://")):
        return location
    path = Path(location)
    if site_dir is None or not path.is_file():
        return None
    return Path(os.path.relpath(path.resolve(), site_dir.resolve())).as_posix()


# the run's suite, cost and suite run id are columns (store schema 3): no document is parsed
RUNS_SQL = """
SELECT run_id, started_at, status, report, suite, cost_total, suite_run_id, noise
FROM runs WHERE spec_name = ? AND status != 'running' ORDER BY started_at DESC LIMIT ?
"""
# per cell and repeat of those runs, in the document's order (insertion): validity, cost, fingerprint
# and the measured phase's figures (the broken-out tables)
CELLS_SQL = """
SELECT c.run_id, c.cell_id, c.repeat, c.valid, c.cost, c.ops_per_dollar, c.fingerprint, c.context,
       s.throughput, s.operations, s.errors,
       (SELECT MAX(o.p99_us) FROM phase_summaries o WHERE o.run_id = c.run_id AND o.cell_id = c.cell_id
          AND o.repeat = c.repeat AND o.phase = s.phase AND o.operation != s.operation AND o.operations > 0)
FROM cells c JOIN phase_summaries s
  ON s.run_id = c.run_id AND s.cell_id = c.cell_id AND s.repeat = c.repeat AND s.phase = 'run'
     AND s.operation = ?
WHERE c.run_id IN ({marks}) ORDER BY c.rowid
"""


@dataclass
class _Repeat:
    valid: bool
    throughput: float
    ok: int
    failed: int
    p99_us: float | None
    cost: float | None
    per_dollar: float | None
    fingerprint: str | None  # as stored (JSON); validated once per distinct one (_night)
    context: str | None  # its key(), written at save time


def _night(run: RunSummary, repeats: list[_Repeat], prints: dict[str, Fingerprint]) -> Night:
    values = tuple(r.throughput for r in repeats)
    p99s = [r.p99_us for r in repeats if r.p99_us]
    ok, failed = sum(r.ok for r in repeats), sum(r.failed for r in repeats)
    costs = [r.cost for r in repeats if r.cost is not None]
    per_dollar = [r.per_dollar for r in repeats if r.per_dollar is not None]
    text = repeats[0].fingerprint
    if text and text not in prints:  # validated once per distinct fingerprint
        prints[text] = Fingerprint.model_validate_json(text)
    return Night(
        run_id=run.run_id,
        at=run.at,
        valid=all(r.valid for r in repeats),
        throughput=sum(values) / len(values),
        repeats=values,
        p99_ms=max(p99s) / 1000 if p99s else None,
        error_rate=failed / (ok + failed) if ok + failed else 0.0,
        cost=sum(costs) if costs else None,
        ops_per_dollar=sum(per_dollar) / len(per_dollar) if per_dollar else None,
        fingerprint=prints[text] if text else None,
        report=run.report,
        context=repeats[0].context or "unknown",
        aa=run.noise == "aa" and len(values) >= 2,
    )


def _repeats(store: SQLiteResultStore, ids: list[str]) -> dict[str, dict[str, dict[int, _Repeat]]]:
    """run -> cell (the document's order) -> repeat -> its figures, for the cells whose measured
    ("run") phase the tables hold."""
    repeats: dict[str, dict[str, dict[int, _Repeat]]] = {rid: {} for rid in ids}
    for start in range(0, len(ids), CHUNK):
        chunk = ids[start : start + CHUNK]
        marks = ",".join("?" * len(chunk))
        for rid, cid, rep, valid, cost, per_dollar, fingerprint, context, tput, ok, failed, p99 in store.read(
            CELLS_SQL.format(marks=marks), [ALL_OPERATIONS, *chunk]
        ):
            repeats[rid].setdefault(cid, {})[rep] = _Repeat(
                bool(valid), tput, ok, failed, p99, cost, per_dollar, fingerprint, context
            )
    return repeats


def _benchmark(store: SQLiteResultStore, name: str, nights: int, site_dir: Path | None) -> Benchmark:
    bench = Benchmark(name)
    for run_id, started, status, report, suite, cost, suite_run, noise in reversed(
        store.read(RUNS_SQL, (name, nights))
    ):
        if suite_run is not None:  # an AWS suite's cell record: its suite's record holds the cell
            continue
        bench.runs.append(RunSummary(run_id, datetime.fromisoformat(started), status, cost,
                                     report_link(report, site_dir), suite, noise))  # fmt: skip
    repeats = _repeats(store, [r.run_id for r in bench.runs])
    prints: dict[str, Fingerprint] = {}
    for run in bench.runs:
        invalid = False
        for cid, by_repeat in repeats[run.run_id].items():  # the document's cell order
            measured = [by_repeat[k] for k in sorted(by_repeat)]
            if measured:
                night = _night(run, measured, prints)
                invalid = invalid or not night.valid
                bench.cells.setdefault(cid, []).append(night)
        if run.status == "succeeded" and invalid:  # as outcome.shown_status: an invalid cell shows
            run.status = "invalid"
    return bench


def benchmarks(store: SQLiteResultStore, nights: int = 365, site_dir: Path | None = None) -> list[Benchmark]:
    """Every benchmark (spec) of the store with its newest ``nights`` runs, each cell's nights oldest
    first. Runs still ``running`` and the cell records of AWS suites are left out."""
    return [b for b in (_benchmark(store, n, nights, site_dir) for n in store.spec_names()) if b.runs]
