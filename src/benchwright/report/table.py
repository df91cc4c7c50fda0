"""Any stored result as the table a seed experiment publishes: rows and columns chosen by parameter.

A result is first flattened into facts (one per run, cell, repeat, phase and operation), then pivoted:
``rows`` and ``cols`` name matrix parameters by their short name (``threads``, ``fieldlength``,
``datatype``), spec properties (``recordcount``) or the built-in dimensions (``operation``, ``phase``,
``spec``, ``cell``, ``repeat``, ``engine``, ``workload``). Repeats of a cell are averaged (their count
is kept, so a reader sees how many runs a figure stands on). Latencies stay in microseconds in the
data; only the rendering picks a unit. Every metric says where its number comes from (``METRICS``).
"""

from __future__ import annotations

import csv
import io
import json
import statistics
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from benchwright.errors import SpecError
from benchwright.report import monthly_table
from benchwright.report.cell_names import short_ids
from benchwright.report.table_metrics import (
    DIMENSIONS,
    Fact,
    Metric,
    default_metrics,
    expand_groups,
    resolve_metrics,
)
from benchwright.report.units import fmt_latency, fmt_rate
from benchwright.runs import RunRecord

Format = Literal["md", "csv", "json", "html", "text"]


# ---------------------------------------------------------------- facts and dimensions
def _short(name: str) -> str:
    return name.rsplit(".", 1)[-1]


def _text(value: Any) -> str:
    """A parameter value as a reader writes it: lists joined, no Python syntax."""
    if isinstance(value, (list, tuple)):
        return ",".join(_text(v) for v in value)
    if isinstance(value, dict):
        return " ".join(_text(v) for v in value.values())  # storage {type: gp2, size_gb: 100} -> gp2 100
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def dimension(fact: Fact, name: str) -> str | None:
    """The value of a row/column dimension for a fact, or None when the fact does not have it."""
    builtins: dict[str, Callable[[], Any]] = {
        "spec": lambda: fact.run.spec_name,
        "run": lambda: fact.run.run_id,
        "cell": lambda: fact.cell.cell_id,
        "repeat": lambda: fact.cell.repeat,
        "phase": lambda: fact.doc.phase,
        "operation": lambda: fact.operation,
        "engine": lambda: fact.doc.engine,
        "workload": lambda: fact.doc.workload,
    }
    if name in builtins:
        value = builtins[name]()
        return None if value is None else _text(value)
    for alias in (name, *DIMENSION_ALIASES.get(name, ())):
        for source in (fact.cell.parameters, fact.doc.properties, _spec_properties(fact.run)):
            if alias in source:
                return _text(source[alias])
            matches = [k for k in source if k.endswith("." + alias)]
            if matches:
                return _text(source[sorted(matches, key=len)[0]])
    return None


# the same setting under another name: Tair's YCSB binding calls the data type redis.command_group
DIMENSION_ALIASES = {"datatype": ("command_group",), "command_group": ("datatype",)}


def _spec_properties(run: RunRecord) -> dict[str, Any]:
    workload = run.spec.get("workload") or {}
    out: dict[str, Any] = {
        f"workload.properties.{k}": v for k, v in (workload.get("properties") or {}).items()
    }
    if workload.get("files"):
        out["workload.files"] = workload["files"]
    target = run.spec.get("target") or {}
    for key in ("engine", "instance_type", "storage_type", "allocated_storage", "iops", "engine_version"):
        if key in target:
            out[f"target.{key}"] = target[key]
    return out


def facts(runs: Sequence[RunRecord], phase: str | None, per_operation: bool) -> list[Fact]:
    """Facts of the chosen phase (default: the measured one) of every cell of every run."""
    out: list[Fact] = []
    for run in runs:
        for cell in run.cells:
            docs = [cell.phases[phase]] if phase and phase in cell.phases else []
            if phase is None and cell.measured is not None:
                docs = [cell.measured]
            if phase == "all":
                docs = list(cell.phases.values())
            for doc in docs:
                if per_operation and doc.operations:
                    out += [Fact(run, cell, doc, op) for op in doc.operations]
                else:
                    out.append(Fact(run, cell, doc))
    return out


