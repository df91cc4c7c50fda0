"""The self-contained HTML report of a run: one file, no network, charts as inline SVG.

Sections, in the order a reader asks the questions: can I trust it (status, verdict, validity
flags), what did it measure (side-by-side table of matrix cells per phase, like the seed authors'
tables; sweep charts over numeric matrix parameters), what happened over time (throughput with
host CPU, latency percentiles with IOPS, per cell), and under what conditions (spec, environment,
how latency was measured). Long series are downsampled for display; the store keeps full data.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from datetime import datetime
from html import escape
from pathlib import Path
from typing import Any

from benchwright.judge.compare import repeat_summary
from benchwright.judge.validity import complete_intervals
from benchwright.report import charts
from benchwright.report.experiments import html_sections as experiment_sections
from benchwright.report.units import fmt_latency, fmt_rate
from benchwright.results import MetricSeries, ResultDocument, redact_text
from benchwright.runs import CellResult, RunRecord

CPU_METRICS = ("cpu_percent", "CPUUtilization", "EngineCPUUtilization", "server_cpu_percent")
# Not the local server's ReadOps/WriteOps: those count read()/write() syscalls (a Redis socket's),
# not disk operations. Locally IOPS are the host disk's (proc:host ReadIOPS / WriteIOPS).
IOPS_METRICS = (
    "ReadIOPS",
    "WriteIOPS",
    "VolumeReadOps",
    "VolumeWriteOps",
    "read_iops",
    "write_iops",
)
OPEN_LOOP = " (from the intended start time: no coordinated omission)"
BALANCE_METRICS = ("BurstBalance", "CPUCreditBalance", "EBSIOBalance%", "EBSByteBalance%")

CSS = """
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:24px auto;max-width:1100px;
color:#222;padding:0 16px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid #ddd}
h3{font-size:15px;margin:18px 0 6px}
table{border-collapse:collapse;margin:8px 0;font-variant-numeric:tabular-nums}
.table-scroll{overflow-x:auto;max-width:100%}
th,td{border:1px solid #ddd;padding:3px 8px;text-align:right}th{background:#f4f4f4}
td.l,th.l{text-align:left}.muted{color:#777}
.badge{display:inline-block;padding:2px 8px;border-radius:10px;font-weight:600;color:#fff}
.faster{background:#2a9d3a}.slower{background:#c62828}.no_change{background:#1976d2}.unstable{background:#e69500}
.no_history,.no_verdict{background:#888}.succeeded{background:#2a9d3a}.failed,.aborted{background:#c62828}.running{background:#888}
.invalid{color:#c62828;font-weight:600}.warning{color:#b26a00}.info{color:#777}.ok{color:#2a9d3a}
pre{background:#f7f7f7;padding:10px;overflow:auto;font-size:12px;max-height:420px}
svg.chart{display:block;margin:6px 0;max-width:100%;height:auto}
svg .grid{stroke:#eee}svg .frame{fill:none;stroke:#bbb}svg .axis{stroke:#999}
svg .tick,svg .legend{font-size:11px;fill:#555}svg .label{font-size:12px;fill:#333}
svg .chart-title{font-size:13px;font-weight:600;fill:#222}
"""

# Proves in a browser that the charts were laid out: counts drawn paths with a non-zero length.
SCRIPT = """
window.addEventListener('load', function () {
  var n = 0;
  document.querySelectorAll('svg.chart path.series').forEach(function (p) {
    if (p.getTotalLength && p.getTotalLength() > 0) { n += 1; }
  });
  document.body.setAttribute('data-rendered', String(n));
});
"""


def _flags(cell: CellResult) -> list[tuple[str, str, str]]:
    seen: dict[str, tuple[str, str, str]] = {}
    measured = cell.measured
    for f in [*cell.validity, *(measured.validity if measured else [])]:
        seen.setdefault(f.code, (f.code, f.severity, f.message))
    return list(seen.values())


def _validity_cell(cell: CellResult, doc: ResultDocument | None = None) -> str:
    """The cell's flags for the measured phase; a doc's own flags for the other phases."""
    flags = (
        _flags(cell)
        if doc is None or doc is cell.measured
        else [(f.code, f.severity, f.message) for f in doc.validity]
    )
    if not flags:
        return '<td class="l ok">ok</td>'
    worst = "invalid" if any(s == "invalid" for _, s, _ in flags) else "warning"
    worst = worst if any(s != "info" for _, s, _ in flags) else "info"
    codes = ", ".join(escape(c) for c, _, _ in flags)
    title = escape("; ".join(m for _, _, m in flags))
    return f'<td class="l {worst}" title="{title}">{codes}</td>'


def _phase_table(record: RunRecord, phase: str) -> str:
    """Matrix cells side by side for one phase: parameters, then ops/s, avg, p95, p99 per operation."""
    cells = [c for c in record.cells if phase in c.phases]
    if not cells:
        return ""
    params = sorted({k for c in record.cells for k in c.parameters})
    ops = sorted({op for c in cells for op in c.phases[phase].operations})
    head1 = "".join(
        f'<th class="l" rowspan="2">{escape(p.rsplit(".", 1)[-1])}</th>' for p in ["cell", *params]
    )
    head1 += '<th rowspan="2">rep</th><th rowspan="2">total ops/s</th>'
    head1 += "".join(f'<th colspan="4">{escape(op)}</th>' for op in ops)
    head1 += '<th class="l" rowspan="2">validity</th>'
    head2 = "".join("<th>ops/s</th><th>avg</th><th>p95</th><th>p99</th>" for _ in ops)
    rows = []
    for cell in cells:
        doc = cell.phases[phase]
        tds = [f'<td class="l">{escape(cell.cell_id)}</td>']
        tds += [f"<td>{escape(str(cell.parameters.get(p, '')))}</td>" for p in params]
        tds += [f"<td>{cell.repeat}</td>", f"<td><b>{fmt_rate(doc.throughput)}</b></td>"]
        for op in ops:
            s = doc.operations.get(op)
            if s is None:
                tds.append('<td colspan="4" class="muted">-</td>')
                continue
            tds += [f"<td>{fmt_rate(s.throughput)}</td>"]
            tds += [f"<td>{fmt_latency(v)}</td>" for v in (s.average_us, s.p95_us, s.p99_us)]
        tds.append(_validity_cell(cell, doc))
        rows.append("<tr>" + "".join(tds) + "</tr>")
    return (f'<h3>{escape(phase)} phase</h3><div class="table-scroll"><table><tr>{head1}</tr><tr>{head2}</tr>'
            + "".join(rows) + "</table></div>")  # fmt: skip


def _repeats_table(record: RunRecord) -> str:
    summary = repeat_summary(record)
    if not any(i.n > 1 for i in summary.values()):
        return ""
    rows = "".join(
        f'<tr><td class="l">{escape(cid)}</td><td>{i.n}</td><td>{fmt_rate(i.estimate)}</td>'
        f"<td>{fmt_rate(i.low)} - {fmt_rate(i.high)}</td></tr>"
        for cid, i in summary.items()
    )
    return ('<h3>repeats</h3><table><tr><th class="l">cell</th><th>n</th><th>mean ops/s</th>'
            f"<th>95% confidence interval</th></tr>{rows}</table>")  # fmt: skip


def _numeric(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    try:
        return float(str(value))
    except ValueError:
        return None


def sweep_charts(record: RunRecord) -> list[str]:
    """For each numeric matrix parameter with 2+ values: throughput and p99 against it, one line
    per combination of the other parameters (means over repeats)."""
    params = sorted({k for c in record.cells for k in c.parameters})
    out = []
    for param in params:
        values = {_numeric(c.parameters.get(param)) for c in record.cells}
        if None in values or len(values) < 2:
            continue
        groups: dict[str, dict[float, list[tuple[float, float]]]] = {}
        for cell in record.cells:
            doc = cell.measured
            if doc is None:
                continue
            others = ", ".join(
                f"{k}={cell.parameters[k]}" for k in params if k != param and k in cell.parameters
            )
            x = _numeric(cell.parameters[param])
            assert x is not None
            p99 = max((s.p99_us for s in doc.operations.values()), default=0.0)
            groups.setdefault(others, {}).setdefault(x, []).append((doc.throughput, p99))
        xs = sorted(v for v in values if v is not None)
        log_x = xs[0] > 0 and xs[-1] / xs[0] >= 10
        tput = charts.Chart(f"throughput vs {param}", param, "ops/s", log_x=log_x)
        lat = charts.Chart(f"worst p99 latency vs {param}", param, "p99 (ms)", log_x=log_x)
        for name, by_x in groups.items():
            pts = sorted((x, sum(t for t, _ in v) / len(v)) for x, v in by_x.items())
            lat_pts = sorted((x, sum(p for _, p in v) / len(v) / 1000) for x, v in by_x.items())
            tput.series.append(charts.ChartSeries(name or "ops/s", pts, markers=True))
            lat.series.append(charts.ChartSeries(name or "worst p99", lat_pts, markers=True))
        out += [charts.render(tput), charts.render(lat)]
    return out


PERCENTILES = (50.0, 90.0, 99.0, 99.9, 99.99, 99.999)
MAX_DISTRIBUTION_LINES = 12
MAX_SERIES_CELLS = 8  # more cells than this: sweep charts and the table, not 2 x N time series


def _nines(percentile: float) -> float:
    """Percentile on a "number of nines" axis: 90 -> 1, 99 -> 2, 99.9 -> 3 (the tail spread out)."""
    return -math.log10(1 - percentile / 100)


def distribution_chart(record: RunRecord) -> str:
    """Latency by percentile (50 to 99.999) per cell and operation, from each phase's HdrHistogram:
    the whole distribution, where the tables give five points of it."""
    from benchwright.runner.measure import decode_histogram

    chart = charts.Chart(
        "latency percentile distribution (measured phase)",
        "percentile",
        "latency (ms)",
        x_ticks=[(_nines(p), f"{p:g}") for p in PERCENTILES],
    )
    for cell in record.cells:
        doc = cell.measured
        if doc is None or cell.repeat:
            continue
        for op, summary in doc.operations.items():
            if not summary.histogram or not summary.operations:
                continue
            hist = decode_histogram(summary.histogram)
            steps = [50 + 50 * (1 - 10 ** (-k / 8)) for k in range(0, 41)]  # 50 .. 99.999, dense in the tail
            pts = [(_nines(q), hist.get_value_at_percentile(q) / 1000) for q in steps]
            name = op if len(record.cells) == 1 else f"{cell.cell_id} {op}"
            chart.series.append(charts.ChartSeries(name, pts))
    if not chart.series:
        return ""
    chart.series = chart.series[:MAX_DISTRIBUTION_LINES]
    return charts.render(chart)


def seed_tables_html(record: RunRecord) -> str:
    """The tables the run's seed experiment publishes (report.table), as `benchwright table` prints them."""
    from benchwright.report.table import render as render_table
    from benchwright.report.table import seed_views

    try:
        views = seed_views(record)
    except Exception:  # a table the data cannot fill is left out, the report is not lost
        return ""
    return "".join(f"<h3>{escape(v.title)}</h3>" + render_table(v, "html") for v in views)


def _metric(series: Sequence[MetricSeries], names: Sequence[str]) -> list[MetricSeries]:
    """The named series, each (name, source) once: cell and document may both carry it."""
    unique = {(s.name, s.source): s for s in series if s.name in names and s.points}
    return list(unique.values())


def cell_charts(cell: CellResult, buckets: int) -> list[str]:
    """Throughput with CPU, latency percentiles with IOPS, and any burst/credit balances, over time."""
    doc = cell.measured
    if doc is None or not doc.intervals:
        return []
    intervals = complete_intervals(doc)
    metrics = [*cell.metrics, *doc.metrics]
    title = f"{cell.cell_id} (repeat {cell.repeat})" if cell.repeat else cell.cell_id
    throughput = charts.Chart(f"{title}: throughput and CPU", "seconds", "ops/s", "CPU %")
    throughput.series.append(charts.ChartSeries("ops/s", [(s.t, s.throughput) for s in intervals]))
    for m in _metric(metrics, CPU_METRICS):
        throughput.series.append(
            charts.ChartSeries(
                f"{m.name} ({m.source})", [(p.t, p.value) for p in m.points], axis="right", dashed=True
            )
        )
    latency = charts.Chart(f"{title}: latency and IOPS", "seconds", "latency (ms)", "IOPS")
    latency.series.append(charts.ChartSeries("p50", [(s.t, s.p50_us / 1000) for s in intervals if s.p50_us]))
    latency.series.append(charts.ChartSeries("p99", [(s.t, s.p99_us / 1000) for s in intervals if s.p99_us]))
    for m in _metric(metrics, IOPS_METRICS):
        latency.series.append(
            charts.ChartSeries(
                f"{m.name} ({m.source})", [(p.t, p.value) for p in m.points], axis="right", dashed=True
            )
        )
    out = [charts.render(throughput, buckets), charts.render(latency, buckets)]
    balances = _metric(metrics, BALANCE_METRICS)
    if balances:
        chart = charts.Chart(f"{title}: burst and credit balances", "seconds", "balance")
        chart.series += [charts.ChartSeries(m.name, [(p.t, p.value) for p in m.points]) for m in balances]
        out.append(charts.render(chart, buckets))
    return out


def history_chart(record: RunRecord, history: Sequence[RunRecord]) -> str:
    """Measured throughput per cell across earlier runs of the same spec and this one."""
    runs = sorted([*[h for h in history if h.run_id != record.run_id], record], key=lambda r: r.started_at)
    if len(runs) < 2:
        return ""
    chart = charts.Chart("throughput across runs of this spec", "run number (oldest first)", "ops/s")
    by_cell: dict[str, list[tuple[float, float]]] = {}
    for i, run in enumerate(runs, start=1):
        for cell in run.cells:
            doc = cell.measured
            if doc is not None and cell.repeat == 0:
                by_cell.setdefault(cell.cell_id, []).append((float(i), doc.throughput))
    chart.series = [charts.ChartSeries(cid, pts, markers=True) for cid, pts in by_cell.items()]
    return charts.render(chart)


def _facts_table(facts: dict[str, Any]) -> str:
    rows = "".join(
        f'<tr><th class="l">{escape(str(k))}</th><td class="l">{escape(redact_text(str(v)))}</td></tr>'
        for k, v in facts.items()
        if v not in (None, "", [], {})
    )
    return f"<table>{rows}</table>" if rows else '<p class="muted">none recorded</p>'


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


def render_html(record: RunRecord, history: Sequence[RunRecord] = (), max_points: int = 800) -> str:
    """The report as one HTML string (self-contained: inline CSS, SVG and a 10-line script)."""
    buckets = max(1, max_points // 2)
    verdict = record.verdict
    head = [
        f"<h1>{escape(record.spec_name)}</h1>",
        f"<p>run <code>{escape(record.run_id)}</code> &middot; {_fmt_time(record.started_at)} to "
        f'{_fmt_time(record.ended_at)} &middot; <span class="badge {escape(record.status)}">'
        f"{escape(record.status)}</span></p>",
    ]
    if record.error:
        head.append(f'<p class="invalid">{escape(redact_text(record.error))}</p>')
    if verdict is not None:
        first, _, rest = verdict.message.partition("\n")
        head.append(
            f'<p>verdict against history: <span class="badge {verdict.kind}">{verdict.kind.replace("_", " ")}'
            f"</span> {escape(first)}</p>"
        )
        if rest:
            head.append(f"<pre>{escape(rest)}</pre>")
    if record.cost is not None:
        c = record.cost
        items = "".join(f"{escape(k)} {v:,.2f}; " for k, v in c.items.items())
        per = f" &middot; {c.ops_per_dollar:,.0f} ops per dollar" if c.ops_per_dollar else ""
        monthly = f" &middot; nightly for a month: {c.monthly_nightly:,.2f}" if c.monthly_nightly else ""
        head.append(f"<p>cost: <b>{c.total:,.2f} {escape(c.currency)}</b> ({items}{escape(c.source)}){per}"
                    f"{monthly}</p>")  # fmt: skip

    flag_rows = [
        f'<tr><td class="l">{escape(cell.cell_id)}</td><td>{cell.repeat}</td><td class="l {sev}">{sev}</td>'
        f'<td class="l">{escape(code)}</td><td class="l">{escape(msg)}</td></tr>'
        for cell in record.cells
        for code, sev, msg in _flags(cell)
    ]
    validity = (
        '<div class="table-scroll"><table><tr><th class="l">cell</th><th>rep</th><th class="l">severity</th><th class="l">flag</th>'
        f'<th class="l">why</th></tr>{"".join(flag_rows)}</table></div>'
        if flag_rows
        else '<p class="ok">no validity flags: every cell passed the policy</p>'
    )

    order = ("load", "warmup", "run")
    phases = sorted(
        {p for c in record.cells for p in c.phases}, key=lambda p: order.index(p) if p in order else 9
    )
    tables = "".join(_phase_table(record, p) for p in phases) + _repeats_table(record)
    sweeps = "".join(sweep_charts(record))
    if len(record.cells) <= MAX_SERIES_CELLS:
        series = "".join(svg for cell in record.cells for svg in cell_charts(cell, buckets))
    else:
        series = (
            f'<p class="muted">{len(record.cells)} cells: the sweeps and tables above compare them; per-cell '
            "series are in the result documents (and `benchwright report` of a single cell).</p>"
        )
    distribution = distribution_chart(record)
    seed = seed_tables_html(record)
    trend = history_chart(record, history)

    measured = next((c.measured for c in record.cells if c.measured), None)
    spec_json = redact_text(json.dumps(record.spec, indent=2, sort_keys=True, default=str))
    body = [
        *head,
        "<h2>Validity</h2>",
        validity,
        "<h2>Results by matrix cell</h2>",
        tables or '<p class="muted">no results</p>',
    ]
    if seed:
        body += ["<h2>The seed's tables</h2>", seed]
    if distribution:
        body += ["<h2>Latency distribution</h2>", distribution]
    body += experiment_sections(record)  # server statistics, availability events (report/experiments.py)
    if sweeps:
        body += ["<h2>Sweeps</h2>", sweeps]
    if trend:
        body += ["<h2>History</h2>", trend]
    body += ["<h2>Over time</h2>", series or '<p class="muted">no interval series</p>']
    body += ["<h2>Environment</h2>", _facts_table(dict(record.environment))]
    if measured is not None:
        body += ["<h3>How it was measured</h3>", _facts_table(_measurement_facts(measured))]
    if record.tags:
        body += ["<h3>Tags</h3>", _facts_table(dict(record.tags))]
    body += ["<h2>Spec</h2>", f"<pre>{escape(spec_json)}</pre>"]
    title = escape(f"{record.spec_name} {record.run_id}")
    return (
        f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{title}</title>'
        f'<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<style>{CSS}</style></head><body>{''.join(body)}"
        f'<p class="muted">Benchwright report. Series are downsampled for display (at most {max_points} '
        f"points per line); the result store keeps every interval.</p><script>{SCRIPT}</script></body></html>"
    )


def write_report(record: RunRecord, path: str | Path, history: Sequence[RunRecord] = ()) -> Path:
    """Write the report atomically and return its path."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_suffix(target.suffix + ".tmp")
    tmp.write_text(render_html(record, history), encoding="utf-8")
    tmp.replace(target)
    return target
