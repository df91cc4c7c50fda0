"""What `benchwright rehearse` prints: the `benchwright run` summary of each record, then what only a
rehearsal knows (state transitions, Lambda time, the workflow's own cost, what was left behind)."""

from __future__ import annotations

import json

from rich.console import Console

from benchwright.rehearse.limits import describe
from benchwright.rehearse.resources import LEAK_KINDS
from benchwright.rehearse.run import Outcome
from benchwright.report.text import print_summary
from benchwright.runs import RunRecord


def print_outcome(outcome: Outcome, console: Console) -> None:
    for data in outcome.records:
        record = RunRecord.model_validate(data)
        console.rule(f"{record.spec_name}: {record.status}")
        print_summary(record, console)  # includes the cost PriceRun computed from AWS prices
    workflow = json.loads((outcome.out_dir / "execution.json").read_text())
    cost = workflow["cost_usd"]
    for ex in outcome.executions:
        console.print(
            f"execution {ex['execution_arn'].rsplit(':', 1)[-1]}: {ex['status']}, "
            f"{ex['transitions']} state transitions ({ex['transitions_per_cell']} per cell)",
            highlight=False,
        )
    console.print(
        f"transitions per cell: {outcome.transitions_per_cell}{_as_written(outcome)}; Lambda: {workflow['lambda_invocations']} "
        f"invocations, {outcome.lambda_seconds} s; workflow cost on AWS: Step Functions "
        f"${cost['step_functions']:.6f} + Lambda ${cost['lambda']:.6f}",
        highlight=False,
    )
    if outcome.limits:  # rehearse/limits.py: the quotas a deploy would meet, measured
        console.print(describe(outcome.limits), highlight=False, soft_wrap=True)
    asset = workflow.get("lambda_asset") or {}
    if asset:
        console.print(
            f"Lambda handlers ran from the built asset {asset['asset_hash'][:12]} in "
            f"{workflow.get('lambda_sandboxes_started', 0)} sandbox(es) of {asset['interpreter']}",
            highlight=False,
            soft_wrap=True,
        )
    for line in outcome.standins:  # what the numbers above are not: the engine the spec names
        console.print(f"[yellow]stand-in:[/yellow] {line}", highlight=False, soft_wrap=True)
    delivered = sum(1 for p in outcome.slack if p["status"] == 200)
    console.print(
        f"Slack: {delivered} message(s) delivered, {len(outcome.slack) - delivered} refused", highlight=False
    )
    denied = outcome.resources_after.get("access_denied") or []
    console.print(
        f"IAM denials seen: {len(denied)} (each Lambda, the runners and the state machines signed as "
        "their own roles; resources outside S3 and conditions are not evaluated by moto)",
        highlight=False,
        soft_wrap=True,
    )
    for denial in denied:
        console.print(f"[red]denied:[/red] {denial}", highlight=False, soft_wrap=True)
    leaks = {
        k: v
        for k, v in outcome.resources_after.items()
        if k in (*LEAK_KINDS, "cleaned_up_by_rehearsal") and v
    }
    if leaks:
        console.print(f"[red]left behind:[/red] {json.dumps(leaks)}", highlight=False, soft_wrap=True)
    else:
        console.print("left behind: nothing", highlight=False)
    console.print(
        f"rehearsal: {outcome.wall_seconds} s in {outcome.region}; files in {outcome.out_dir}",
        highlight=False,
        soft_wrap=True,
    )


def _as_written(outcome: Outcome) -> str:
    """The projection without the rehearsal's Wait cap, when the cap changed anything."""
    projected = outcome.transitions_per_cell_as_written
    if projected is None or projected == outcome.transitions_per_cell:
        return ""
    return f" ({projected} with the Waits as written, projected)"
