"""`benchwright deploy --check` end to end in this checkout, with no AWS credentials at all: the stage
settings, the nightly suite's limits, the asset's imports, scripts/synth (cdk-nag, cfn-lint,
asl-validator) and what the deploy would create. Its pieces are tested one by one in
tests/unit/test_predeploy.py."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# synth bundles the Lambda asset (pip) and runs cdk-nag and cfn-lint: minutes on a loaded machine
pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]


def test_deploy_check_passes_offline_and_prints_the_plan() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update(
        {
            "AWS_CONFIG_FILE": "/dev/null",  # no profile, no credentials: nothing may call AWS
            "AWS_SHARED_CREDENTIALS_FILE": "/dev/null",
            "AWS_EC2_METADATA_DISABLED": "true",
            "PYTHONPATH": str(ROOT / "src"),
        }
    )
    done = subprocess.run(
        [sys.executable, "-m", "benchwright.cli", "deploy", "--check"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=880,
        check=False,
    )
    out = done.stdout
    assert done.returncode == 0, (out[-4000:], done.stderr[-3000:])
    for check in (
        "PASS stage settings",
        "PASS nightly suite within Step Functions' limits",
        "PASS Lambda asset imports",
        "PASS synth, cdk-nag, cfn-lint, asl-validator (scripts/synth)",
        "PASS what the deploy creates",
    ):
        assert check in out, out[-4000:]
    assert "history events of 25,000" in out
    assert "AWS::Lambda::Function" in out and "AWS::StepFunctions::StateMachine" in out
    assert "x NAT gateway" in out  # the default egress, priced
    assert "fixed monthly cost, idle: ~" in out
    assert "deploy --check: all 5 checks passed" in out
