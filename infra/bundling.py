"""Lambda code built on this machine, without Docker: wheels for the Lambda platform plus our code.

CDK's default bundling starts a container; we implement ``ILocalBundling`` instead, so `cdk synth`
works on a CI machine with no Docker engine. One asset serves every function (one handler module
per state in functions/), so a deploy uploads it once. What goes into it: infra/lambda_asset.py.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import aws_cdk as cdk
import jsii
from aws_cdk import aws_lambda as lambda_

from infra.constants import LAMBDA_PYTHON, REPO_ROOT
from infra.lambda_asset import build_asset, copy_uplot, lambda_requirements, source_hash

__all__ = ["LocalPipBundler", "copy_uplot", "lambda_code", "lambda_requirements", "source_hash"]


@jsii.implements(cdk.ILocalBundling)
class LocalPipBundler:
    """pip-installs manylinux wheels for the Lambda runtime into the asset, then copies our code."""

    def __init__(
        self, root: Path = REPO_ROOT, python: str = sys.executable, python_version: str = LAMBDA_PYTHON
    ) -> None:
        """``python_version``: the interpreter the wheels are for; the Lambda runtime's unless an
        asset is built to run here (the rehearsal and the import test: 3.12 is not installable here)."""
        self.root = root
        self.python = python
        self.python_version = python_version

    def try_bundle(self, output_dir: str, *args: Any, **kwargs: Any) -> bool:
        build_asset(Path(output_dir), self.root, self.python, self.python_version)
        return True


def lambda_code(bundle: bool = True) -> lambda_.Code:
    """The shared code asset. Its source path is functions/ (small); the hash covers src/ too.
    ``bundle=False`` (context benchwright:bundle=false) makes a template-only asset for quick checks."""
    if not bundle:
        return lambda_.Code.from_asset(str(REPO_ROOT / "functions"))
    return lambda_.Code.from_asset(
        str(REPO_ROOT / "functions"),
        asset_hash_type=cdk.AssetHashType.CUSTOM,
        asset_hash=source_hash(),
        bundling=cdk.BundlingOptions(
            image=cdk.DockerImage.from_registry("public.ecr.aws/sam/build-python3.12"),
            local=LocalPipBundler(),
        ),
    )
