"""Issue 14, item 2: a canary password and a canary environment variable appear in no artifact.

A local `benchwright run` against an existing PostgreSQL (an endpoint target whose role's password is
the canary, passed by ``password_env``), with another canary in the environment. Every file of the
out directory, the SQLite store, the report and the command's stdout/stderr are searched for both.
"""

from __future__ import annotations

import json
import secrets
import subprocess
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from tests.conftest import PASSWORD, PG_PORT, USER
from tests.e2e.test_local_service import cli, env

pytestmark = [pytest.mark.servers, pytest.mark.slow]

ADMIN = f"postgresql://{USER}:{PASSWORD}@127.0.0.1:{PG_PORT}/bench"


@pytest.fixture
def canary_role() -> Iterator[tuple[str, str]]:
    role = f"bw_canary_{secrets.token_hex(4)}"
    password = f"canarypw{secrets.token_hex(8)}"
    with psycopg.connect(ADMIN, autocommit=True) as conn:
        conn.execute(f"CREATE ROLE {role} LOGIN PASSWORD '{password}'")
        conn.execute(f"CREATE DATABASE {role} OWNER {role}")
    yield role, password
    with psycopg.connect(ADMIN, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {role} WITH (FORCE)")
        conn.execute(f"DROP ROLE IF EXISTS {role}")


def test_no_artifact_of_a_local_run_holds_the_canaries(tmp_path: Path, canary_role: tuple[str, str]) -> None:
    role, password = canary_role
    env_canary = f"canaryenv{secrets.token_hex(8)}"
    spec = tmp_path / "canary.yaml"
    spec.write_text(
        f"""
name: canary
target:
  provider: endpoint
  engine: postgres
  hosts: ["127.0.0.1:{PG_PORT}"]
  database: {role}
  user: {role}
  password_env: BW_CANARY_PASSWORD
workload:
  name: sql
  properties:
    sql.init: "CREATE TABLE IF NOT EXISTS canary (id text PRIMARY KEY)"
    sql.script: "INSERT INTO canary VALUES ({{{{uuid}}}})"
  phases:
    run: {{threads: 2, duration_s: 2}}
"""
    )
    out, store = tmp_path / "out", tmp_path / "store.sqlite"
    environment = {
        **env(),
        "BW_CANARY_PASSWORD": password,
        "BW_CANARY_OTHER": env_canary,
        "BENCHWRIGHT_STATE_DIR": str(tmp_path / "state"),
    }
    result = subprocess.run(
        cli("run", str(spec), "--out", str(out), "--store", str(store)),
        capture_output=True,
        text=True,
        env=environment,
        cwd=tmp_path,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    run_id = json.loads((out / "run.json").read_text())["run_id"]
    shown = subprocess.run(
        cli("show", "--store", str(store), "--json", run_id),
        capture_output=True,
        text=True,
        env=environment,
        timeout=120,
    )
    artifacts: dict[str, bytes] = {
        "stdout": result.stdout.encode(),
        "stderr": result.stderr.encode(),
        "show": shown.stdout.encode() + shown.stderr.encode(),
    }
    files = [p for p in out.rglob("*") if p.is_file()] + [p for p in tmp_path.glob("store.sqlite*")]
    assert any(p.name == "report.html" for p in files) and any(p.name == "run.json" for p in files)
    assert len(files) > 5  # plans, results, logs, metrics, cell documents: a real run's artifacts
    artifacts.update({str(p): p.read_bytes() for p in files})
    leaks = [
        name for name, data in artifacts.items() if password.encode() in data or env_canary.encode() in data
    ]
    assert leaks == []
