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
from benchwright.commands.validate import add_budget_arguments, check_estimate, check_forecast
from benchwright.errors import SpecError
from benchwright.experiments.budget import enforce
from benchwright.judge.compare import UNDECIDED
from benchwright.outcome import (
    BROKEN,
    EXIT_FAILED,
    EXIT_FILES,
    EXIT_INTERRUPTED,
    EXIT_INVALID,
    EXIT_NO_VERDICT,
    EXIT_OK,
    FINISHED,
    INVALID,
    invalid_headline,
    shown_status,
)
from benchwright.report.text import print_summary
from benchwright.runs import RunRecord
from benchwright.spec import BenchmarkSpec, SuiteSpec, load_suite

EXIT_CODES = """exit codes:
  0    every run succeeded (or ended invalid with --allow-invalid / validity.fail_on_invalid: false)
  1    a run failed or was aborted, or the spec or store was refused
  3    a --fail-on condition held: an invalid cell (invalid), a slower verdict (regression)
  4    a run finished but ended invalid: some cell's result did not pass the validity policy
       (--fail-on invalid names it: 3)
  5    --fail-on regression, and no verdict was possible: too few earlier runs (the message says
       how many it needs and how many it has)
  6    the run is in the store, but files of its output directory were not written (a full disk)
  130  interrupted (Ctrl-C)
"""


def register(subparsers: Subparsers) -> None:
    p = subparsers.add_parser(
        "run",
        help="run a spec locally: throwaway servers, runner, report, teardown",
        description="Run a spec locally: throwaway servers, runner, report, teardown.",
        epilog=EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
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
        help="exit 3 when a measured cell is invalid, or the verdict is slower (CI); repeatable. With "
        "regression, a run that cannot get a verdict (too few earlier runs) exits 5 and says how many "
        "it needs",
    )
    p.add_argument(
        "--allow-invalid",
        action="store_true",
        help="exit 0 for a run that ended invalid (default: 4; the spec's validity.fail_on_invalid: "
        "false does the same); its status stays invalid",
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
    from benchwright.providers.local import open_local_store

    if args.resume:
        return _report(_resume(args, console), args, console, open_local_store(args.store))
    if not args.spec:
        raise SpecError("spec", "give a spec file (or --resume RUN)")
    from benchwright.local import run_suite, scale_down

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
    check_forecast(suite)  # validity.credits: refuse and a bucket predicted to drain
    store = open_local_store(args.store)
    providers_for = _providers_factory(store)
    if args.max_cells is not None and args.max_cells < 1:
        raise SpecError("--max-cells", "must be at least 1")
    outcomes = run_suite(
        suite, args.out, providers_for, console, args.max_cells, args.stop_at_plateau, args.keep_going
    )
    return _report(outcomes, args, console, store)


def _report(outcomes: list[Any], args: argparse.Namespace, console: Console, store: Any = None) -> int:
    """Each run's summary, warnings and directory; the exit code (EXIT_CODES: 130 Ctrl-C, 1 failed,
    4 invalid, 3 --fail-on, 5 no verdict for --fail-on regression, 6 files of --out not written)."""
    code = EXIT_OK
    for outcome in outcomes:
        record = outcome.record
        console.rule(f"{record.spec_name}: {shown_status(record)}")
        print_summary(record, console)  # tables, validity, verdict, cost and the report's path
        for warning in outcome.warnings:
            console.print(f"[yellow]warning:[/yellow] {warning}", highlight=False)
        console.print(f"results: {outcome.out_dir}", highlight=False, soft_wrap=True)
        if outcome.interrupted:
            code = EXIT_INTERRUPTED
        elif code == EXIT_OK:
            code = _exit_code(record, args, console, store)
        if code == EXIT_OK and getattr(outcome, "lost", None):
            console.print(
                f"[red]exit {EXIT_FILES}:[/] {record.spec_name}: {len(outcome.lost)} file(s) of "
                f"{outcome.out_dir} not written; its results are in the store (`benchwright show "
                f"{record.run_id}`)",
                highlight=False,
                soft_wrap=True,
            )
            code = EXIT_FILES
    return code


def _exit_code(record: RunRecord, args: argparse.Namespace, console: Console, store: Any) -> int:
    """One finished run's exit code: failed first, then what --fail-on names (3, as it always was), then
    invalid (4, unless allowed), then --fail-on regression without a verdict (5)."""
    status = shown_status(record)
    if status in BROKEN or status not in FINISHED:
        return EXIT_FAILED
    verdict = record.verdict.kind if record.verdict else None
    for condition in args.fail_on or []:
        code = exit_code(condition, verdict, invalid_cells(record))
        if code:
            return code
    if status == INVALID and not args.allow_invalid and _fails_on_invalid(record):
        console.print(
            f"[magenta]exit {EXIT_INVALID}:[/] {record.spec_name} ended {invalid_headline(record)} "
            "(--allow-invalid or validity.fail_on_invalid: false exit 0 for it)",
            highlight=False,
        )
        return EXIT_INVALID
    if "regression" in (args.fail_on or []) and verdict in (None, *UNDECIDED) and record.cells:
        console.print(
            f"[red]exit {EXIT_NO_VERDICT}:[/] --fail-on regression cannot judge {record.run_id}: "
            f"no verdict is possible yet; {_need(record, store)}",
            highlight=False,
            soft_wrap=True,
        )
        return EXIT_NO_VERDICT
    return EXIT_OK


def _fails_on_invalid(record: RunRecord) -> bool:
    """The run's spec says whether an invalid run fails the command (validity.fail_on_invalid)."""
    from pydantic import ValidationError

    from benchwright.spec import BenchmarkSpec

    try:
        return BenchmarkSpec.model_validate(record.spec).validity.fail_on_invalid
    except ValidationError:  # a stored spec of another version: the default
        return True


def _need(record: RunRecord, store: Any) -> str:
    """How many earlier runs the verdict needs, and how many it has (from the store's history)."""
    from benchwright.judge.compare import history_need
    from benchwright.stages.finish import HISTORY_LIMIT

    history = store.history(record.spec_name, limit=HISTORY_LIMIT + 1) if store is not None else []
    need = history_need(record, history, HISTORY_LIMIT)
    if need is None:  # enough runs, but none decided (e.g. their cells differ): the verdict says why
        message = record.verdict.message.splitlines()[0] if record.verdict else "no verdict"
        return f"the verdict says: {message}"
    return f"it {need.describe(record.spec_name)} (more repeats per run need fewer earlier runs)"
