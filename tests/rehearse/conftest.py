"""Rehearsal tests: the whole AWS path on this machine (moto server, the runner image in podman,
stand-in servers). They need a container engine and the runner image; they skip (with the reason)
only when no engine is installed, and CI sets BENCHWRIGHT_REQUIRE_CONTAINERS=1 so they never skip there."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]


def _engine_missing() -> str | None:
    if shutil.which("podman"):
        return None
    if shutil.which("docker") and subprocess.run(["docker", "info"], capture_output=True).returncode == 0:
        return None
    return "no container engine: install podman (apt-get install podman runc debootstrap; scripts/bootstrap does)"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if Path(str(item.fspath)).parent == Path(__file__).parent:
            item.add_marker(pytest.mark.rehearse)
            item.add_marker(pytest.mark.slow)
            item.add_marker(pytest.mark.timeout(900))  # a first run may synth the stack and build the image


@pytest.fixture(scope="session")
def runner_image() -> str:
    missing = _engine_missing()
    if missing:
        if os.environ.get("BENCHWRIGHT_REQUIRE_CONTAINERS") == "1":
            pytest.fail(missing)
        pytest.skip(missing)
    from benchwright.rehearse.run import runner_image as build
    from benchwright.rehearse.stack import RehearsalError

    chosen = os.environ.get("BENCHWRIGHT_RUNNER_IMAGE")  # an image you built (scripts/runner-image build)
    if chosen:
        return chosen
    try:
        return build()
    except RehearsalError as exc:  # e.g. podman present but no base image and not root
        if os.environ.get("BENCHWRIGHT_REQUIRE_CONTAINERS") == "1":
            raise
        pytest.skip(f"the runner image could not be built here: {exc}")


def rds_spec(tmp: Path, name: str = "rehearse-rds-pg", run_s: float = 8, **target: Any) -> Path:
    """A one-cell AWS spec: RDS PostgreSQL (gp2, T class), a Fargate runner in its AZ, YCSB A."""
    spec = {
        "name": name,
        "target": {
            "provider": "rds",
            "engine": "postgres",
            "engine_version": "16.4",
            "instance_class": "db.t3.micro",
            "storage": {"type": "gp2", "size_gb": 20},
            "availability_zone": "us-east-1a",
            **target,
        },
        "runner": {"platform": "fargate", "placement": "same-az", "size": {"cpu": 1, "memory_mb": 2048}},
        "workload": {
            "name": "ycsb",
            "files": ["workloada"],
            "properties": {"recordcount": 1000},
            "phases": {"load": {"threads": 2}, "run": {"threads": 2, "duration_s": run_s}},
        },
    }
    path = tmp / f"{name}.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    return path


def containers_left(rehearsal_label: str = "benchwright.rehearsal") -> list[str]:
    """Every container any rehearsal labelled and did not remove."""
    from benchwright.rehearse.containers import engine

    done = subprocess.run(
        [engine(), "ps", "-a", "--filter", f"label={rehearsal_label}", "--format", "{{.Names}}"],
        capture_output=True,
        text=True,
        check=False,
    )
    return done.stdout.split()


def assert_clean(outcome: Any) -> None:
    """After every rehearsal: nothing left in the account, no container, no stand-in."""
    from benchwright.rehearse.resources import LEAK_KINDS

    left = {k: outcome.resources_after[k] for k in LEAK_KINDS if outcome.resources_after[k]}
    assert not left, f"left in the account: {left}"
    assert not outcome.resources_after["cleaned_up_by_rehearsal"], outcome.resources_after
    # this rehearsal's containers (other rehearsals may run on the machine at the same time)
    assert containers_left(f"benchwright.rehearsal={outcome.rehearsal_id}") == []
    for kind in LEAK_KINDS:
        assert outcome.resources_after[kind] == []  # written as empty lists, not missing
    # every Lambda signed as its own role, and no call of the run was denied (rehearse/services/iam.py)
    assert outcome.resources_after["access_denied"] == [], outcome.resources_after["access_denied"]
