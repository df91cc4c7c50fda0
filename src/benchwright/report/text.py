"""Terminal output: the run summary as rich tables, and a progress display across cells and phases.

The summary is what a user reads first, so it says per cell and operation: ops/s (successes), the
error rate, average, p95 and p99 latency, failures on their own rows, and whether the result can be trusted (validity), then the verdict against history.
"""

from __future__ import annotations

import io
import math
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from rich import box
from rich.console import Console, Group
from rich.panel import Panel
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from benchwright.judge.compare import repeat_summary
from benchwright.judge.validity import phase_flags
from benchwright.outcome import shown_error, shown_status
from benchwright.report.cell_names import short_ids
from benchwright.report.fit import Fitted, print_whole
from benchwright.report.table import SeedTable, seed_views
from benchwright.report.units import fmt_latency, fmt_rate, fmt_share, fmt_unsuccessful
from benchwright.results import OperationSummary, ResultDocument, failed_name, is_failed
from benchwright.runs import CellResult, RunRecord, Verdict

VERDICT_STYLE = {"faster": "bold green", "slower": "bold red", "no_change": "cyan", "unstable": "yellow",
                 "no_history": "dim", "no_verdict": "dim"}  # fmt: skip
SEVERITY_STYLE = {"invalid": "bold red", "warning": "yellow", "info": "dim"}
# only a success is green: an invalid run finished, but its numbers do not stand (benchwright.outcome)
STATUS_STYLE = {"succeeded": "green", "invalid": "bold magenta", "running": "cyan"}


def status_style(status: str) -> str:
    return STATUS_STYLE.get(status, "red")


def validity_text(cell: CellResult) -> Text:
    flags = list(cell.validity)
    measured = cell.measured
    if measured:
        flags += [f for f in measured.validity if all(f.code != g.code for g in flags)]
    if not flags or all(f.severity == "info" for f in flags):
        return Text("ok", style="green")  # facts (consistency held) are in the validity panel
    worst = "invalid" if any(f.severity == "invalid" for f in flags) else "warning"
    worst = worst if any(f.severity != "info" for f in flags) else "info"
    return Text(", ".join(sorted({f.code for f in flags})), style=SEVERITY_STYLE[worst])


def cells_table(record: RunRecord, phase: str | None = None) -> Table:
    """One row per cell, repeat and operation of the measured phase (or ``phase``).

    The cell id already names its parameters (``threads=16``), so no column per parameter: at 80
    columns those headings were cut to "workl…". Ids are shown short (report.cell_names: the
    parameters that vary, abbreviated), and wrap instead of being cut."""
    names = short_ids(c.cell_id for c in record.cells)
    repeats = max((c.repeat for c in record.cells), default=0) > 0
    table = Table(title=f"{record.spec_name}: {record.run_id}", title_justify="left", expand=False)
    table.add_column("cell", style="bold", overflow="fold")
    if repeats:
        table.add_column("rep", justify="right")
    table.add_column("operation", overflow="fold")
    for name in ("ops/s", "err%", "avg", "p95", "p99"):
        table.add_column(name, justify="right", no_wrap=True)
    table.add_column("validity", overflow="fold")
    for cell in record.cells:
        doc = cell.phases.get(phase) if phase else cell.measured
        if doc is None:
            continue
        first = True
        for op, ops, errors, avg, p95, p99 in operation_rows(doc):
            cols = [names[cell.cell_id] if first else ""]
            if repeats:
                cols.append(str(cell.repeat) if first else "")
            cols += [op, ops, errors, fmt_latency(avg), fmt_latency(p95), fmt_latency(p99)]
            table.add_row(*cols, validity_text(cell) if first else "")
            first = False
    return table


Row = tuple[str, str, str, float | None, float | None, float | None]


def operation_rows(doc: ResultDocument) -> list[Row]:
    """(operation, ops/s, error %, avg, p95, p99) per entry: successes with their throughput and
    error rate; each -FAILED entry on its own row with its count, never a rate that reads as
    throughput; an ALL row when there is more than one."""
    rows: list[Row] = []
    for op, s in doc.operations.items():
        if is_failed(op):
            latency = (s.average_us, s.p95_us, s.p99_us) if s.histogram else (None, None, None)
            rows.append((op, fmt_unsuccessful(s.statuses), "", *latency))
            continue
        unsuccessful = doc.operations.get(failed_name(op))
        tried = s.operations + (unsuccessful.operations if unsuccessful is not None else 0)
        rows.append((op, fmt_rate(s.throughput), fmt_share(doc.failed(op), tried), *_lat(s)))
    if len(rows) > 1:
        rows.append(
            ("ALL", fmt_rate(doc.throughput), fmt_share(doc.failed(), doc.attempted), None, None, None)
        )
    return rows


