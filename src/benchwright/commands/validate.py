"""`benchwright validate SPEC`: check a spec without creating anything; print the expanded matrix."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from benchwright.commands import Subparsers
from benchwright.errors import SpecError
from benchwright.experiments.budget import SpecBudget, check_budget
from benchwright.experiments.runner_classes import suite_budgets_both_classes
from benchwright.report.cell_names import cut_ids, short_ids
from benchwright.report.fit import Fitted, print_whole
from benchwright.spec import BenchmarkSpec, SuiteSpec, check_workload, expand_matrix, load_suite


def register(subparsers: Subparsers) -> None:
    p = subparsers.add_parser(
        "validate", help="validate a spec and print its matrix with an estimated duration"
    )
    p.add_argument("spec", help="spec YAML file (one benchmark or a suite)")
    p.add_argument(
        "--quick", action="store_true", help="show the reduced-size version `run --quick` would run"
    )
    add_budget_arguments(p)
    add_lifetime_argument(p)
    p.add_argument(
        "--files-root",
        type=Path,
        metavar="DIR",
        help="read workload property files from DIR (default: the spec's directory)",
    )
    p.set_defaults(handler=handle)


def add_budget_arguments(p: Any) -> None:
    """``--max-usd`` and ``--prices``: shared by validate, run, submit and rehearse."""
    p.add_argument(
        "--max-usd",
        type=float,
        metavar="N",
        help="refuse the spec, before anything is created, when its estimated cost exceeds N USD",
    )
    p.add_argument(
        "--prices",
        metavar="DIR",
        help="price cloud specs from saved Price List GetProducts responses (default: the AWS Price "
        "List API, cached for a month in ~/.cache/benchwright/prices.json; when it cannot be reached, "
        "the dated cached price list that ships with benchwright)",
    )


def add_lifetime_argument(p: Any) -> None:
    """``--max-run-hours``: the stage's setting, which bounds a cloud target group's life."""
    from benchwright.group_lifetime import DEFAULT_MAX_RUN_HOURS

    p.add_argument(
        "--max-run-hours",
        type=float,
        default=DEFAULT_MAX_RUN_HOURS,
        metavar="H",
        help=f"the stage's max_run_hours (default {DEFAULT_MAX_RUN_HOURS:g}): a cloud target group must "
        "end before its expires-at and the execution's timeout",
    )


def check_lifetimes(suite: SuiteSpec, max_run_hours: float, console: Console | None = None) -> None:
    """Every cloud target group's estimated life within its expiry and timeout, or a SpecError."""
    from benchwright.group_lifetime import check_group_lifetimes

    if max_run_hours <= 0:
        raise SpecError("--max-run-hours", f"must be above 0, got {max_run_hours:g}")
    for bench in suite.benchmarks:
        for group in check_group_lifetimes(bench, max_run_hours):
            if console is not None:
                console.print(group.describe(), highlight=False)


def fmt_duration(seconds: float) -> str:
    seconds = round(seconds)
    if seconds < 120:
        return f"{seconds} s"
    if seconds < 7200:
        return f"{seconds // 60} min {seconds % 60:02d} s"
    return f"{seconds // 3600} h {seconds % 3600 // 60:02d} min"


def _phases(spec: BenchmarkSpec) -> str:
    parts = []
    for name in ("load", "warmup", "run"):
        p = getattr(spec.workload.phases, name)
        if p is None or not p.enabled:
            continue
        bits = []
        if p.threads:
            bits.append(f"{p.threads}t")
        if p.target_rate:
            bits.append(f"{p.target_rate:g}/s")
        if p.operation_count:
            bits.append(f"{p.operation_count} ops")
        if p.duration_s:
            bits.append(f"{p.duration_s:g} s")
        parts.append(name + (f"({', '.join(bits)})" if bits else ""))
    return " ".join(parts)


