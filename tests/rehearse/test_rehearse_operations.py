"""Operation benchmarks on rehearsed RDS and Aurora runs, through the real state machine: after the
runner, CheckOperations takes a DB snapshot (moto's hook dumps the source stand-in: pg_dump, or
mariadb-dump for RDS MySQL), restores it to a new instance (a new stand-in holding that dump), probes
it with a row count (psycopg, or PyMySQL as the Lambda does for MySQL), deletes both; then restores
the instance to a point in time (a dump of the source at the call) the same way. On Aurora,
scale_out adds a reader, served by the cluster's stand-in at its own endpoint. Each is timed from
its first API call to the probe's first success and reported next to the workload's results."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from benchwright.rehearse.resources import LEAK_KINDS
from benchwright.rehearse.run import rehearse
from tests.rehearse.conftest import assert_clean, rds_spec
from tests.rehearse.test_rehearse import documents, one_record
from tests.rehearse.test_rehearse_cache import spec_file

RECORDS = 1000  # rds_spec's recordcount: YCSB A updates, never inserts, so the table keeps this many


@pytest.mark.parametrize(("engine", "version"), [("postgres", "16.4"), ("mysql", "8.0.39")])
def test_snapshot_restore_and_pitr_on_rds_probe_the_restored_data(
    runner_image: str, tmp_path: Path, engine: str, version: str
) -> None:
    path = rds_spec(tmp_path, name=f"rehearse-rds-ops-{engine[:2]}", run_s=5, backup_retention_days=1,
                    engine=engine, engine_version=version)  # fmt: skip
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
        standin = [e for e in outcome.events if e.startswith(f"stand-in {engine} for") and restored in e]
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
    print(f"operations ({engine}):", {n: (o["seconds"], o["steps"]) for n, o in ops.items()})


def test_aurora_snapshot_restore_pitr_and_scale_out_probe_their_own_endpoints(
    runner_image: str, tmp_path: Path
) -> None:
    """Aurora PostgreSQL: the restores are clusters with a writer (each its own stand-in); the reader
    scale_out adds is served by the source cluster's stand-in, and the probe connects to the reader's
    own endpoint (127.0.0.1 at that stand-in's port) and counts the rows there."""
    target = {"provider": "aurora", "engine": "postgres", "engine_version": "16.4",
              "instance_class": "db.r6g.large"}  # fmt: skip
    path = spec_file(tmp_path, "rehearse-aurora-ops", target, 5)
    spec = yaml.safe_load(path.read_text())
    spec["operations"] = ["scale_out", "snapshot_restore", "pitr"]
    path.write_text(yaml.safe_dump(spec, sort_keys=False))

    outcome = rehearse(path, tmp_path / "out", image=runner_image, timeout_s=600)

    record = one_record(outcome)
    assert record["status"] == "succeeded", record.get("error")
    ops = {o["name"]: o for o in documents(record)["run"]["timed_operations"]}
    assert list(ops) == ["scale_out", "snapshot_restore", "pitr"], ops
    ports = {}
    for name, op in ops.items():
        assert op["ok"] is True and op["seconds"] >= 0, op
        assert f": {RECORDS:,} rows in the user tables, as before" in op["detail"], op
        probed = re.search(r"probe at 127\.0\.0\.1:(\d+)", op["detail"])
        assert probed is not None, op
        ports[name] = probed.group(1)
    assert "CreateDBInstance (a reader)" in ops["scale_out"]["detail"]
    assert "RestoreDBClusterFromSnapshot" in ops["snapshot_restore"]["detail"]
    assert "RestoreDBClusterToPointInTime" in ops["pitr"]["detail"]
    standins = {e.split(" for ", 1)[1].split(" on ")[0]: e.rsplit(":", 1)[1]
                for e in outcome.events if e.startswith("stand-in postgres for ")}  # fmt: skip
    source = [port for ident, port in standins.items() if not ident.endswith(("-snap", "-pitr"))]
    assert ports["scale_out"] in source, (ports, standins)  # the reader: the cluster's own stand-in
    for name, short in (("snapshot_restore", "-snap"), ("pitr", "-pitr")):
        restored = [port for ident, port in standins.items() if ident.endswith(short)]
        assert restored == [ports[name]], (name, ports, standins)  # a restored cluster's stand-in
    assert_clean(outcome)
    print("aurora operations:", {n: (o["seconds"], o["steps"]) for n, o in ops.items()})


def test_node_replace_on_a_yugabytedb_cluster_probes_through_the_replacement(
    runner_image: str, tmp_path: Path
) -> None:
    """A three-node YugabyteDB target (one PostgreSQL stand-in on the three node addresses), in the
    seed's order: CheckOperations launches a replacement at a NEW address (the stand-in answers there
    too), probes the rows through it, blacklists the old node's tserver with yb-admin over SSM Run
    Command (the stand-in's yb-admin), waits for the load move to report 100 % (the clock stops there),
    then terminates the old node (its address stops answering) and removes it from the blacklist;
    Teardown terminates the replacement with the others."""
    path = rds_spec(tmp_path, name="rehearse-yb-replace", run_s=5)
    spec = yaml.safe_load(path.read_text())
    spec["target"] = {"provider": "ec2", "engine": "postgres", "template": "yugabytedb-3node",
                      "instance_type": "m6i.large"}  # fmt: skip
    spec["operations"] = ["node_replace"]
    path.write_text(yaml.safe_dump(spec, sort_keys=False))

    outcome = rehearse(path, tmp_path / "out", image=runner_image, timeout_s=600)

    record = one_record(outcome)
    assert record["status"] == "succeeded", record.get("error")
    run = documents(record)["run"]
    assert run["throughput"] > 0
    (op,) = run["timed_operations"]
    assert op["name"] == "node_replace" and op["ok"] is True, op
    clocked = ("launch_s", "ready_s", "blacklist_s", "rereplicate_s")
    assert set(op["steps"]) == {*clocked, "serving_s", "terminate_s"}, op
    assert abs(op["seconds"] - sum(op["steps"][k] for k in clocked)) < 0.01, op  # until 100 %
    assert op["steps"]["serving_s"] <= op["seconds"], op
    assert f": {RECORDS:,} rows in the user tables, as before" in op["detail"], op
    probed = re.search(r"probe through the new node at (127\.[\d.]+):5433", op["detail"])
    old = re.search(r"change_blacklist ADD (127\.[\d.]+):9100; load move 100 % after", op["detail"])
    assert probed is not None and old is not None, op
    address, victim = probed.group(1), old.group(1)
    assert address != victim, op  # the replacement has its own address: the blacklist spares it
    said = "\n".join(outcome.events)
    assert f"{address} answers too" in said and f"{victim} no longer answers" in said, said
    added = said.index(f"change_blacklist ADD {victim}:9100")
    moved = said.index("get_load_move_completion 100 %", added)
    assert (
        moved
        < said.index(f"{victim} no longer answers")
        < said.index(f"change_blacklist REMOVE {victim}:9100")
    )
    assert_clean(outcome)
    print(
        "node_replace:",
        op["seconds"],
        op["steps"],
        [e for e in outcome.events if address in e or "yb-admin" in e],
    )
