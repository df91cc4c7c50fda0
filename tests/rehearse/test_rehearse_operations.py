"""Operation benchmarks on a rehearsed RDS run, through the real state machine: after the runner,
CheckOperations takes a DB snapshot (moto's hook pg_dumps the source stand-in), restores it to a new
instance (a new stand-in holding that dump), probes it with a row count, deletes both; then restores
the instance to a point in time (a dump of the source at the call) the same way. Each is timed from
its first API call to the probe's first success and reported next to the workload's results."""

from __future__ import annotations

import json
import re
from pathlib import Path

import yaml

from benchwright.rehearse.resources import LEAK_KINDS
from benchwright.rehearse.run import rehearse
from tests.rehearse.conftest import assert_clean, rds_spec
from tests.rehearse.test_rehearse import documents, one_record

RECORDS = 1000  # rds_spec's recordcount: YCSB A updates, never inserts, so the table keeps this many


def test_snapshot_restore_and_pitr_on_rds_probe_the_restored_data(runner_image: str, tmp_path: Path) -> None:
    path = rds_spec(tmp_path, name="rehearse-rds-ops", run_s=5, backup_retention_days=1)
    spec = yaml.safe_load(path.read_text())
    spec["operations"] = ["snapshot_restore", "pitr"]
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    out = tmp_path / "out"

    outcome = rehearse(path, out, image=runner_image, timeout_s=600)

    record = one_record(outcome)
    assert record["status"] == "succeeded", record.get("error")
    run = documents(record)["run"]
    assert run["throughput"] > 0  # the workload's results stand next to the operations
    ops = {o["name"]: o for o in run["timed_operations"]}
    assert list(ops) == ["snapshot_restore", "pitr"], run["timed_operations"]
    for name, op in ops.items():
        assert op["ok"] is True and op["seconds"] > 0, op
        assert f": {RECORDS:,} rows in the user tables, as before" in op["detail"], op
        assert op["steps"]["restore_s"] >= 0 and op["steps"]["ready_s"] >= 0, op
        assert op["seconds"] >= op["steps"]["restore_s"], op
        # the probe ran against the RESTORED instance's stand-in, not the source's
        probed = re.search(r"probe at 127\.0\.0\.1:(\d+)", op["detail"])
        assert probed is not None, op
        restored = f"-{'snap' if name == 'snapshot_restore' else 'pitr'}"
        standin = [e for e in outcome.events if e.startswith("stand-in postgres for") and restored in e]
        assert standin and standin[0].endswith(f":{probed.group(1)}"), (standin, op)
        assert any("stand-in restored from" in e and restored in e for e in outcome.events), outcome.events
    assert "snapshot_s" in ops["snapshot_restore"]["steps"]
    assert any("CreateDBSnapshot" in o["detail"] for o in ops.values())
    assert any("RestoreDBInstanceToPointInTime" in o["detail"] for o in ops.values())
    execution = json.loads((out / "execution.json").read_text())
    assert execution["executions"][0]["status"] == "SUCCEEDED"
    assert_clean(outcome)
    after = json.loads((out / "resources-after.json").read_text())  # snapshots included
    assert all(after[kind] == [] for kind in LEAK_KINDS) and "db_snapshots" in after, after
    print("operations:", {n: (o["seconds"], o["steps"]) for n, o in ops.items()})