def _runner_words(spec: BenchmarkSpec) -> str:
    """local, or the class and what it runs on (measured ec2 c6i.large, smoke fargate 2 vCPU / 4 GB)."""
    from benchwright.experiments.runner_classes import runs_on

    if spec.runner.platform == "local":
        return "local"
    return f"{spec.runner.cls} ({runs_on(spec.runner)})"


def matrix_table(spec: BenchmarkSpec, budget: SpecBudget | None = None) -> tuple[Table, float]:
    """The cells, what each provisions, loads or shares (benchwright.sharing), and their estimates."""
    from benchwright.sharing import item_seconds, plan

    target = spec.target
    table = Table(
        title=f"{spec.name}: {target.engine} on {target.provider}, workload {spec.workload.name}, "
        f"runner {_runner_words(spec)} x{spec.runner.count}, {spec.repeats} repeat(s)"
    )
    table.add_column("#", justify="right")
    cells = expand_matrix(spec)
    names = short_ids(c.cell_id for c in cells)
    table.add_column("cell")  # short ids (report.cell_names); folded, never cut, when too long
    table.add_column("phases")
    table.add_column("does")
    table.add_column("est. (all repeats)", justify="right")
    if budget is not None:
        table.add_column("est. USD (all repeats)", justify="right")
    seconds: dict[str, float] = {}
    notes: dict[str, str] = {}
    for item, share, note in item_seconds(plan([(c, r) for c in cells for r in range(spec.repeats)])):
        seconds[item.cell.cell_id] = seconds.get(item.cell.cell_id, 0.0) + share
        notes.setdefault(item.cell.cell_id, note)
    for i, cell in enumerate(cells, 1):
        row = [
            str(i),
            names[cell.cell_id],
            _phases(cell.spec),
            notes[cell.cell_id],
            fmt_duration(seconds[cell.cell_id]),
        ]
        if budget is not None:
            cost = budget.cells[i - 1]
            row.append("?" if cost.missing else f"{cost.usd:,.2f}")
        table.add_row(*row)
    return table, sum(seconds.values())


def price_table(budget: SpecBudget) -> Table:
    """Each line item over all cells and repeats, and where its figures came from."""
    table = Table(title=f"{budget.name}: cost by line item (all cells and repeats)")
    table.add_column("line item")
    table.add_column("USD", justify="right")
    table.add_column("prices from; quantity from")
    for name, usd, note in budget.line_items():
        table.add_row(name, f"{usd:,.2f}", note)
    return table


def class_table(budget: SpecBudget) -> Table:
    """Both runner classes priced (experiments/runner_classes.py): the chosen one marked."""
    table = Table(title=f"{budget.name}: runner classes (all cells and repeats)")
    table.add_column("class")
    table.add_column("runs on")
    table.add_column("runner USD", justify="right")
    table.add_column("spec USD", justify="right")
    table.add_column("")
    for c in budget.classes:
        mark = "chosen" if c.chosen else ""
        if c.why_not:
            table.add_row(c.runner_class, "-", "-", "-", f"not priced: {c.why_not}")
            continue
        usd = "?" if c.missing else f"{c.runner_usd:,.2f}"
        total = "?" if c.missing else f"{c.total_usd:,.2f}"
        table.add_row(c.runner_class, c.runs_on, usd, total, mark)
    return table