def _lat(s: OperationSummary) -> tuple[float, float, float]:
    return s.average_us, s.p95_us, s.p99_us


def seed_table(view: SeedTable) -> Table:
    """A seed view (report.table) as a rich table; the same figures as `benchwright table`."""
    table = Table(
        title=view.title,
        title_justify="left",
        expand=False,
        box=box.SIMPLE_HEAD,
        pad_edge=False,
        padding=0,
    )  # one space between columns: the bucket table fits in 80 columns
    for name in view.rows:
        table.add_column(name, overflow="fold", min_width=min(len(name), 10))
    for heading in view.column_headings():
        table.add_column(heading, justify="right", overflow="fold", no_wrap=True)
    for line in view.grid():
        table.add_row(*(str(v) for v in line))
    return table


def repeats_table(record: RunRecord) -> Table | None:
    """Mean throughput with its confidence interval per cell, when a cell has repeats."""
    summary = repeat_summary(record)
    if not any(i.n > 1 for i in summary.values()):
        return None
    names = short_ids(c.cell_id for c in record.cells)
    table = Table(title="repeats: mean ops/s, 95% CI", title_justify="left")
    for name, justify in (("cell", "left"), ("n", "right"), ("mean ops/s", "right"), ("95% CI", "right")):
        table.add_column(name, justify=justify)  # type: ignore[arg-type]
    for cell_id, ci in summary.items():
        interval = "-" if math.isinf(ci.half_width) else f"{fmt_rate(ci.low)} - {fmt_rate(ci.high)}"
        table.add_row(names.get(cell_id, cell_id), str(ci.n), fmt_rate(ci.estimate), interval)
    return table


def verdict_text(verdict: Verdict | None) -> Text:
    if verdict is None:
        return Text("no comparison", style="dim")
    head, _, rest = verdict.message.partition("\n")
    out = Text(verdict.kind.replace("_", " ").upper(), style=VERDICT_STYLE[verdict.kind])
    out.append(f"  {head}")
    if rest:
        out.append("\n" + rest, style="dim")
    return out


def flags_lines(record: RunRecord) -> list[Text]:
    """One line per flag code and phase: a warning several cells raised is said once, naming the cells
    (the first cell's message stands for the others when their figures differ)."""
    grouped: dict[tuple[str, str], list[tuple[str, str]]] = {}
    names = short_ids(c.cell_id for c in record.cells)
    for cell in record.cells:
        seen: set[tuple[str, str]] = set()
        for phase, f in phase_flags(cell):  # each phase's own: a load's flag never hides the run's
            if (phase, f.code) in seen:
                continue
            seen.add((phase, f.code))
            name = names[cell.cell_id]
            where = name if cell.repeat == 0 else f"{name} r{cell.repeat}"
            grouped.setdefault((f.severity, f"{phase} {f.code}"), []).append((where, f.message))
    lines = []
    total = len(record.cells)
    for (severity, where), hits in grouped.items():
        places = [w for w, _ in hits]
        cells = "all cells" if total > 1 and len(places) == total else ", ".join(places)
        message = hits[0][1]
        if len({m for _, m in hits}) > 1:
            message += f" [{places[0]}; figures differ per cell]"
        phase = where.split(" ", 1)[0]
        lines.append(Text(f"{severity}: {phase}: {message} ({cells})", SEVERITY_STYLE[severity]))
    return lines


def measured_on_panels(record: RunRecord) -> list[Panel]:
    """The fingerprint and network floor of the measured phases (report/measured_on.py)."""
    from benchwright.report.measured_on import measured_on

    panels = []
    for cells, rows in measured_on(record):
        body = Group(*(Text.assemble((f"{label}: ", "bold"), value) for label, value in rows))
        panels.append(Panel(body, title=f"measured on ({cells})", title_align="left", border_style="dim"))
    return panels


def cell_legend(record: RunRecord) -> Table | None:
    """Each short cell id beside its full id, when one differs (``show``: the full ids are the
    keys a user finds in the result and the store)."""
    names = short_ids(c.cell_id for c in record.cells)
    if all(short == full for full, short in names.items()):
        return None
    table = Table(title="cells", title_justify="left")
    table.add_column("cell", style="bold", overflow="fold")
    table.add_column("full id", overflow="fold")
    for full, short in names.items():
        table.add_row(short, full)
    return table


