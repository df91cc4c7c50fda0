"""`benchwright run SPEC [--out DIR]`: provision, run, measure, judge, store, report, tear down, locally.

DIR receives the result documents, the metric series, run.json and report.html (default: a per-run
folder under ./benchwright-results/). History goes to the SQLite store (``--store`` or
$BENCHWRIGHT_STORE, default ./benchwright-results/results.sqlite).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from rich.console import Console

from benchwright.commands import Subparsers
from benchwright.commands.compare import exit_code, invalid_cells
from benchwright.commands.paths import output_dir
from benchwright.commands.validate import add_budget_arguments, check_estimate
from benchwright.errors import SpecError
from benchwright.experiments.budget import enforce
from benchwright.report.text import print_summary
from benchwright.spec import BenchmarkSpec, SuiteSpec, load_suite


def register(subparsers: Subparsers) -> None:
    p = subparsers.add_parser("run", help="run a spec locally: throwaway servers, runner, report, teardown")
    p.add_argument("spec", nargs="?", help="spec YAML file (one benchmark or a suite); not with --resume")
    p.add_argument(
        "--resume",
        metavar="RUN",
        help="run again only the cells of run RUN (in --store) without a successful result, into the "
        "same run and output directory, keeping the cells already measured",
    )
    p.add_argument(
        "--out", type=output_dir, help="output directory (default ./benchwright-results/<run-id>/)"
    )
    p.add_argument(
        "--store",
        type=Path,
        help="SQLite result store (default $BENCHWRIGHT_STORE or ./benchwright-results/results.sqlite)",
    )
    p.add_argument(
        "--quick", action="store_true", help="reduced size: few records, 2 s phases (CI, smoke tests)"
    )
    p.add_argument(
        "--max-cells", type=int, metavar="N", help="run only the first N matrix cells of each benchmark"
    )
    p.add_argument(
        "--keep-going",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="a failed cell does not stop the others (default); --no-keep-going stops at the first",
    )
    p.add_argument(
        "--fail-on",
        choices=("invalid", "regression"),
        action="append",
        help="exit 3 when a measured cell is invalid, or the verdict is slower (CI); repeatable",
    )
    p.add_argument(
        "--stop-at-plateau",
        action="store_true",
        help="end a concurrency sweep (a matrix over threads) once throughput stops growing: two steps "
        "within the noise (validity.min_effect)",
    )
    add_budget_arguments(p)
    p.add_argument("--yes", action="store_true", help="run even when the estimate exceeds a day")
    p.add_argument(
        "--files-root",
        type=Path,
        metavar="DIR",
        help="read workload property files from DIR (default: the spec's directory)",
    )
    p.set_defaults(handler=handle)


def _check_local(suite: SuiteSpec) -> None:
    for i, spec in enumerate(suite.benchmarks):
        if not spec.is_local:
            where = f"benchmarks[{i}].target.provider" if len(suite.benchmarks) > 1 else "target.provider"
            raise SpecError(
                where,
                f"{spec.target.provider!r} runs in AWS; `benchwright run` runs local | endpoint "
                "targets (validate cloud specs with `benchwright validate`)",
            )


def _providers_factory(store: Any) -> Any:
    from benchwright.providers.local import default_notifier, local_providers

    def providers_for(out_dir: Path, spec: BenchmarkSpec) -> Any:
        return local_providers(out_dir, store=store, notifier=default_notifier(spec.notify))

    return providers_for


def _resume(args: argparse.Namespace, console: Console) -> list[Any]:
    """``--resume RUN``: the stored run's spec, only its cells without a successful result."""
    from benchwright.local import DEFAULT_ROOT, RunOutcome, run_spec
    from benchwright.providers.local import open_local_store
    from benchwright.resume import cells_to_resume, resume_dir, stored_spec

    if args.spec:
        raise SpecError("--resume", "give the run id or a spec file, not both (the run stored its spec)")
    store = open_local_store(args.store)
    record = store.get_run(args.resume)
    if record is None:
        raise SpecError("--resume", f"no run {args.resume!r} in the store (--store picks another)")
    spec = stored_spec(record)
    todo = cells_to_resume(spec, record)
    out = args.out or resume_dir(record, DEFAULT_ROOT)
    if not todo:
        console.print(f"run {record.run_id}: every cell has a result; nothing to resume", highlight=False)
        return [RunOutcome(record, out, Path(record.report) if record.report else None)]
    console.print(
        f"resuming run {record.run_id}: {len(todo)} cell(s) without a result: "
        + "; ".join(f"{cell} #{repeat + 1}" for cell, repeat in sorted(todo)),
        highlight=False,
        soft_wrap=True,
    )
    factory = _providers_factory(store)
    return [run_spec(spec, out, factory, console, record.run_id, keep_going=args.keep_going, only=todo)]


def handle(args: argparse.Namespace) -> int:
    console = Console()
    if args.resume:
        return _report(_resume(args, console), args, console)
    if not args.spec:
        raise SpecError("spec", "give a spec file (or --resume RUN)")
    from benchwright.local import run_suite, scale_down
    from benchwright.providers.local import open_local_store

    suite = load_suite(args.spec, args.files_root)
    _check_local(suite)
    enforce(suite, args.max_usd, args.prices)  # before anything is created
    if args.quick:
        suite = SuiteSpec(
            suite=suite.suite,
            description=suite.description,
            benchmarks=[scale_down(b) for b in suite.benchmarks],
        )
    check_estimate(suite, args.yes)
    store = open_local_store(args.store)
    providers_for = _providers_factory(store)
    if args.max_cells is not None and args.max_cells < 1:
        raise SpecError("--max-cells", "must be at least 1")
    outcomes = run_suite(
        suite, args.out, providers_for, console, args.max_cells, args.stop_at_plateau, args.keep_going
    )
    return _report(outcomes, args, console)


def _report(outcomes: list[Any], args: argparse.Namespace, console: Console) -> int:
    """Each run's summary, warnings and directory; the exit code (130 Ctrl-C, 1 failed, 3 --fail-on)."""
    code = 0
    for outcome in outcomes:
        console.rule(f"{outcome.record.spec_name}: {outcome.record.status}")
        print_summary(outcome.record, console)  # tables, validity, verdict, cost and the report's path
        for warning in outcome.warnings:
            console.print(f"[yellow]warning:[/yellow] {warning}", highlight=False)
        console.print(f"results: {outcome.out_dir}", highlight=False, soft_wrap=True)
        if outcome.interrupted:
            code = 130
        elif outcome.record.status != "succeeded" and code == 0:
            code = 1
        elif code == 0 and args.fail_on:
            verdict = outcome.record.verdict.kind if outcome.record.verdict else None
            for condition in args.fail_on:
                code = code or exit_code(condition, verdict, invalid_cells(outcome.record))
    return code
