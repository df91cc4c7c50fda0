"""Layers point one way: CLI / API / functions -> stages -> providers -> runner, results, judge.

Every module's imports (top level and inside functions) are read from its syntax tree, so a lazy
import cannot hide an upward dependency.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src" / "benchwright"


def imports_of(path: Path) -> set[str]:
    """Every module name ``path`` imports (``from a.b import c`` gives ``a.b`` and ``a.b.c``)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def modules(*parts: str) -> list[Path]:
    paths: list[Path] = []
    for part in parts:
        target = SRC / part
        paths += sorted(target.rglob("*.py")) if target.is_dir() else [target.with_suffix(".py")]
    assert paths and all(p.exists() for p in paths), parts
    return paths


def offenders(paths: list[Path], forbidden: tuple[str, ...]) -> list[str]:
    return sorted(
        f"{path.relative_to(SRC)} imports {name}"
        for path in paths
        for name in imports_of(path)
        if any(name == f or name.startswith(f + ".") for f in forbidden)
    )


UPPER = (
    "benchwright.cli",
    "benchwright.commands",
    "benchwright.api",
    "benchwright.local",
    "benchwright.rehearse",
)


def test_providers_import_nothing_from_the_stages_or_above() -> None:
    assert offenders(modules("providers"), ("benchwright.stages", *UPPER)) == []


def test_stages_import_no_cloud_or_local_provider() -> None:
    forbidden = ("benchwright.providers.aws", "benchwright.providers.local", *UPPER)
    assert offenders(modules("stages"), forbidden) == []


# The AWS kinds' registry and their spec models: what the spec layer may take from the providers.
KINDS = "benchwright.providers.aws.targets.kinds"
KIND_FOLDERS = SRC / "providers" / "aws" / "targets" / "kinds"


def in_kinds(name: str, *modules: str) -> bool:
    """``name`` is the registry (``KINDS``, or a name defined in it), a kind's spec module
    (``KINDS.NAME.spec``, or a name in it), or one of the registry's ``modules`` (or a name in it)."""
    if name != KINDS and not name.startswith(KINDS + "."):
        return False
    rest = name[len(KINDS) + 1 :].split(".") if name != KINDS else []
    if rest and rest[0] in modules:
        return True
    if len(rest) in (2, 3) and rest[1] == "spec":
        return (KIND_FOLDERS / rest[0] / "spec.py").exists()
    return len(rest) <= 1 and not any(
        (KIND_FOLDERS / r).is_dir() or (KIND_FOLDERS / f"{r}.py").exists() for r in rest
    )


def test_the_spec_imports_of_the_providers_only_the_kinds_registry_and_spec_models() -> None:
    found = offenders(modules("spec"), ("benchwright.providers",))
    assert found, "spec/targets.py reads the kinds' registry: the check must see it"
    assert [o for o in found if not in_kinds(o.rpartition(" ")[2])] == []


@pytest.mark.parametrize(
    ("name", "allowed"),
    [
        (KINDS, True),
        (f"{KINDS}.spec_models", True),
        (f"{KINDS}.rds.spec", True),
        (f"{KINDS}.rds.spec.RdsTarget", True),
        (f"{KINDS}.rds", False),
        (f"{KINDS}.rds.kind", False),
        (f"{KINDS}.rds.target.RdsTarget", False),
        (f"{KINDS}.base", False),
        ("benchwright.providers.aws.pricing", False),
    ],
)
def test_the_kinds_check_tells_the_registry_and_models_from_the_rest(name: str, allowed: bool) -> None:
    assert in_kinds(name) is allowed


def test_a_kinds_spec_model_imports_only_the_spec_layer() -> None:
    """A kind's model sits below the providers, as the spec layer does: it may import the spec's own
    modules and nothing else of Benchwright (its kind's descriptor and target class read it)."""
    paths = sorted(KIND_FOLDERS.glob("*/spec.py"))
    assert len(paths) >= 6
    found = [
        f"{path.relative_to(SRC)} imports {name}"
        for path in paths
        for name in imports_of(path)
        if name.startswith("benchwright") and not name.startswith("benchwright.spec.")
    ]
    assert found == []


def test_the_kinds_registry_imports_only_the_descriptor_base_and_the_spec_models() -> None:
    """The spec layer imports the registry: it must stay as light as a spec model."""
    names = [n for n in imports_of(KIND_FOLDERS / "__init__.py") if n.startswith("benchwright")]
    assert names and [n for n in names if not in_kinds(n, "base")] == []


# The names every AWS side must spell alike (tags, prefixes, metrics): a module of constants that
# imports nothing, so the runner's run session (runner/aws_session.py) tags with the same key.
SHARED_NAMES = "benchwright.providers.aws.names"


def test_the_runner_results_and_judge_import_nothing_above_them() -> None:
    paths = modules("runner", "judge", "results", "runs", "merge")
    found = offenders(paths, ("benchwright.providers", "benchwright.stages", *UPPER))
    assert [o for o in found if not o.endswith((f" {SHARED_NAMES}", f" {SHARED_NAMES}.RUN_ID_TAG"))] == []


def test_the_shared_names_import_nothing() -> None:
    """What the runner may take from the providers is constants, never code."""
    names = imports_of(SRC / "providers" / "aws" / "names.py")
    assert names, "names.py imports at least typing's Final: the reader must see its imports"
    assert [n for n in names if n.startswith("benchwright")] == []


def test_nothing_in_the_core_imports_the_lambda_framework() -> None:
    assert offenders(modules("."), ("aws_lambda_powertools",)) == []


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("from benchwright.stages import RunState", {"benchwright.stages", "benchwright.stages.RunState"}),
        ("def f():\n    import benchwright.stages.steps\n", {"benchwright.stages.steps"}),
        ("from . import sibling", set()),
    ],
)
def test_the_check_sees_top_level_and_lazy_imports(tmp_path: Path, source: str, expected: set[str]) -> None:
    path = tmp_path / "m.py"
    path.write_text(source)
    assert imports_of(path) == expected
