"""The AWS packages' inits import nothing heavy (PEP 562): the runner's run session takes only
providers/aws/names.py, and a module under providers/aws/targets/kinds/ (the registry, a kind's spec
model) must not pull in the spec models, pydantic, boto3 or every target class with it; nor does the
spec package's own init, so that a kind's model can be imported first."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src"
KIND_SPECS = sorted((SRC / "benchwright" / "providers" / "aws" / "targets" / "kinds").glob("*/spec.py"))
HEAVY = ("pydantic", "boto3", "botocore", "benchwright.spec", "benchwright.providers.base")


def loaded_after(statement: str) -> list[str]:
    """The modules a fresh interpreter holds after ``statement`` (this process has imported all)."""
    code = f"import json, sys\n{statement}\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run(
        [sys.executable, "-c", code], env={"PYTHONPATH": str(SRC)}, capture_output=True, text=True, check=True
    )
    return list(json.loads(out.stdout))


@pytest.mark.parametrize(
    "statement",
    [
        "import benchwright.runner.aws_session",
        "import benchwright.providers.aws",
        "import benchwright.providers.aws.targets",
        "import benchwright.providers.aws.targets.kinds",
    ],
)
def test_importing_the_package_imports_nothing_heavy(statement: str) -> None:
    heavy = [m for m in loaded_after(statement) if any(m == h or m.startswith(h + ".") for h in HEAVY)]
    assert heavy == []


def test_targets_are_built_once_on_first_use() -> None:
    import benchwright.providers.aws as aws
    import benchwright.providers.aws.targets as targets
    from benchwright.providers.aws.targets.kinds import target_classes

    assert target_classes() == targets.TARGETS and targets.TARGETS is targets.TARGETS
    with pytest.raises(AttributeError, match="no attribute 'nothing_here'"):
        _ = targets.nothing_here
    with pytest.raises(AttributeError):  # the bundle's names live in bundle.py only
        _ = aws.aws_providers


def test_the_spec_package_imports_its_modules_when_a_name_is_asked() -> None:
    assert [
        m for m in loaded_after("import benchwright.spec") if m.startswith(("pydantic", "benchwright.spec."))
    ] == []
    assert "benchwright.spec.model" in loaded_after("from benchwright.spec import BenchmarkSpec")


@pytest.mark.parametrize(
    "module",
    [
        *(f"benchwright.providers.aws.targets.kinds.{p.parent.name}.spec" for p in KIND_SPECS),
        "benchwright.notifiers.slack.spec",
    ],
)
def test_a_kinds_spec_model_imports_first_without_a_circle(module: str) -> None:
    """A kind's model imports the spec layer, whose target union reads the kind's model back: the
    spec package's light init lets either come first."""
    assert module in loaded_after(f"import {module}")
