"""The Lambda asset's contents, built without CDK: wheels for a platform plus our code and uPlot.

``infra.bundling`` wires this into `cdk synth` (ILocalBundling); the rehearsal builds the same asset
for the interpreter at hand and runs every handler from it (benchwright.rehearse.asset), so nothing
here may import aws_cdk (which starts Node).

FinishRun renders the HTML report, so the asset also carries the report's templates (package data
under src/benchwright/report/templates, copied with the code) and uPlot, the chart library, copied
from the npm package that package.json pins into ``benchwright/report/vendor/uplot`` (where
report/assets.py looks first). uPlot is never committed here; a checkout without ``npm ci`` cannot
build the asset.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

from infra.constants import LAMBDA_PLATFORM, LAMBDA_PYTHON, REPO_ROOT

# The runner's MySQL client, which no Lambda imports (validation reads MySQL settings without it,
# runner/drivers/mysql_settings.py; CheckOperations probes with PyMySQL) and which has no manylinux
# wheel. Everything else a handler imports must be here: tests/infra/test_bundling.py imports every
# handler module, the Slack client and a MySQL validation from a built asset alone.
_EXCLUDED = ("mysqlclient",)
_SOURCES = ("src/benchwright", "functions")
_UPLOT = Path("node_modules") / "uplot"
_UPLOT_FILES = ("package.json", "LICENSE", "dist/uPlot.iife.min.js", "dist/uPlot.min.css")
_UPLOT_DEST = Path("benchwright") / "report" / "vendor" / "uplot"


def lambda_requirements(root: Path = REPO_ROOT) -> list[str]:
    """Pinned requirements for the Lambda code: core + aws extra + the drivers used by readiness probes."""
    project = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    extras = project["optional-dependencies"]
    reqs = [*project["dependencies"], *extras.get("aws", []), *extras.get("runner", [])]
    keep = [r for r in reqs if not r.lower().startswith(_EXCLUDED)]
    return list(dict.fromkeys(keep))


def source_hash(root: Path = REPO_ROOT) -> str:
    """A content hash of what goes into the asset, cheaper than fingerprinting the whole repo."""
    digest = hashlib.sha256()
    digest.update((root / "pyproject.toml").read_bytes())
    if (root / "package.json").is_file():  # pins uPlot, which the asset carries
        digest.update((root / "package.json").read_bytes())
    for top in _SOURCES:
        for path in sorted((root / top).rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc":
                digest.update(str(path.relative_to(root)).encode())
                digest.update(path.read_bytes())
    return digest.hexdigest()


def copy_uplot(root: Path, out: Path) -> None:
    """The report's chart library from the installed npm package into the asset (see module doc)."""
    missing = [name for name in _UPLOT_FILES if not (root / _UPLOT / name).is_file()]
    if missing:
        raise RuntimeError(
            f"Lambda bundling: uPlot is not installed in {root / _UPLOT} (missing {', '.join(missing)}): "
            "run `npm ci` (scripts/bootstrap does); FinishRun renders reports with it"
        )
    for name in _UPLOT_FILES:
        dest = out / _UPLOT_DEST / name
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(root / _UPLOT / name, dest)


def build_asset(
    out: Path, root: Path = REPO_ROOT, python: str = sys.executable, python_version: str = LAMBDA_PYTHON
) -> None:
    """pip-install wheels for ``python_version`` on the Lambda platform into ``out``, then copy our
    code and uPlot. ``python`` runs pip; ``python_version`` is the interpreter the wheels are for."""
    cmd = [
        python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
        "--platform", LAMBDA_PLATFORM, "--implementation", "cp",
        "--python-version", python_version, "--only-binary=:all:", "--no-compile",
        "--target", str(out), *lambda_requirements(root),
    ]  # fmt: skip
    result = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise RuntimeError(f"Lambda bundling: pip failed:\n{result.stderr[-2000:]}")
    for top in _SOURCES:
        src = root / top
        dest = out / Path(top).name
        if src.is_dir():
            shutil.copytree(src, dest, dirs_exist_ok=True, ignore=shutil.ignore_patterns("__pycache__"))
    copy_uplot(root, out)