def varying_parameters(runs: Sequence[RunRecord]) -> list[str]:
    """Matrix parameters by short name (unique), in the order the specs list them."""
    names: list[str] = []
    for run in runs:
        for cell in run.cells:
            for key in cell.parameters:
                short = _short(key)
                if short not in names and key not in names:
                    names.append(short if sum(_short(k) == short for k in cell.parameters) == 1 else key)
    return names


# ---------------------------------------------------------------- the pivot
@dataclass
class Value:
    mean: float | None
    n: int = 0
    values: list[float] = field(default_factory=list)


@dataclass
class SeedTable:
    """A pivoted table: ``cells[(row key, col key, metric)]`` holds the mean over repeats."""

    title: str
    rows: list[str]
    cols: list[str]
    metrics: list[Metric]
    row_keys: list[tuple[str, ...]]
    col_keys: list[tuple[str, ...]]
    cells: dict[tuple[tuple[str, ...], tuple[str, ...], str], Value]
    notes: list[str] = field(default_factory=list)

    def column_headings(self) -> list[str]:
        heads = []
        for ck in self.col_keys:
            for m in self.metrics:
                if not ck:
                    heads.append(m.label)
                elif len(self.metrics) == 1:
                    heads.append(f"{self.cols[0]}={' '.join(ck)}")
                else:
                    heads.append(f"{self.cols[0]}={' '.join(ck)} {m.label}")
        return heads

    def grid(self, formatted: bool = True) -> list[list[Any]]:
        """Row-major values: the row dimensions, then one value per (column key, metric)."""
        out = []
        for rk in self.row_keys:
            line: list[Any] = list(rk)
            for ck in self.col_keys:
                for m in self.metrics:
                    v = self.cells.get((rk, ck, m.name))
                    mean = v.mean if v else None
                    line.append(format_value(m, mean) if formatted else mean)
            out.append(line)
        return out


UNITS = {"latency": "us", "percent": "% of operations", "rate": "per second", "count": "count",
         "usd": "USD"}  # fmt: skip


def format_value(metric: Metric, value: float | None) -> str:
    if value is None:
        return "-"
    if metric.kind == "latency":
        return fmt_latency(value)
    if metric.kind == "percent":
        return "100%" if value >= 100 else f"{value:.2f}%"
    if metric.kind == "count":
        return f"{value:,.0f}"
    if metric.kind == "usd":
        return f"{value:,.2f}"
    if metric.kind == "number":
        return f"{value:,.1f}"
    return fmt_rate(value)


def _unique(values: Iterable[tuple[str, ...]]) -> list[tuple[str, ...]]:
    def order(key: tuple[str, ...]) -> tuple[Any, ...]:
        return tuple((0, float(p), p) if _is_number(p) else (1, 0.0, p) for p in key)

    seen = list(dict.fromkeys(values))
    # numbers ascending; text in first-seen order (operation order, spec order) kept stable
    if all(all(_is_number(p) for p in k) for k in seen):
        return sorted(seen, key=order)
    return seen


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _operations_name_their_phase(runs: Sequence[RunRecord]) -> bool:
    """True when no operation name occurs in two phases (SET in load, GET in run): the phase column
    would repeat what the operation says."""
    seen: dict[str, str] = {}
    for run in runs:
        for cell in run.cells:
            for doc in cell.phases.values():
                for op in doc.operations:
                    if seen.setdefault(op, doc.phase) != doc.phase:
                        return False
    return True


def _dimensions(
    runs: Sequence[RunRecord],
    rows: Sequence[str] | None,
    cols: str | None,
    phase: str | None,
    chosen: Sequence[Metric],
) -> list[str]:
    """The row dimensions: as asked, or the spec (across suites) and every varying parameter, plus
    the phase and the operation where the metrics need them."""
    dims = [*(rows or [])]
    if not dims:
        if len({r.spec_name for r in runs}) > 1:
            dims.append("spec")
        dims += [p for p in varying_parameters(runs) if p != cols]
    per_op = any(m.scope == "operation" for m in chosen)
    if not rows and phase == "all" and not (per_op and _operations_name_their_phase(runs)):
        dims.append("phase")
    if per_op and "operation" not in dims and cols != "operation":
        dims.append("operation")
    if not per_op:
        dims = [d for d in dims if d != "operation"]
        if cols == "operation":
            raise SpecError("--cols", "operation needs a per-operation metric (throughput, p99 ...)")
    return dims


