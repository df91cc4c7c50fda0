"""`benchwright deploy --check`'s pieces with small inputs: the stage settings, the nightly suite
against Step Functions' limits, the asset import script's verdict, what a template creates and its
fixed monthly cost, and the report (exit 1 naming each failed check). The whole check, synth
included, runs end to end in tests/infra/test_deploy_check.py."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from rich.console import Console

from benchwright.predeploy.asset_imports import problems
from benchwright.predeploy.checks import Result, deploy_plan, main, nightly_limits, stage_settings
from benchwright.predeploy.template import plan

ROOT = Path(__file__).resolve().parents[2]
FUNCTIONS = ROOT / "functions"


def stage_file(tmp_path: Path, settings: dict[str, Any]) -> str:
    path = tmp_path / "stage.yaml"
    path.write_text(yaml.safe_dump(settings))
    return str(path)


def test_the_checkouts_stage_settings_pass() -> None:
    result, stage = stage_settings(ROOT, None)
    assert result.ok and stage is not None
    assert result.lines == ["stage dev in us-east-1, sink none, egress nat"]


def test_bad_stage_settings_fail_naming_the_field(tmp_path: Path) -> None:
    result, stage = stage_settings(ROOT, stage_file(tmp_path, {"sink": {"kind": "timestream"}}))
    assert not result.ok and stage is None
    assert "sink" in result.lines[0]
    missing, _ = stage_settings(ROOT, str(tmp_path / "absent.yaml"))
    assert not missing.ok and "no such file" in missing.lines[0]


def test_the_default_nightly_suite_fits_the_limits() -> None:
    _, stage = stage_settings(ROOT, None)
    result = nightly_limits(ROOT, stage)
    assert result.ok
    assert len(result.lines) == 2 and all("history events of 25,000" in line for line in result.lines)


def test_a_nightly_suite_over_the_history_limit_fails_naming_the_benchmark(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # each cell polled at its own interval keeps 64 two-hour cells under the limit (~10,700 events):
    # the interval is pinned at the 15 s floor, as one interval for the whole matrix would be
    from benchwright.stages import suite as suite_stage

    monkeypatch.setattr(suite_stage, "poll_seconds_for", lambda spec, polls=14: suite_stage.MIN_POLL_S)
    base = yaml.safe_load((ROOT / "infra" / "nightly.yaml").read_text())["benchmarks"][0]
    base["matrix"] = {"workload.phases.run.duration_s": list(range(7200, 7200 + 64 * 60, 60))}
    spec = tmp_path / "long.yaml"
    spec.write_text(yaml.safe_dump({"suite": "long", "benchmarks": [base]}))
    _, stage = stage_settings(ROOT, stage_file(tmp_path, {"schedule": {"suite": [str(spec)]}}))
    result = nightly_limits(ROOT, stage)
    assert not result.ok
    assert "benchmarks[0] (nightly-rds-postgres-ycsb-a)" in result.lines[0]
    assert "over Step Functions' limit of 25,000" in result.lines[0]


def _script(stdout: str, rc: int = 0, stderr: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.CompletedProcess(["python"], rc, stdout, stderr)


def _good_output() -> str:
    modules = sorted(f"functions.{p.stem}" for p in FUNCTIONS.glob("*.py") if p.stem != "__init__")
    lines = [f"module {m} True" for m in modules]
    lines += ["handler functions.api.handler True", "slack slack_sdk.webhook.client True"]
    return "\n".join(
        [*lines, "nightly slower", "site 1 True False", "mysql-spec mysql False", "mysqldb absent"]
    )


def test_the_import_scripts_verdict() -> None:
    assert problems(_script(_good_output()), FUNCTIONS) == []
    no_slack = _good_output().replace(
        "slack slack_sdk.webhook.client True", "slack slack_sdk.webhook.client False"
    )
    assert problems(_script(no_slack), FUNCTIONS) == [
        "slack_sdk: not imported from the asset (FinishRun's Slack notification)"
    ]
    misjudged = _good_output().replace("nightly slower", "nightly no_change")
    assert problems(_script(misjudged), FUNCTIONS) == [
        "FinishRun's verdict across nights (judge/nightly.py) did not run from the asset alone"
    ]
    with_numpy = _good_output().replace("site 1 True False", "site 1 True True")
    assert problems(_script(with_numpy), FUNCTIONS) == [
        "FinishRun's site refresh (site/refresh.py) did not render from the asset alone"
    ]
    short = "\n".join(line for line in _good_output().splitlines() if "functions.janitor " not in line)
    assert "functions.janitor: not in the asset" in problems(_script(short), FUNCTIONS)
    failed = problems(
        _script("", 1, "Traceback ...\nModuleNotFoundError: No module named 'slack_sdk'"), FUNCTIONS
    )
    assert failed == ["the import script failed: ModuleNotFoundError: No module named 'slack_sdk'"]


TEMPLATE = {
    "Resources": {
        "Nat": {"Type": "AWS::EC2::NatGateway", "Properties": {}},
        "S3Endpoint": {"Type": "AWS::EC2::VPCEndpoint", "Properties": {"VpcEndpointType": "Gateway"}},
        "EcrEndpoint": {
            "Type": "AWS::EC2::VPCEndpoint",
            "Properties": {"VpcEndpointType": "Interface", "SubnetIds": ["subnet-a"]},
        },
        "Slack": {"Type": "AWS::SecretsManager::Secret"},
        "Token": {"Type": "AWS::SecretsManager::Secret"},
        **{f"Alarm{i}": {"Type": "AWS::CloudWatch::Alarm"} for i in range(5)},
        **{f"Fn{i}": {"Type": "AWS::Lambda::Function"} for i in range(3)},
    }
}


def test_a_templates_resources_and_fixed_monthly_cost() -> None:
    found = plan([TEMPLATE])
    assert dict(found.counts) == {
        "AWS::EC2::NatGateway": 1,
        "AWS::EC2::VPCEndpoint": 2,
        "AWS::SecretsManager::Secret": 2,
        "AWS::CloudWatch::Alarm": 5,
        "AWS::Lambda::Function": 3,
    }
    # NAT 0.045 x 730 + 2 x 0.40 + 5 x 0.10 + one interface endpoint AZ 0.01 x 730 (Lambda: per use)
    assert found.fixed_usd == pytest.approx(32.85 + 0.80 + 0.50 + 7.30)
    assert found.describe()[-1] == "13 resources of 5 types"
    assert found.unpriced == []
    influx = plan([{"Resources": {"I": {"Type": "AWS::Timestream::InfluxDBInstance"}}}], "InfluxDB: 100 USD")
    assert influx.unpriced == ["InfluxDB: 100 USD"] and influx.fixed_usd == 0


def test_the_deploy_plan_reads_cdk_out(tmp_path: Path) -> None:
    _, stage = stage_settings(ROOT, None)
    assert not deploy_plan(tmp_path, stage).ok  # no template: not a pass
    (tmp_path / "cdk.out").mkdir()
    (tmp_path / "cdk.out" / "benchwright-dev.template.json").write_text(json.dumps(TEMPLATE))
    result = deploy_plan(tmp_path, stage)
    assert result.ok
    assert "   1 AWS::EC2::NatGateway" in result.lines
    assert any(line.startswith("fixed monthly cost, idle: ~41.45 USD") for line in result.lines)


def test_the_report_exits_1_naming_each_failed_check() -> None:
    def checks(root: Path, config: str | None, report: Any) -> list[Result]:
        results = [Result("stage settings", True, ["stage dev"]), Result("synth", False, ["cfn-lint: E3001"])]
        for r in results:
            report(r)
        return results

    console = Console(record=True, width=200)
    assert main(ROOT, None, console, checks) == 1
    text = console.export_text()
    assert "PASS stage settings" in text and "FAIL synth" in text and "cfn-lint: E3001" in text
    assert "deploy --check failed: synth" in text

    def passing(root: Path, config: str | None, report: Any) -> list[Result]:
        return [Result("stage settings", True)]

    console = Console(record=True, width=200)
    assert main(ROOT, None, console, passing) == 0
    assert "all 1 checks passed" in console.export_text()
