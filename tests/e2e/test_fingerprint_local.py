"""Issue 27 end to end: `benchwright run` of a throwaway local Redis stores a measured phase with a
fingerprint (the orchestrator's side: local disk, the spec's digest; the runner's: its CPU and the
server's own version) and a network floor, which `show` and `table` then print from the store."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from benchwright.providers.local.sqlite_store import SQLiteResultStore
from benchwright.report.units import fmt_latency
from benchwright.spec import load_spec
from benchwright.stages.context import spec_digest

pytestmark = [pytest.mark.servers, pytest.mark.slow]
ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "COLUMNS": "160"}


def bw(*args: str, cwd: Path) -> str:
    done = subprocess.run([sys.executable, "-m", "benchwright.cli", *args], capture_output=True, text=True,
                          timeout=420, cwd=cwd, env=ENV)  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    return done.stdout


def test_a_local_run_stores_and_shows_its_fingerprint_and_floor(tmp_path: Path) -> None:
    spec = {
        "name": "fingerprint-local",
        "target": {"provider": "local", "engine": "redis", "settings": {"appendonly": "no"}},
        "workload": {
            "name": "ycsb",
            "files": ["workloadc"],
            "properties": {"recordcount": 500, "fieldcount": 2, "fieldlength": 20},
            "phases": {"load": {"threads": 1}, "run": {"threads": 2, "duration_s": 2}},
        },
    }
    (tmp_path / "spec.yaml").write_text(yaml.safe_dump(spec))
    store = tmp_path / "store.sqlite"
    bw("run", "spec.yaml", "--out", str(tmp_path / "out"), "--store", str(store), cwd=tmp_path)
    run_id = yaml.safe_load((tmp_path / "out" / "run.json").read_text())["run_id"]

    record = SQLiteResultStore(store).get_run(run_id)
    assert record is not None
    doc = record.cells[0].phases["run"]
    fp = doc.fingerprint
    assert fp is not None and doc.server_version
    assert fp.engine_version == doc.server_version and fp.engine_version.startswith("redis_version:")
    assert (fp.runner_class, fp.runner_platform, fp.storage) == ("local", "local", "local disk")
    assert fp.spec_digest == spec_digest(load_spec(tmp_path / "spec.yaml"))
    assert record.cells[0].phases["load"].fingerprint.key() == fp.key()  # type: ignore[union-attr]
    floor = doc.network_floor
    assert floor is not None and floor.command == "PING" and floor.round_trips == 200
    assert 0 < floor.p50_us <= floor.p99_us <= floor.max_us
    assert record.cells[0].phases["load"].network_floor is None

    shown = bw("show", run_id, "--store", str(store), cwd=tmp_path)
    assert "measured on (all cells)" in shown and fp.key() in shown and "storage: local disk" in shown
    assert "network floor: PING x200 on one connection" in shown
    table = bw(
        "table", run_id, "--store", str(store), "--metric", "throughput,floor_p50,floor_p99", cwd=tmp_path
    )
    assert "floor p50" in table and fmt_latency(floor.p50_us) in table and fmt_latency(floor.p99_us) in table
    report = (tmp_path / "out" / "report.html").read_text()
    assert 'class="measured-on"' in report and fp.key() in report