def summary_renderable(record: RunRecord, legend: bool = False) -> Group:
    """The summary; ``legend`` adds the short cell ids' full ids (``show``)."""
    parts: list[Any] = [Fitted(cells_table(record))]
    table = cell_legend(record) if legend else None
    if table is not None:
        parts.append(Fitted(table))
    parts += [Fitted(seed_table(view)) for view in seed_views(record)]
    repeats = repeats_table(record)
    if repeats is not None:
        parts.append(Fitted(repeats))
    flags = flags_lines(record)
    if flags:
        parts.append(Panel(Group(*flags), title="validity", title_align="left", border_style="yellow"))
    parts += measured_on_panels(record)
    parts.append(Text.assemble(("verdict: ", "bold"), verdict_text(record.verdict)))
    if record.cost is not None:
        c = record.cost
        per = f", {c.ops_per_dollar:,.0f} ops/$" if c.ops_per_dollar else ""
        parts.append(Text(f"cost: {c.total:,.2f} {c.currency} ({c.source}){per}"))
    shown, error = shown_status(record), shown_error(record)
    status = Text.assemble(("status: ", "bold"), (shown, status_style(shown)))
    if error:
        status.append(f"  {error}", style="red")
    parts.append(status)
    for warning in record.warnings:  # beside the run (a refused sink write): never its status
        parts.append(Text.assemble(("warning: ", "bold yellow"), f"{warning.code}: {warning.message}"))
    if record.report:
        parts.append(Text.assemble(("report: ", "bold"), record.report))
    return Group(*parts)


def print_summary(record: RunRecord, console: Console | None = None, legend: bool = False) -> None:
    """Print the run summary (tables, validity, verdict, cost, report path)."""
    print_whole(console or Console(), summary_renderable(record, legend))


def render_summary(record: RunRecord, width: int = 120) -> str:
    """The summary as plain text (for logs, tests and non-terminals)."""
    console = Console(width=width, record=True, file=io.StringIO(), color_system=None)
    console.print(summary_renderable(record))
    return console.export_text()


class RunProgress:
    """A progress display for a whole run: one bar over all (cell, phase) steps, one for the phase.

    ``phase_callback`` matches the engine's ProgressFn (elapsed s, operations, ops/s), so the
    orchestrator can pass it straight to ``run_phase``.
    """

    def __init__(self, steps: Iterable[tuple[str, str]], console: Console | None = None) -> None:
        self.steps = list(steps)
        self.progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[detail]}"),
            TimeElapsedColumn(),
            console=console,
            transient=False,
        )
        self.names = short_ids(cell for cell, _ in self.steps)
        self._overall: TaskID | None = None
        self._phase: TaskID | None = None
        self._expected_s: float | None = None
        self.completed = 0

    def __enter__(self) -> RunProgress:
        self.progress.start()
        self._overall = self.progress.add_task("run", total=len(self.steps), detail="")
        return self

    def __exit__(self, *exc: object) -> None:
        self.progress.stop()

    def start_phase(self, cell_id: str, phase: str, expected_s: float | None = None) -> None:
        if self._phase is not None:
            self.progress.remove_task(self._phase)
        self._expected_s = expected_s
        total = math.ceil(expected_s) if expected_s else None
        name = self.names.get(cell_id, cell_id)  # short: the bar's line must fit the terminal
        self._phase = self.progress.add_task(f"{name} {phase}", total=total, detail="starting")

    def phase_callback(self, elapsed_s: float, operations: int, ops_per_s: float) -> None:
        if self._phase is not None:
            done = min(elapsed_s, self._expected_s) if self._expected_s else elapsed_s
            self.progress.update(
                self._phase, completed=int(done), detail=f"{operations:,} ops, {ops_per_s:,.0f}/s"
            )

    def finish_phase(self) -> None:
        self.completed += 1
        if self._phase is not None:
            self.progress.update(self._phase, detail="done")
        if self._overall is not None:
            self.progress.update(self._overall, completed=self.completed)


@contextmanager
def run_progress(steps: Iterable[tuple[str, str]], console: Console | None = None) -> Iterator[RunProgress]:
    """``with run_progress([(cell, phase), ...]) as p:`` then per step ``p.start_phase(cell, phase)``,
    ``run_phase(config, p.phase_callback)``, ``p.finish_phase()``."""
    with RunProgress(steps, console) as progress:
        yield progress