def build_table(
    runs: Sequence[RunRecord],
    rows: Sequence[str] | None = None,
    cols: str | None = None,
    metrics: Sequence[str] | None = None,
    phase: str | None = None,
) -> SeedTable:
    """The pivoted table; defaults are each workload's seed table (its descriptor's default_metrics)."""
    if not runs:
        raise SpecError("RUN", "no run to tabulate")
    workloads = [d.workload for r in runs for c in r.cells for d in c.phases.values()]
    defaults = default_metrics(workloads[0] if workloads else "")
    if any(d.failed() for r in runs for c in r.cells for d in c.phases.values()):
        defaults.append("error_rate")  # wherever a throughput is shown, the failures next to it
    chosen = resolve_metrics(metrics or defaults)
    dims = _dimensions(runs, rows, cols, phase, chosen)
    per_op = any(m.scope == "operation" for m in chosen)
    found = facts(runs, phase, per_op and ("operation" in dims or cols == "operation"))
    if not found:
        raise SpecError("--phase", f"no {phase or 'measured'} phase in {', '.join(r.run_id for r in runs)}")
    for name in [*dims, *([cols] if cols else [])]:
        if all(dimension(f, name) is None for f in found):
            known = sorted({*DIMENSIONS, *varying_parameters(runs)})
            raise SpecError(
                "--rows/--cols", f"no parameter {name!r} in these runs; known: {', '.join(known)}"
            )
    cells: dict[tuple[tuple[str, ...], tuple[str, ...], str], Value] = {}
    row_keys: list[tuple[str, ...]] = []
    col_keys: list[tuple[str, ...]] = []
    gathered: dict[tuple[tuple[str, ...], tuple[str, ...], str], list[float]] = {}
    for f in found:
        rk = tuple(dimension(f, d) or "-" for d in dims)
        ck = (dimension(f, cols) or "-",) if cols else ()
        row_keys.append(rk)
        col_keys.append(ck)
        for m in chosen:
            value = m.get(f)
            bucket = gathered.setdefault((rk, ck, m.name), [])
            if value is not None:
                bucket.append(value)
    for key, values in gathered.items():
        cells[key] = Value(statistics.fmean(values) if values else None, len(values), values)
    repeats = max((len(v.values) for v in cells.values()), default=0)
    notes = [f"{m.label}: {m.source}" for m in chosen if m.kind != "rate" or m.scope == "phase"]
    notes += monthly_table.notes(runs, [m.name for m in chosen])  # each configuration's price rows
    if repeats > 1:
        notes.insert(0, f"figures are means over up to {repeats} repeats or cells sharing a row")
    phase_name = phase or (found[0].doc.phase if found else "run")
    names = ", ".join(dict.fromkeys(r.spec_name for r in runs))
    return SeedTable(
        title=f"{names} ({phase_name})",
        rows=dims,
        cols=[cols] if cols else [],
        metrics=chosen,
        row_keys=_unique(row_keys) if all(k for k in row_keys) else list(dict.fromkeys(row_keys)),
        col_keys=_unique(col_keys) if cols else [()],
        cells=cells,
        notes=notes,
    )


