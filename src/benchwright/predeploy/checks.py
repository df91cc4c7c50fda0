"""`benchwright deploy --check`: every check that can run before a deploy, offline, in one command.

In order: the stage settings (infra/config.py, as `cdk synth` reads them: cdk.json's ``benchwright``
context overlaid by ``--config``); the nightly suite's specs against Step Functions' limits
(stages/workflow_limits.py, as `validate` estimates them); every handler imported from the Lambda
asset alone (predeploy/asset_imports.py, the asset built for this interpreter as a rehearsal builds
it); `scripts/synth` (what `make synth` runs: cdk synth with cdk-nag, cfn-lint, asl-validator); then
what the synthesized templates will create and their fixed monthly cost (predeploy/template.py).
A check that cannot run because an earlier one failed is reported as not run, never as passed.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console

SYNTH_TIMEOUT_S = 1800.0
SYNTH = "synth, cdk-nag, cfn-lint, asl-validator (scripts/synth)"


@dataclass
class Result:
    name: str
    ok: bool
    lines: list[str] = field(default_factory=list)


def _infra(root: Path) -> None:
    """infra/ is a checkout's, not the package's: importable from the checkout's root."""
    if str(root) not in sys.path:
        sys.path.insert(0, str(root))


def stage_settings(root: Path, config: str | None) -> tuple[Result, Any]:
    """The stage as synth would read it; (result, StageConfig or None)."""
    from benchwright.errors import SpecError

    _infra(root)
    from infra.config import load_stage

    name = "stage settings"
    try:
        context = json.loads((root / "cdk.json").read_text())["context"].get("benchwright")
        stage = load_stage(context, config)
    except (OSError, KeyError, json.JSONDecodeError) as exc:
        return Result(name, False, [f"cdk.json: {exc}"]), None
    except (SpecError, ValueError) as exc:
        return Result(name, False, [str(exc)]), None
    lines = [f"stage {stage.name} in {stage.region}, sink {stage.sink.kind}, egress {stage.network.egress}"]
    return Result(name, True, lines), stage


def nightly_limits(root: Path, stage: Any) -> Result:
    """Each nightly spec file loads and each benchmark fits Step Functions' limits (estimated)."""
    from benchwright.errors import BenchwrightError
    from benchwright.spec import load_suite
    from benchwright.stages.workflow_limits import check_suite

    name = "nightly suite within Step Functions' limits"
    if not stage.schedule.enabled:
        return Result(name, True, ["the nightly schedule is disabled: nothing to check"])
    lines: list[str] = []
    for rel in stage.schedule.suite:
        try:
            found = check_suite(load_suite(root / rel))
        except (BenchwrightError, OSError) as exc:
            return Result(name, False, [f"{rel}: {exc}"])
        lines += [f"{rel}: {f.describe()}" for f in found]
    return Result(name, True, lines)


def asset_imports(root: Path) -> Result:
    """Every handler from the Lambda asset alone (the asset built for this interpreter, cached)."""
    from benchwright.predeploy.asset_imports import check_asset
    from benchwright.rehearse.asset import lambda_asset
    from benchwright.rehearse.stack import RehearsalError

    name = "Lambda asset imports"
    try:
        asset = lambda_asset(root)
    except RehearsalError as exc:
        return Result(name, False, [str(exc)])
    found = check_asset(asset.path, root)
    if found:
        return Result(name, False, found)
    return Result(name, True, [f"every handler imports from asset {asset.hash[:12]} alone ({asset.python})"])


def synth(root: Path, config: str | None, timeout_s: float = SYNTH_TIMEOUT_S) -> Result:
    """scripts/synth, as `make synth` runs it, with the stage file given to cdk synth."""
    name = SYNTH
    cmd = [str(root / "scripts" / "synth")]
    if config:
        cmd += ["-c", f"benchwright:config={Path(config).resolve()}"]
    try:
        done = subprocess.run(cmd, cwd=root, capture_output=True, text=True, timeout=timeout_s, check=False)
    except subprocess.TimeoutExpired:
        return Result(name, False, [f"did not finish in {timeout_s:.0f} s"])
    lines = [line for line in done.stdout.splitlines() if line.startswith("synth:")]
    if done.returncode != 0:
        tail = [line for line in (done.stderr + done.stdout).splitlines() if line.strip()][-15:]
        return Result(name, False, [*lines, *tail])
    return Result(name, True, lines)


def deploy_plan(root: Path, stage: Any) -> Result:
    """What the synthesized templates create, and the fixed monthly cost."""
    from benchwright.predeploy.template import plan, templates

    _infra(root)
    from infra.config import INFLUX_FIXED_COST

    name = "what the deploy creates"
    docs = templates(root / "cdk.out")
    if not docs:
        return Result(name, False, ["cdk.out holds no template"])
    influx = INFLUX_FIXED_COST.format(
        instance=stage.sink.influx_instance_type, storage=stage.sink.influx_storage_gb
    )
    found = plan(docs, influx)
    lines = found.describe()
    lines.append(
        f"fixed monthly cost, idle: ~{found.fixed_usd:.2f} USD at us-east-1 list prices (benchwright/predeploy/template.py); "
        "Lambda, Step Functions, API Gateway, Scheduler, S3 and logs are billed per use"
    )
    lines += [f"  {line}" for line in found.lines]
    lines += [f"  plus {words}" for words in found.unpriced]
    if stage.region != "us-east-1":
        lines.append(f"  stage region {stage.region}: check its prices, they differ from us-east-1's")
    return Result(name, True, lines)


def run_checks(
    root: Path, config: str | None, report: Callable[[Result], None] | None = None
) -> list[Result]:
    """Every check in order (see the module docstring); ``report`` hears each as it ends."""
    results: list[Result] = []

    def done(result: Result) -> None:
        results.append(result)
        if report is not None:
            report(result)

    settings, stage = stage_settings(root, config)
    done(settings)
    if stage is None:
        done(
            Result(
                "nightly suite within Step Functions' limits", False, ["not run: the stage settings failed"]
            )
        )
    else:
        done(nightly_limits(root, stage))
    done(asset_imports(root))
    if stage is None:
        done(Result(SYNTH, False, ["not run: the stage settings failed"]))
        return results
    synthesized = synth(root, config)
    done(synthesized)
    if synthesized.ok:
        done(deploy_plan(root, stage))
    return results


def main(
    root: Path,
    config: str | None,
    console: Console,
    checks: Callable[[Path, str | None, Callable[[Result], None]], list[Result]] = run_checks,
) -> int:
    """Print each check as it ends; 0 when all passed, 1 naming each that failed."""

    def show(result: Result) -> None:
        mark = "[green]PASS[/green]" if result.ok else "[red]FAIL[/red]"
        console.print(f"{mark} {result.name}", highlight=False)
        for line in result.lines:
            console.print(f"     {line}", highlight=False, soft_wrap=True)

    results = checks(root, config, show)
    failed = [r.name for r in results if not r.ok]
    if failed:
        console.print(f"[red]deploy --check failed:[/red] {'; '.join(failed)}", highlight=False)
        return 1
    console.print(f"[green]deploy --check: all {len(results)} checks passed[/green]", highlight=False)
    return 0
