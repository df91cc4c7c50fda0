"""A failed matrix cell does not stop the others (--keep-going, the default): the run measures every
other cell, then fails naming the failed one; --no-keep-going stops at the first failure."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from benchwright.runs import RunRecord

pytestmark = [pytest.mark.servers, pytest.mark.slow]
ROOT = Path(__file__).resolve().parents[2]
SPEC = """
name: keep-going
target: {provider: local, engine: postgres, settings: {max_connections: 50}}
workload:
  name: sql
  properties: {sql.script: "SELECT 1"}
  phases:
    run: {threads: 1, duration_s: 1}
matrix:
  target.settings.shared_buffers: ["999TB", "16MB"]   # the first cell's server cannot start
validity: {min_duration_s: 0}
"""


def run(tmp_path: Path, *extra: str) -> tuple[int, RunRecord]:
    out = tmp_path / ("out" + "".join(extra).replace("-", ""))
    done = subprocess.run(
        [sys.executable, "-m", "benchwright.cli", "run", "spec.yaml", "--out", str(out), "--store", "s.sqlite", *extra],
        capture_output=True, text=True, timeout=240, cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
    )  # fmt: skip
    return done.returncode, RunRecord.model_validate_json((out / "run.json").read_text())


def test_a_failed_cell_does_not_stop_the_others(tmp_path: Path) -> None:
    (tmp_path / "spec.yaml").write_text(SPEC)
    code, record = run(tmp_path)
    assert code == 1 and record.status == "failed"
    assert record.error and "shared_buffers=999TB" in record.error and "1 cell(s) failed" in record.error
    measured = [c.cell_id for c in record.cells if c.measured is not None and c.measured.operations_total > 0]
    assert measured == ["shared_buffers=16MB"]
    code, record = run(tmp_path, "--no-keep-going")
    assert code == 1 and not any(c.cell_id == "shared_buffers=16MB" for c in record.cells)
