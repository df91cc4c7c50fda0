"""``native.tool`` in a spec: the phases are measured by the native tool (here pgbench, with the
prepared protocol really passed as -M prepared), and a tool that cannot run the workload is refused."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from benchwright.errors import SpecError
from benchwright.runs import RunRecord
from benchwright.spec import parse_spec

pytestmark = [pytest.mark.servers, pytest.mark.slow]
ROOT = Path(__file__).resolve().parents[2]
SPEC = """
name: native-pgbench
target: {provider: local, engine: postgres, settings: {max_connections: 100}}
workload:
  name: tpcb
  properties: {tpcb.scale: 1, tpcb.protocol: prepared, native.tool: pgbench}
  phases:
    load: {threads: 2}
    run: {threads: 4, duration_s: 3}
"""


@pytest.mark.skipif(shutil.which("pgbench") is None, reason="pgbench not installed")
def test_a_spec_runs_its_phases_with_pgbench(tmp_path: Path) -> None:
    (tmp_path / "spec.yaml").write_text(SPEC)
    done = subprocess.run(
        [sys.executable, "-m", "benchwright.cli", "run", "spec.yaml", "--out", "out", "--store", "s.sqlite"],
        capture_output=True, text=True, timeout=300, cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    record = RunRecord.model_validate_json((tmp_path / "out" / "run.json").read_text())
    load, run = record.cells[0].phases["load"], record.cells[0].phases["run"]
    assert load.tool == run.tool == "pgbench"
    assert " -i " in load.extra["command"] and " -M prepared " in run.extra["command"]
    assert run.operations_total > 0 and run.extra["query_mode"] == "prepared"


def test_a_tool_that_cannot_run_the_workload_is_refused() -> None:
    spec = {"name": "x", "target": {"provider": "local", "engine": "postgres"},
            "workload": {"name": "tpcb", "properties": {"native.tool": "sysbench"}}}  # fmt: skip
    with pytest.raises(SpecError, match="sysbench runs workload 'oltp', not 'tpcb'") as err:
        parse_spec(spec)
    assert err.value.field == "workload.properties.native.tool"