# ---------------------------------------------------------------- rendering
def render(table: SeedTable, fmt: Format = "md") -> str:
    heads = [*table.rows, *table.column_headings()]
    if fmt == "csv":
        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        raw_heads = [*table.rows]
        for ck in table.col_keys:
            for m in table.metrics:
                unit = "_us" if m.kind == "latency" else ("_pct" if m.kind == "percent" else "")
                raw_heads.append("_".join([*ck, m.name]) + unit)
        writer.writerow(raw_heads)
        for line in table.grid(formatted=False):
            writer.writerow(["" if v is None else (round(v, 3) if isinstance(v, float) else v) for v in line])
        return buf.getvalue()
    if fmt == "json":
        rows = []
        for rk in table.row_keys:
            entry: dict[str, Any] = dict(zip(table.rows, rk, strict=True))
            for ck in table.col_keys:
                target = entry
                if ck:
                    target = entry.setdefault(table.cols[0], {}).setdefault(" ".join(ck), {})
                for m in table.metrics:
                    v = table.cells.get((rk, ck, m.name))
                    target[m.name] = None if v is None or v.mean is None else round(v.mean, 3)
                    if v is not None and v.n > 1:
                        target[f"{m.name}_n"] = v.n
            rows.append(entry)
        units = {m.name: UNITS.get(m.kind, m.label) for m in table.metrics}
        doc = {"title": table.title, "rows": rows, "units": units, "notes": table.notes}
        return json.dumps(doc, indent=1)
    grid = table.grid()
    legend = _short_cells(table, heads, grid)
    if fmt == "html":
        from benchwright.report import templating

        return (
            templating.render("seed_table.html.j2", title=table.title, heads=heads, grid=grid, notes=legend)
            + "\n"
        )
    numeric = [False] * len(table.rows) + [True] * (len(heads) - len(table.rows))
    lines = [
        "| " + " | ".join(heads) + " |",
        "|" + "|".join("---:" if n else "---" for n in numeric) + "|",
        *("| " + " | ".join(str(v) for v in line) + " |" for line in grid),
    ]
    out = f"{table.title}\n\n" + "\n".join(lines) + "\n"
    if table.notes or legend:
        out += "\n" + "\n".join(f"- {n}" for n in [*table.notes, *legend]) + "\n"
    return out


def _short_cells(table: SeedTable, heads: list[str], grid: list[list[Any]]) -> list[str]:
    """Show a ``cell`` dimension's ids short (report.cell_names), in place, for the formats people
    read (md, html); csv and json keep the full ids, the key. Returns the legend: each short id
    with its full id."""
    names: dict[str, str] = {}
    if "cell" in table.rows:
        i = table.rows.index("cell")
        names = short_ids(rk[i] for rk in table.row_keys)
        for line in grid:
            line[i] = names.get(line[i], line[i])
    if table.cols == ["cell"]:
        names = short_ids(ck[0] for ck in table.col_keys if ck)
        for n, head in enumerate(heads):
            for full, short in names.items():
                if head.startswith(f"cell={full}"):
                    heads[n] = f"cell={short}" + head[len(f"cell={full}") :]
    return [f"cell {short}: {full}" for full, short in names.items() if short != full]


# ---------------------------------------------------------------- each seed's views of one run
def seed_table_views(workload: str) -> list[tuple[str, str | None, list[str]]]:
    """[(title, phase, metrics)] of ``workload``'s seed tables (its descriptor's ``seed_views``, or
    those of the workload a native tool's results publish like); phase None is the measured phase."""
    from benchwright.runner.workloads.registry import descriptor_of

    found = descriptor_of(workload)
    views = found.seed_views if found is not None else ()
    return [(v.title, v.phase, expand_groups(v.metrics)) for v in views]


CLOUD_VIEW = (
    "server and storage per cell",
    ["cpu", "read_iops", "write_iops", "burst", "credit", "usd", "ops_per_usd"],
)


def seed_views(run: RunRecord, cloud: bool | None = None) -> list[SeedTable]:
    """The tables the run's seed experiment publishes (by workload), plus the per-cell CPU / IOPS /
    credit table for cloud runs (``cloud`` None: when any series came from CloudWatch)."""
    docs = [d for c in run.cells for d in c.phases.values()]
    if not docs:
        return []
    out: list[SeedTable] = []
    for title, phase, metrics in seed_table_views(docs[-1].workload):
        if phase not in (None, "all") and not any(d.phase == phase for d in docs):
            continue
        table = build_table([run], metrics=metrics, phase=phase)
        if all(v.mean is None for v in table.cells.values()):
            continue
        table.title = title
        out.append(table)
    if cloud is None:
        cloud = any(s.source.startswith("cloudwatch") for c in run.cells for s in c.metrics) or any(
            s.source.startswith("cloudwatch") for d in docs for s in d.metrics
        )
    if cloud:
        table = build_table([run], metrics=CLOUD_VIEW[1])
        table.title = CLOUD_VIEW[0]
        out.append(table)
    return out


def monthly_section(record: RunRecord) -> SeedTable | None:
    """The report's monthly price table, only for a run on AWS targets."""
    if not monthly_table.has_aws_target(record):
        return None
    table = build_table([record], metrics=monthly_table.SECTION_METRICS)
    table.title = "Monthly price of each configuration (USD, 730 h/month)"
    return table
