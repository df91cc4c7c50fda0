"""Cells share one provisioned target and one load per dataset; a failed cell does not stop the others;
``run --resume RUN`` runs again only the cells without a result. Real servers, the real runner, the
CLI as a user runs it; counts come from its console log and the stored results."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from benchwright.runs import RunRecord
from tests.conftest import PASSWORD, PG_PORT, USER

pytestmark = [pytest.mark.servers, pytest.mark.slow]
ROOT = Path(__file__).resolve().parents[2]

SHARED = """
name: shared-targets
target: {provider: local, engine: postgres}
workload:
  name: ycsb
  files: [workloadc]
  properties: {recordcount: 300, operationcount: 1000000}
  phases:
    load: {threads: 2}
    run: {threads: 1, duration_s: 1}
matrix:
  workload.properties.fieldlength: [10, 20]   # load-shaping: two datasets
  workload.phases.run.threads: [1, 2]         # a run setting: both steps on one load
validity: {min_duration_s: 0}
"""


def run(tmp_path: Path, *args: str) -> tuple[int, str]:
    done = subprocess.run(
        [sys.executable, "-m", "benchwright.cli", "run", *args, "--store", "s.sqlite"],
        capture_output=True, text=True, timeout=300, cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT / "src"), "BW_TEST_PW": PASSWORD, "COLUMNS": "200"},
    )  # fmt: skip
    return done.returncode, done.stdout + done.stderr


def test_cells_share_one_target_and_one_load_per_dataset(tmp_path: Path) -> None:
    (tmp_path / "spec.yaml").write_text(SHARED)
    code, log = run(tmp_path, "spec.yaml", "--out", "out")
    assert code == 0, log
    record = RunRecord.model_validate_json((tmp_path / "out" / "run.json").read_text())
    assert record.status == "succeeded" and len(record.cells) == 4
    assert log.count("provisioning postgres") == 1 and log.count("torn down") == 1  # one server
    loaders = sorted(c.cell_id for c in record.cells if "load" in c.phases)
    assert loaders == ["fieldlength=10,threads=1", "fieldlength=20,threads=1"]  # two loads
    for cell in record.cells:
        shared = cell.shared
        assert shared is not None and shared.target_group == "g1"
        assert shared.provisioned_by == "fieldlength=10,threads=1 #1"
        fieldlength = cell.cell_id.split(",")[0]
        assert shared.loaded_by == f"{fieldlength},threads=1 #1"
        assert shared.loaded_here == ("load" in cell.phases)
        assert shared.runs_before == (0 if shared.loaded_here else 1)
        read = cell.phases["run"].operations["READ"]  # the run found the loaded rows
        assert read.operations > 0 and read.statuses.get("OK", 0) == read.operations
    assert log.count("data shared: loaded by") == 2


@pytest.fixture
def databases() -> Iterator[tuple[str, str]]:
    """An existing PostgreSQL database and the name of one that does not exist yet (dropped after)."""
    import psycopg

    admin = f"postgresql://{USER}:{PASSWORD}@127.0.0.1:{PG_PORT}/bench"
    ready, missing = f"bw_rs_{secrets.token_hex(4)}", f"bw_rs_{secrets.token_hex(4)}"
    with psycopg.connect(admin, autocommit=True, connect_timeout=5) as conn:
        conn.execute(f"CREATE DATABASE {ready}")
    yield ready, missing
    with psycopg.connect(admin, autocommit=True) as conn:
        for name in (ready, missing):
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def test_a_failed_cell_does_not_stop_the_others_and_resume_runs_only_it(
    tmp_path: Path, databases: tuple[str, str]
) -> None:
    import psycopg

    ready, missing = databases
    spec = f"""
name: resume-me
target: {{provider: endpoint, engine: postgres, hosts: ["127.0.0.1:{PG_PORT}"], user: {USER},
          password_env: BW_TEST_PW}}
workload:
  name: ycsb
  files: [workloadc]
  properties: {{recordcount: 200, operationcount: 1000000}}
  phases: {{load: {{threads: 1}}, run: {{threads: 1, duration_s: 1}}}}
matrix:
  target.database: [{missing}, {ready}]
validity: {{min_duration_s: 0}}
"""
    (tmp_path / "spec.yaml").write_text(spec)
    code, log = run(tmp_path, "spec.yaml", "--out", "out")
    first = RunRecord.model_validate_json((tmp_path / "out" / "run.json").read_text())
    assert code == 1 and first.status == "failed", log
    assert first.error and f"database={missing}" in first.error and "1 cell(s) failed (of 2)" in first.error
    assert [c.cell_id for c in first.cells if c.measured is not None] == [f"database={ready}"]
    kept = next(c for c in first.cells if c.cell_id == f"database={ready}")

    admin = f"postgresql://{USER}:{PASSWORD}@127.0.0.1:{PG_PORT}/bench"
    with psycopg.connect(admin, autocommit=True, connect_timeout=5) as conn:
        conn.execute(f"CREATE DATABASE {missing}")  # what the failed cell lacked
    code, log = run(tmp_path, "--resume", first.run_id)
    assert code == 0, log
    assert f"resuming run {first.run_id}: 1 cell(s) without a result: database={missing} #1" in log
    assert log.count("runner started") == 1  # only the failed cell ran again
    record = RunRecord.model_validate_json((tmp_path / "out" / "run.json").read_text())
    assert record.run_id == first.run_id and record.status == "succeeded" and record.error is None
    by_id = {c.cell_id: c for c in record.cells}
    assert set(by_id) == {f"database={ready}", f"database={missing}"}
    assert by_id[f"database={ready}"].phases["run"].started_at == kept.phases["run"].started_at  # kept
    assert by_id[f"database={missing}"].phases["run"].operations["READ"].operations > 0
    code, log = run(tmp_path, "--resume", first.run_id)
    assert code == 0 and "nothing to resume" in log
