"""The Lambda asset is built without Docker: pip for the Lambda platform, then our code copied in."""

from __future__ import annotations

import json
import stat
import subprocess
from pathlib import Path

import pytest

from infra.bundling import LocalPipBundler, lambda_requirements, source_hash

ROOT = Path(__file__).resolve().parents[2]


def test_requirements_are_pinned_and_skip_what_has_no_lambda_wheel() -> None:
    reqs = lambda_requirements()
    assert all("==" in r for r in reqs), reqs
    names = {r.split("[")[0].split("==")[0].lower() for r in reqs}
    # psycopg and PyMySQL: CheckOperations' probe query of PostgreSQL and MySQL targets
    assert {"pydantic", "aws-lambda-powertools", "psycopg", "pymysql", "redis"} <= names
    assert "mysqlclient" not in names


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


@pytest.mark.slow
def test_the_asset_alone_renders_the_report(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The real bundler (real pip) builds the asset for this interpreter instead of the Lambda's, and
    the report is rendered from that directory alone (`python -I -S`: no venv, no site-packages, no checkout, no
    node_modules), as FinishRun imports it: Jinja2, the templates and uPlot must all be inside."""
    import sys

    import infra.bundling as bundling

    monkeypatch.setattr(bundling, "LAMBDA_PYTHON", f"{sys.version_info.major}.{sys.version_info.minor}")
    out = tmp_path / "asset"
    out.mkdir()
    assert LocalPipBundler().try_bundle(str(out)) is True
    script = (
        "import sys; sys.path.insert(0, sys.argv[1]);"
        "import benchwright.report.assets as a, benchwright.report.html as h, functions.finish_run;"
        "from benchwright.report.sample import sweep_run;"
        "html = h.render_html(sweep_run(seconds=20));"
        "import pymysql, functions.check_operations;"  # the MySQL probe's driver is in the asset
        "print(a.uplot().version, str(a.VENDOR_DIR).startswith(sys.argv[1]), len(html), 'var uPlot=function' in html,"
        " pymysql.__file__.startswith(sys.argv[1]))"
    )
    done = subprocess.run([sys.executable, "-I", "-S", "-c", script, str(out)], capture_output=True, text=True,
                          timeout=300, check=False, cwd=tmp_path, env={"PATH": "/usr/bin:/bin",
                          "AWS_DEFAULT_REGION": "us-east-1", "POWERTOOLS_SERVICE_NAME": "t"})  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    version, in_asset, size, inlined, pymysql_in_asset = done.stdout.split()
    assert (version, in_asset, inlined) == ("1.6.32", "True", "True") and int(size) > 50_000
    assert pymysql_in_asset == "True"
