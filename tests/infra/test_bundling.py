"""The Lambda asset is built without Docker: pip for the Lambda platform, then our code copied in."""

from __future__ import annotations

import json
import stat
import sys
from pathlib import Path

import pytest

from benchwright.predeploy.asset_imports import IMPORT_ALL, alone
from infra.bundling import LocalPipBundler, lambda_requirements, source_hash

ROOT = Path(__file__).resolve().parents[2]


def test_requirements_are_pinned_and_skip_what_has_no_lambda_wheel() -> None:
    reqs = lambda_requirements()
    assert all("==" in r for r in reqs), reqs
    names = {r.split("[")[0].split("==")[0].lower() for r in reqs}
    # psycopg and PyMySQL: CheckOperations' probe query of PostgreSQL and MySQL targets
    assert {"pydantic", "aws-lambda-powertools", "psycopg", "pymysql", "redis"} <= names
    assert "mysqlclient" not in names
    assert "slack-sdk" in names  # FinishRun's Slack notification imports it


def test_bundler_asks_pip_for_manylinux_cp312_wheels_and_copies_our_code(tmp_path: Path) -> None:
    # A stand-in interpreter records the pip command instead of downloading anything.
    log = tmp_path / "argv.json"
    fake = tmp_path / "python"
    fake.write_text(f"#!/bin/sh\nprintf '%s\\n' \"$@\" > {log}\n")
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    out = tmp_path / "asset"
    out.mkdir()
    assert LocalPipBundler(python=str(fake)).try_bundle(str(out)) is True
    argv = log.read_text().split("\n")
    assert argv[:3] == ["-m", "pip", "install"]
    assert argv[argv.index("--platform") + 1] == "manylinux2014_x86_64"
    assert argv[argv.index("--python-version") + 1] == "3.12"
    assert "--only-binary=:all:" in argv
    assert (out / "benchwright" / "errors.py").is_file()
    assert (out / "functions" / "api.py").is_file()
    assert not list(out.rglob("__pycache__"))
    # FinishRun renders the report: its templates and the pinned uPlot travel with the code
    assert (out / "benchwright" / "report" / "templates" / "report.html.j2").is_file()
    vendor = out / "benchwright" / "report" / "vendor" / "uplot"
    assert json.loads((vendor / "package.json").read_text())["version"] == "1.6.32"
    assert (vendor / "dist" / "uPlot.iife.min.js").stat().st_size > 40_000
    assert (vendor / "LICENSE").read_text().startswith("The MIT License")
    assert "jinja2==3.1.6" in argv and "markupsafe==3.0.4" in argv


def test_bundling_without_npm_ci_names_the_fix(tmp_path: Path) -> None:
    fake = tmp_path / "python"
    fake.write_text("#!/bin/sh\nexit 0\n")
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    root = tmp_path / "checkout"
    for top in ("src/benchwright", "functions"):
        (root / top).mkdir(parents=True)
    (root / "pyproject.toml").write_text((ROOT / "pyproject.toml").read_text())
    with pytest.raises(RuntimeError, match=r"uPlot is not installed .*npm ci"):
        LocalPipBundler(root=root, python=str(fake)).try_bundle(str(tmp_path / "out"))


def test_bundler_failure_is_reported_with_pips_message(tmp_path: Path) -> None:
    fake = tmp_path / "python"
    fake.write_text("#!/bin/sh\necho 'No matching distribution found for nothing' >&2\nexit 1\n")
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    with pytest.raises(RuntimeError, match="No matching distribution"):
        LocalPipBundler(python=str(fake)).try_bundle(str(tmp_path))


def test_source_hash_changes_with_the_code(tmp_path: Path) -> None:
    for top in ("src/benchwright", "functions"):
        (tmp_path / top).mkdir(parents=True)
    (tmp_path / "pyproject.toml").write_text(json.dumps({}))
    (tmp_path / "functions" / "a.py").write_text("x = 1\n")
    before = source_hash(tmp_path)
    (tmp_path / "functions" / "a.py").write_text("x = 2\n")
    assert source_hash(tmp_path) != before
    (tmp_path / "functions" / "t.html.j2").write_text("{{ a }}")  # templates are part of the asset
    with_template = source_hash(tmp_path)
    assert with_template != before
    (tmp_path / "functions" / "t.html.j2").write_text("{{ b }}")
    changed_template = source_hash(tmp_path)
    assert changed_template != with_template
    (tmp_path / "package.json").write_text('{"dependencies": {"uplot": "1.6.31"}}')  # uPlot's pin
    assert source_hash(tmp_path) != changed_template


# The asset built once for this module's slow tests: the real bundler (real pip) with wheels for this
# interpreter instead of the Lambda's (3.12 is not installable here).
_HERE = f"{sys.version_info.major}.{sys.version_info.minor}"


@pytest.fixture(scope="module")
def local_asset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("asset")
    assert LocalPipBundler(python_version=_HERE).try_bundle(str(out)) is True
    return out


@pytest.mark.slow
def test_the_asset_alone_renders_the_report(local_asset: Path) -> None:
    """FinishRun renders the report from the asset: Jinja2, the templates and uPlot must all be inside."""
    script = (
        "import benchwright.report.assets as a, benchwright.report.html as h, functions.finish_run;"
        "from benchwright.report.sample import sweep_run;"
        "html = h.render_html(sweep_run(seconds=20));"
        "import pymysql, functions.check_operations;"  # the MySQL probe's driver is in the asset
        "print(a.uplot().version, str(a.VENDOR_DIR).startswith(sys.argv[1]), len(html), 'var uPlot=function' in html,"
        " pymysql.__file__.startswith(sys.argv[1]))"
    )
    done = alone(local_asset, script)
    assert done.returncode == 0, done.stderr[-3000:]
    version, in_asset, size, inlined, pymysql_in_asset = done.stdout.split()
    assert (version, in_asset, inlined) == ("1.6.32", "True", "True") and int(size) > 50_000
    assert pymysql_in_asset == "True"


# Every module of functions/ and every handler the stack names, then what handlers import lazily on
# their paths: benchwright.predeploy.asset_imports.IMPORT_ALL, which `benchwright deploy --check` runs too.
@pytest.mark.slow
def test_every_handler_imports_from_the_asset_alone(local_asset: Path) -> None:
    """A package a handler needs but the asset lacks fails here, at build time, not on the first night."""
    done = alone(local_asset, IMPORT_ALL, str(ROOT / "examples" / "exp3-rds-mysql-storage.aws.yaml"))
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.splitlines()
    modules = [line.split() for line in lines if line.startswith("module ")]
    handlers = [line.split() for line in lines if line.startswith("handler ")]
    expected = sorted(p.stem for p in (ROOT / "functions").glob("*.py") if p.stem != "__init__")
    assert [m[1] for m in modules] == [f"functions.{stem}" for stem in expected]
    assert all(m[2] == "True" for m in modules), modules
    assert len(handlers) >= 16 and all(h[2] == "True" for h in handlers), handlers
    assert "slack slack_sdk.webhook.client True" in lines
    assert "site 1 True False" in lines  # FinishRun's site pages render without numpy or ruptures
    assert "mysql-spec mysql False" in lines  # validated without importing the runner's MySQL client
    assert lines[-1] == "mysqldb absent"  # and the asset does not carry it
