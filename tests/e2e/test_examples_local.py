"""Every local example runs end to end at a reduced size (--quick, first matrix cell), so the examples
users copy keep working. An example whose workload is not registered yet is skipped, saying which."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from benchwright.runner.workloads.base import WORKLOADS, workload_class
from benchwright.runs import RunRecord
from benchwright.spec import load_suite

pytestmark = [pytest.mark.servers, pytest.mark.slow]
ROOT = Path(__file__).resolve().parents[2]
LOCAL_EXAMPLES = sorted((ROOT / "examples").glob("*.local.yaml"))


def test_there_is_a_local_example_per_seed_experiment() -> None:
    assert {p.name.split("-")[0] for p in LOCAL_EXAMPLES} == {"exp1", "exp2", "exp3", "exp4", "exp5"}


@pytest.mark.parametrize("path", LOCAL_EXAMPLES, ids=lambda p: p.name.removesuffix(".local.yaml"))
def test_local_example_runs_at_reduced_size(path: Path, tmp_path: Path) -> None:
    import yaml

    raw = yaml.safe_load(path.read_text())
    names = {b["workload"]["name"] for b in raw.get("benchmarks", [raw])}
    workload_class("ycsb")  # import the registry
    missing = sorted(n for n in names if n not in WORKLOADS)
    if missing:
        pytest.skip(f"workload(s) {', '.join(missing)} not registered yet")
    suite = load_suite(path)
    out = tmp_path / "out"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "benchwright.cli",
            "run",
            str(path),
            "--quick",
            "--max-cells",
            "1",
            "--out",
            str(out),
            "--store",
            str(tmp_path / "store.sqlite"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT / "src"), "COLUMNS": "160"},
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    dirs = [out] if len(suite.benchmarks) == 1 else [out / b.name for b in suite.benchmarks]
    for d in dirs:
        record = RunRecord.model_validate_json((d / "run.json").read_text())
        assert record.status == "succeeded"
        measured = record.cells[0].measured
        assert measured is not None and measured.operations_total > 0
        assert (d / "report.html").exists()
