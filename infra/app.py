"""CDK entry point (cdk.json: ``python -m infra.app``): validate stage settings, build the stack,
run cdk-nag's AwsSolutions checks with every acknowledged finding carrying its reason.

Context keys: ``benchwright`` (stage settings, see infra/config.py), ``benchwright:config`` (a YAML or
JSON file overriding them), ``benchwright:build-image`` (build runner-image/ at deploy),
``benchwright:nag`` (default true; false skips the checks, e.g. in quick unit tests).
"""

from __future__ import annotations

import sys
from typing import Any

import aws_cdk as cdk
from cdk_nag import AwsSolutionsChecks

from benchwright.errors import SpecError
from infra.config import StageConfig, load_stage
from infra.nag import acknowledge
from infra.stack import BenchwrightStack


def _flag(value: Any, default: bool) -> bool:
    if value is None:
        return default
    return str(value).lower() in {"1", "true", "yes"}


# Feature flags the stack relies on (cdk.json sets them too; tests build an App without cdk.json).
FEATURE_FLAGS = {
    "@aws-cdk/aws-s3:serverAccessLogsUseBucketPolicy": True,  # access logs via bucket policy, no ACLs
    "@aws-cdk/aws-s3:createDefaultLoggingPolicy": True,
    "@aws-cdk/aws-ec2:restrictDefaultSecurityGroup": True,
    "@aws-cdk/aws-iam:minimizePolicies": True,
}


def build(app: cdk.App, stage: StageConfig | None = None) -> BenchwrightStack:
    """Build the stack into ``app``; the stage comes from the app's context unless given."""
    for flag, value in FEATURE_FLAGS.items():
        if app.node.try_get_context(flag) is None:
            app.node.set_context(flag, value)
    if stage is None:
        stage = load_stage(
            app.node.try_get_context("benchwright"), app.node.try_get_context("benchwright:config")
        )
    stack = BenchwrightStack(
        app,
        stage.stack_name,
        stage=stage,
        build_image=_flag(app.node.try_get_context("benchwright:build-image"), False),
        env=cdk.Environment(account=stage.account, region=stage.region),
        description=f"Benchwright ({stage.name}): benchmark cloud databases end to end",
    )
    if _flag(app.node.try_get_context("benchwright:nag"), True):
        cdk.Validations.of(app).add_plugins(AwsSolutionsChecks(app))
        acknowledge(stack)
    return stack


def main() -> None:
    app = cdk.App()
    try:
        build(app)
    except SpecError as exc:
        print(f"benchwright: error: {exc}", file=sys.stderr)
        sys.exit(exc.exit_code)
    app.synth()


if __name__ == "__main__":
    main()
