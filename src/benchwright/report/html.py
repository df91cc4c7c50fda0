"""The self-contained HTML report of a run: one file, no network, rendered from Jinja2 templates.

Sections, in the order a reader asks the questions: can I trust it (status, verdict, validity
flags), what did it measure (side-by-side table of matrix cells per phase, like the seed authors'
tables; sweep charts over numeric matrix parameters), what happened over time (throughput with
host CPU, latency percentiles with IOPS, per cell), and under what conditions (spec, environment,
how latency was measured). Long series are downsampled for display; the store keeps full data.

This module only gathers the figures (plain values, ``charts.spec`` dicts); the markup lives in
templates/report.html.j2, autoescaped, so no user string reaches the page unescaped. Charts are
drawn by uPlot, inlined from the installed npm package (report/assets.py).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from benchwright.judge.compare import repeat_summary
from benchwright.judge.validity import own_flags
from benchwright.outcome import invalid_cells, invalid_headline, shown_error, shown_status
from benchwright.report import figures, templating
from benchwright.report.assets import uplot
from benchwright.report.cell_names import short_ids
from benchwright.report.experiments import html_context as experiment_context
from benchwright.report.measured_on import measured_on
from benchwright.report.server_panel import server_panels
from benchwright.report.units import fmt_latency, fmt_rate, fmt_share, fmt_unsuccessful
from benchwright.results import ResultDocument, is_failed, redact_text
from benchwright.runs import CellResult, RunRecord

OPEN_LOOP = " (from the intended start time: no coordinated omission)"
PHASE_ORDER = ("load", "warmup", "run")


@dataclass
class Validity:
    css: str  # ok, info, warning, invalid
    codes: str
    why: str


@dataclass
class PhaseRow:
    cell: str
    params: list[str]
    repeat: int
    total: str  # successful operations per second
    ops: list[list[str] | None]  # per operation: ops/s, avg, p95, p99 (None: not in this cell)
    validity: Validity
    errors: str = "0"  # failed / tried, percent


@dataclass
class PhaseTable:
    phase: str
    params: list[str]  # short parameter names
    ops: list[str]
    rows: list[PhaseRow] = field(default_factory=list)


def _flags(cell: CellResult, doc: ResultDocument | None = None) -> list[tuple[str, str, str]]:
    """What a phase table's validity column shows for ``doc``: that phase's own flags, and for the
    measured phase also the cell's own (credit balances of its window). Copies the judge made of other
    phases' flags stay in their own phase's row (the validity section shows every one of them)."""
    doc = cell.measured if doc is None else doc
    flags = [*(doc.validity if doc is not None else [])]
    if doc is cell.measured:
        flags += own_flags(cell)
    return list(dict.fromkeys((f.code, f.severity, f.message) for f in flags))


def _validity(cell: CellResult, doc: ResultDocument | None = None) -> Validity:
    """The validity column of one phase row (see ``_flags``)."""
    flags = _flags(cell, doc)
    if not flags:
        return Validity("ok", "ok", "")
    worst = "invalid" if any(s == "invalid" for _, s, _ in flags) else "warning"
    worst = worst if any(s != "info" for _, s, _ in flags) else "info"
    return Validity(worst, ", ".join(c for c, _, _ in flags), "; ".join(m for _, _, m in flags))


def flag_rows(record: RunRecord) -> list[tuple[str, str, int, str, str, str]]:
    """Every flag the phase tables show, grouped by phase (load, warm-up, run, then the cells' own):
    (phase, cell, repeat, severity, code, message). Nothing is merged away: two phases that raise the
    same code each keep their own message."""
    rows: list[tuple[str, str, int, str, str, str]] = []
    for table in _phases(record):
        for cell in (c for c in record.cells if table.phase in c.phases):
            doc = cell.phases[table.phase]
            rows += [
                (table.phase, cell.cell_id, cell.repeat, f.severity, f.code, f.message) for f in doc.validity
            ]
    for cell in record.cells:
        phase = "cell (its window's metrics)"
        rows += [(phase, cell.cell_id, cell.repeat, f.severity, f.code, f.message) for f in own_flags(cell)]
    return rows


def phase_table(record: RunRecord, phase: str) -> PhaseTable | None:
    """Matrix cells side by side for one phase: parameters, then ops/s, avg, p95, p99 per operation."""
    cells = [c for c in record.cells if phase in c.phases]
    if not cells:
        return None
    params = sorted({k for c in record.cells for k in c.parameters})
    ops = sorted({op for c in cells for op in c.phases[phase].operations})
    table = PhaseTable(phase, [p.rsplit(".", 1)[-1] for p in params], ops)
    for cell in cells:
        doc = cell.phases[phase]
        per_op: list[list[str] | None] = []
        for op in ops:
            s = doc.operations.get(op)
            per_op.append(
                None if s is None else
                # a -FAILED entry's figure is a count, never a rate that reads as throughput
                [fmt_unsuccessful(s.statuses) if is_failed(op) else fmt_rate(s.throughput),
                 *(fmt_latency(v) if s.histogram or not is_failed(op) else "-"
                   for v in (s.average_us, s.p95_us, s.p99_us))]
            )  # fmt: skip
        table.rows.append(
            PhaseRow(
                cell.cell_id,
                [str(cell.parameters.get(p, "")) for p in params],
                cell.repeat,
                fmt_rate(doc.throughput),
                per_op,
                _validity(cell, doc),
                fmt_share(doc.failed(), doc.attempted),
            )
        )
    return table


def repeats_rows(record: RunRecord) -> list[list[str]]:
    summary = repeat_summary(record)
    if not any(i.n > 1 for i in summary.values()):
        return []
    return [
        [cid, str(i.n), fmt_rate(i.estimate), f"{fmt_rate(i.low)} - {fmt_rate(i.high)}"]
        for cid, i in summary.items()
    ]


def seed_tables(record: RunRecord) -> list[Any]:
    """The tables the run's seed experiment publishes (report.table), as `benchwright table` shows them."""
    from benchwright.report.table import seed_views

    try:
        return list(seed_views(record))
    except Exception:  # a table the data cannot fill is left out, the report is not lost
        return []


def monthly_table(record: RunRecord) -> Any:
    """The monthly price of each configuration (report.monthly_table), for runs on AWS targets."""
    from benchwright.report.table import monthly_section

    try:
        return monthly_section(record)
    except Exception:  # a price table the data cannot fill is left out, the report is not lost
        return None


def _facts(facts: dict[str, Any]) -> list[tuple[str, str]]:
    return [(str(k), redact_text(str(v))) for k, v in facts.items() if v not in (None, "", [], {})]


def _measurement_facts(doc: ResultDocument) -> dict[str, Any]:
    m = doc.measurement
    return {
        "workload": doc.workload,
        "engine": doc.engine,
        "server version": doc.server_version,
        "endpoints": ", ".join(doc.endpoints),
        "latency": m.latency + (OPEN_LOOP if m.latency == "response_time" else " (closed loop)"),
        "method": m.method,
        "target rate": f"{m.target_ops_per_sec:,.0f} ops/s" if m.target_ops_per_sec else "unthrottled",
        "processes x threads": f"{m.processes} x {m.threads}",
        "source": m.source,
        "histogram": m.histogram,
        "client CPU per op": f"{doc.client.cpu_us_per_op:.1f} us",
        "client busiest worker CPU": f"{doc.client.max_process_cpu_share:.0%}",
        "host": f"{doc.host.hostname} ({doc.host.cpus} CPUs, {doc.host.memory_mb} MB)",
        "availability zone": doc.host.availability_zone,
    }  # fmt: skip


def _fmt_time(value: datetime | None) -> str:
    return value.strftime("%Y-%m-%d %H:%M:%S %Z").strip() if value else "-"


def _head(record: RunRecord) -> dict[str, Any]:
    verdict = record.verdict
    first, _, rest = verdict.message.partition("\n") if verdict else ("", "", "")
    cost = record.cost
    status, error = shown_status(record), shown_error(record)
    return {
        "status": status,
        "status_text": (invalid_headline(record) if status == "invalid" else None) or status,
        "invalid_cells": [(c.label, c.reasons) for c in invalid_cells(record)] if status == "invalid" else [],
        "started": _fmt_time(record.started_at),
        "ended": _fmt_time(record.ended_at),
        "error": redact_text(error) if error and status != "invalid" else "",
        "verdict": verdict,
        "verdict_first": first,
        "verdict_rest": rest,
        "cost": cost,
        "cost_items": [f"{k} {v:,.2f}" for k, v in cost.items.items()] if cost else [],
    }


def _phases(record: RunRecord) -> list[PhaseTable]:
    names = {p for c in record.cells for p in c.phases}
    ordered = sorted(names, key=lambda p: PHASE_ORDER.index(p) if p in PHASE_ORDER else 9)
    return [t for t in (phase_table(record, p) for p in ordered) if t is not None]


def context(record: RunRecord, history: Sequence[RunRecord] = (), max_points: int = 800) -> dict[str, Any]:
    """Everything the template shows, as plain values."""
    buckets = max(1, max_points // 2)
    measured = next((c.measured for c in record.cells if c.measured), None)
    short = short_ids(c.cell_id for c in record.cells)  # shown; the full id in each title and the legend
    return {
        "record": record,
        **_head(record),
        "short": short,
        "cell_legend": [(s, full) for full, s in short.items() if s != full],
        "flags": flag_rows(record),
        "phases": _phases(record),
        "repeats": [[short.get(row[0], row[0]), *row[1:]] for row in repeats_rows(record)],
        "seed_tables": seed_tables(record),
        "monthly_table": monthly_table(record),
        "distribution": figures.distribution_chart(record),
        "experiments": experiment_context(record),
        "sweeps": figures.sweep_charts(record),
        "trend": figures.history_chart(record, history),
        "series": figures.series_charts(record, buckets),
        "server_panels": server_panels(record, buckets),
        "cell_count": len(record.cells),
        "environment": _facts(dict(record.environment)),
        "measurement": _facts(_measurement_facts(measured)) if measured is not None else None,
        "tags": _facts(dict(record.tags)),
        "measured_on": [
            (cells, [(k, redact_text(v)) for k, v in rows]) for cells, rows in measured_on(record)
        ],
        "spec_json": redact_text(json.dumps(record.spec, indent=2, sort_keys=True, default=str)),
        "max_points": max_points,
        "uplot": uplot(),
    }


def render_html(record: RunRecord, history: Sequence[RunRecord] = (), max_points: int = 800) -> str:
    """The report as one HTML string (self-contained: inline CSS, uPlot and the chart data)."""
    return templating.render("report.html.j2", **context(record, history, max_points))


def write_report(record: RunRecord, path: str | Path, history: Sequence[RunRecord] = ()) -> Path:
    """Write the report atomically and return its path."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_suffix(target.suffix + ".tmp")
    tmp.write_text(render_html(record, history), encoding="utf-8")
    tmp.replace(target)
    return target