def show(suite: SuiteSpec, console: Console, budgets: list[SpecBudget] | None = None) -> float:
    grand = 0.0
    for n, spec in enumerate(suite.benchmarks):
        budget = budgets[n] if budgets else None
        table, total = matrix_table(spec, budget)
        print_whole(console, Fitted(table))
        for short, full in cut_ids(short_ids(c.cell_id for c in expand_matrix(spec))).items():
            console.print(f"cell {short}: {full}", highlight=False, soft_wrap=True)
        for warning in check_workload(spec):
            console.print(f"[yellow]warning:[/yellow] {spec.name}: {warning}", highlight=False)
        show_forecast(spec, console)
        console.print(f"estimated duration: {fmt_duration(total)}", highlight=False)
        if budget is not None:
            cost = "free (local)" if spec.is_local else f"{budget.total_usd:,.2f} USD"
            if budget.missing:
                cost = f"incomplete: at least {budget.total_usd:,.2f} USD (prices missing, below)"
            console.print(f"estimated cost: {cost}", highlight=False)
            if not spec.is_local:
                console.print(price_table(budget))
            if budget.classes:
                console.print(class_table(budget))
            if budget.unreachable:
                from benchwright.providers.aws.pricelist import copy_provenance

                console.print(
                    f"[yellow]note:[/yellow] the Price List API could not be asked ({budget.unreachable}); "
                    "figures marked 'cached price list' come from the copy that ships with benchwright: "
                    f"{copy_provenance()}",
                    highlight=False,
                )
            for missing in budget.missing:
                console.print(
                    f"[yellow]warning:[/yellow] {spec.name}: no price for {missing}", highlight=False
                )
        grand += total
    if len(suite.benchmarks) > 1:
        console.print(
            f"suite {suite.suite}: {len(suite.benchmarks)} benchmarks, estimated {fmt_duration(grand)}",
            highlight=False,
        )
    return grand


def show_forecast(spec: BenchmarkSpec, console: Console) -> None:
    """The burst-credit forecast's findings (benchwright.forecast.advice), each naming its field."""
    from benchwright.forecast.advice import findings

    for found in findings(spec):
        label = "warning" if found.drains else "note"
        console.print(
            f"[yellow]{label}:[/yellow] {spec.name}: {found.field}: {found.message}", highlight=False
        )


def check_forecast(suite: SuiteSpec) -> None:
    """Refuse, before anything is created, a spec whose bucket is predicted to drain under
    ``validity.credits: refuse`` (a SpecError naming the field)."""
    from benchwright.forecast.advice import check_credits

    for bench in suite.benchmarks:
        check_credits(bench)


LONG_RUN_S = 86_400.0  # an estimate over a day is more likely a mistake than a plan: it needs --yes


def check_estimate(suite: SuiteSpec, yes: bool) -> float:
    """The suite's estimated duration; over a day, refused unless the user said --yes."""
    from benchwright.sharing import estimated_seconds

    total = sum(estimated_seconds(spec) for spec in suite.benchmarks)
    if total > LONG_RUN_S and not yes:
        raise SpecError(
            "--yes",
            f"the estimated duration is {fmt_duration(total)} (over a day); pass --yes to run it anyway",
        )
    return total


def handle(args: argparse.Namespace) -> int:
    suite = load_suite(args.spec, args.files_root)
    if args.quick:
        from benchwright.local import scale_down

        suite = SuiteSpec(
            suite=suite.suite,
            description=suite.description,
            benchmarks=[scale_down(b) for b in suite.benchmarks],
        )
    console = Console()
    budgets = suite_budgets_both_classes(suite, args.prices)
    total = show(suite, console, budgets)
    if len(suite.benchmarks) > 1:
        total = sum(b.total_usd for b in budgets)
        cost = f"{total:,.2f} USD"
        if any(b.missing for b in budgets):  # a suite's sum of partial estimates is partial too
            cost = f"incomplete: at least {cost} (prices missing, above)"
        console.print(f"suite {suite.suite}: estimated cost {cost}", highlight=False)
    check_lifetimes(suite, args.max_run_hours, console)
    check_forecast(suite)
    from benchwright.stages.workflow_limits import check_suite  # Step Functions' limits, estimated

    for found in check_suite(suite):
        console.print(f"workflow limits: {found.describe()}", highlight=False)
    check_budget(budgets, args.max_usd)
    if args.max_usd is not None:
        console.print(f"within the budget of {args.max_usd:,.2f} USD", highlight=False)
    if total > LONG_RUN_S:
        console.print(
            "[yellow]warning:[/yellow] over a day: `run` and `submit` will ask for --yes", highlight=False
        )
    console.print(f"[green]valid:[/green] {args.spec}", highlight=False)
    return 0
