"""The Lambda asset is built without Docker: pip for the Lambda platform, then our code copied in."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from infra.bundling import LocalPipBundler, lambda_requirements, source_hash

ROOT = Path(__file__).resolve().parents[2]


def test_requirements_are_pinned_and_skip_what_has_no_lambda_wheel() -> None:
    reqs = lambda_requirements()
    assert all("==" in r for r in reqs), reqs
    names = {r.split("[")[0].split("==")[0].lower() for r in reqs}
    assert {"pydantic", "aws-lambda-powertools", "psycopg", "redis"} <= names
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
