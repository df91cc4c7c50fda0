"""Operation benchmarks on Aurora (snapshot restore, PITR, scale-out) against moto, step by step as
CheckOperations takes them. moto's clusters and instances all answer at the local PostgreSQL (as the
workflow world's RDS instances do), so the probe really counts the rows of a table it can see; the
RDS path runs through the state machine in tests/statemachines and the rehearsal."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from benchwright.providers.aws.janitor import leftovers
from tests.conftest import PASSWORD, PG_PORT, USER
from tests.functions.test_aws_targets import target

ROWS = 321


@pytest.fixture
def at_local_postgres(pg_url: str) -> Iterator[str]:
    """Every moto cluster and instance endpoint is the local PostgreSQL; a table of ROWS rows."""
    import psycopg
    from moto.rds.models import DBCluster, DBInstance

    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("CREATE TABLE IF NOT EXISTS usertable (k int primary key)")
        conn.execute("TRUNCATE usertable")
        conn.execute("INSERT INTO usertable SELECT generate_series(1, %s)", (ROWS,))
    mp = pytest.MonkeyPatch()
    local_port = property(lambda self: PG_PORT, lambda self, value: None)
    mp.setattr(DBCluster, "endpoint", property(lambda self: "127.0.0.1"))
    mp.setattr(DBCluster, "port", local_port, raising=False)
    mp.setattr(DBInstance, "address", property(lambda self: "127.0.0.1"))
    mp.setattr(DBInstance, "port", local_port, raising=False)
    get_cfg = DBCluster.get_cfg

    def cfg(cluster: Any) -> dict[str, Any]:  # moto 5.2.5 cannot restore a cluster whose master
        cluster.__dict__.setdefault("_master_user_password", None)  # password RDS manages
        result: dict[str, Any] = get_cfg(cluster)
        return result

    mp.setattr(DBCluster, "get_cfg", cfg)
    yield pg_url.rsplit("/", 1)[-1]
    mp.undo()


def _run(t: Any, name: str) -> tuple[dict[str, Any], int]:
    progress: dict[str, Any] = {}
    for polls in range(1, 30):  # bounded: moto makes everything available at once
        progress, entry = t.operation_step(name, progress)
        if entry is not None:
            return entry, polls
    raise AssertionError(f"{name} did not finish: {progress}")


def test_aurora_snapshot_restore_pitr_and_scale_out_probe_and_leave_nothing(
    aws: Any, at_local_postgres: str
) -> None:
    spec = {"provider": "aurora", "engine": "postgres", "engine_version": "16.4",
            "instance_class": "db.r6g.large", "database": at_local_postgres, "username": USER}  # fmt: skip
    t = target(aws, spec, "ops-aurora")
    handle = t.create()
    t.handle["operations"] = "snapshot_restore pitr scale_out"  # as provision_target sets it
    assert t.status() == "ready"
    rds = aws[1]("rds")
    secret = t.credentials().secret_arn
    aws[1]("secretsmanager").put_secret_value(
        SecretId=secret, SecretString=json.dumps({"username": USER, "password": PASSWORD})
    )

    done = {name: _run(t, name) for name in ("snapshot_restore", "pitr", "scale_out")}

    for name, (entry, polls) in done.items():
        assert entry["ok"] is True and entry["seconds"] >= 0, entry
        assert f"{ROWS:,} rows in the user tables, as before" in entry["detail"], entry
        assert polls >= 2, (name, polls)  # a call, then a look: never one blocking step
    assert "RestoreDBClusterFromSnapshot" in done["snapshot_restore"][0]["detail"]
    assert "snapshot_s" in done["snapshot_restore"][0]["steps"]
    assert "RestoreDBClusterToPointInTime" in done["pitr"][0]["detail"]
    assert "reader" in done["scale_out"][0]["detail"]
    # each operation deleted what it made; only the target itself is left, then teardown takes it
    clusters = [c["DBClusterIdentifier"] for c in rds.describe_db_clusters()["DBClusters"]]
    assert [c for c in clusters if c.startswith(handle["name"])] == [handle["name"]], clusters
    assert not rds.describe_db_cluster_snapshots(SnapshotType="manual")["DBClusterSnapshots"]
    t.delete()
    assert leftovers(aws[1], "ops-aurora") == []


def test_a_restore_that_lost_rows_fails_the_operation_and_deletes_what_it_made(
    aws: Any, at_local_postgres: str, pg_url: str
) -> None:
    import psycopg

    from benchwright.providers.aws.targets.operations import OperationFailed

    spec = {"provider": "aurora", "engine": "postgres", "engine_version": "16.4",
            "instance_class": "db.r6g.large", "database": at_local_postgres, "username": USER}  # fmt: skip
    t = target(aws, spec, "ops-lost")
    t.create()
    assert t.status() == "ready"
    aws[1]("secretsmanager").put_secret_value(
        SecretId=t.credentials().secret_arn,
        SecretString=json.dumps({"username": USER, "password": PASSWORD}),
    )
    progress, entry = t.operation_step("pitr", {})
    while entry is None and progress.get("phase") != "restore":
        progress, entry = t.operation_step("pitr", progress)
    with psycopg.connect(pg_url, autocommit=True) as conn:  # the "restored" copy has a row less
        conn.execute("DELETE FROM usertable WHERE k = 1")
    with pytest.raises(OperationFailed, match=f"{ROWS - 1:,} rows, {ROWS:,} before"):
        for _ in range(10):
            progress, entry = t.operation_step("pitr", progress)
    clusters = [c["DBClusterIdentifier"] for c in aws[1]("rds").describe_db_clusters()["DBClusters"]]
    assert not [c for c in clusters if c.endswith("-pitr")], clusters
    t.delete()
    assert leftovers(aws[1], "ops-lost") == []
