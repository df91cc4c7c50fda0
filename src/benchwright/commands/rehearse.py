"""`benchwright rehearse SPEC [--out DIR] [--quick [--credits-as-forecast]] [--nightly]`: the AWS run of a spec, on this machine.

moto (server mode) is the account, the stack is the synthesized CDK app, the runner is the real image
in a container, targets are stand-in servers on 127.0.0.1, Slack is a local receiver. Nothing is paid
for and nothing leaves the machine. DIR gets execution.json, resources-after.json, slack.json,
records.json and the runner containers' logs.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.console import Console

from benchwright.commands import Subparsers
from benchwright.outcome import EXIT_INVALID


def register(subparsers: Subparsers) -> None:
    p = subparsers.add_parser(
        "rehearse", help="run a cloud spec through the whole AWS path locally (moto, runner container)"
    )
    p.add_argument("spec", help="spec YAML file (one benchmark or a suite) with cloud targets")
    p.add_argument(
        "--out", type=Path, help="output directory (default ./benchwright-results/rehearse-<time>/)"
    )
    p.add_argument(
        "--quick", action="store_true", help="same shape, 8 s phases and small data (CI, a first look)"
    )
    p.add_argument(
        "--credits-as-forecast",
        action="store_true",
        help="with --quick: each gp2 volume (stand-in and forecast) starts its burst credits where the full "
        "spec's forecast puts its measured phases (e.g. drained by the full load), so the quick run "
        "observes the drain the full spec predicts",
    )
    p.add_argument(
        "--nightly",
        action="store_true",
        help="start the suite as the nightly schedule would (its own input), not through POST /runs",
    )
    p.add_argument("--image", help="runner image to use (default: built by scripts/runner-image build)")
    p.add_argument(
        "--wait-cap",
        type=float,
        default=5.0,
        metavar="S",
        help="a Wait state lasts at most S seconds (default 5: stand-ins are ready in seconds); 0 = as written",
    )
    p.add_argument("--timeout", type=float, default=1800.0, help="give up after this many seconds")
    p.add_argument(
        "--rounds",
        type=int,
        default=1,
        metavar="N",
        help="start the runs N times in one account: later rounds are judged against the earlier ones",
    )
    from benchwright.commands.validate import add_budget_arguments

    add_budget_arguments(p)  # --max-usd: what the spec would cost for real, checked before anything starts
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    from datetime import UTC, datetime

    from benchwright.rehearse.hooks import Faults
    from benchwright.rehearse.run import rehearse
    from benchwright.rehearse.summary import print_outcome

    if args.rounds < 1:
        from benchwright.errors import SpecError

        raise SpecError("--rounds", "must be at least 1")
    if args.credits_as_forecast and not args.quick:
        from benchwright.errors import SpecError

        raise SpecError("--credits-as-forecast", "carries the full spec's forecast into a --quick rehearsal")
    if args.max_usd is not None:
        from benchwright.experiments.budget import enforce
        from benchwright.spec import load_suite

        enforce(load_suite(args.spec), args.max_usd, args.prices)
    out = args.out or Path("benchwright-results") / f"rehearse-{datetime.now(UTC):%Y%m%d-%H%M%S}"
    outcome = rehearse(
        Path(args.spec),
        out,
        quick=args.quick,
        nightly=args.nightly,
        image=args.image,
        wait_cap_s=args.wait_cap or None,
        timeout_s=args.timeout,
        rounds=args.rounds,
        faults=Faults(credits_as_forecast=args.credits_as_forecast),
    )
    console = Console()
    print_outcome(outcome, console)
    statuses = [r.get("status") for r in outcome.records]
    failed = any(s not in ("succeeded", "invalid") for s in statuses) or not outcome.records
    if failed or outcome.leaked:
        return 1
    return EXIT_INVALID if "invalid" in statuses else 0  # finished, but a cell is invalid
