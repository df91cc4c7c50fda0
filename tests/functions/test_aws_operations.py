"""Operation benchmarks on RDS and Aurora (snapshot restore, PITR, scale-out) against moto, step by step
as CheckOperations takes them. moto's clusters and instances all answer at a local server (PostgreSQL
or MariaDB, as the workflow world's RDS instances do), so the probe really logs in and counts the rows
of a table it can see: psycopg for PostgreSQL, PyMySQL (the Lambda's MySQL driver) for MySQL. The RDS
PostgreSQL path also runs through the state machine in tests/statemachines and the rehearsal."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from benchwright.providers.aws.janitor import leftovers
from benchwright.providers.aws.targets.operations import OperationFailed
from tests.conftest import MYSQL_PORT, PASSWORD, PG_PORT, USER
from tests.functions.test_aws_targets import target

ROWS = 321


@contextmanager
def _endpoints_at(port: int) -> Iterator[None]:
    """Every moto cluster and instance endpoint is 127.0.0.1:``port``."""
    from moto.rds.models import DBCluster, DBInstance

    mp = pytest.MonkeyPatch()
    local_port = property(lambda self: port, lambda self, value: None)
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
    try:
        yield
    finally:
        mp.undo()


@pytest.fixture
def at_local_postgres(pg_url: str) -> Iterator[str]:
    """Every moto cluster and instance endpoint is the local PostgreSQL; a table of ROWS rows."""
    import psycopg

    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("CREATE TABLE IF NOT EXISTS usertable (k int primary key)")
        conn.execute("TRUNCATE usertable")
        conn.execute("INSERT INTO usertable SELECT generate_series(1, %s)", (ROWS,))
    with _endpoints_at(PG_PORT):
        yield pg_url.rsplit("/", 1)[-1]


def _mysql(url: str) -> Any:
    import MySQLdb

    return MySQLdb.connect(host="127.0.0.1", port=MYSQL_PORT, user=USER, password=PASSWORD,
                           database=url.rsplit("/", 1)[-1], autocommit=True)  # fmt: skip


@pytest.fixture
def at_local_mariadb(mysql_url: str) -> Iterator[str]:
    """Every moto cluster and instance endpoint is the local MariaDB; ROWS rows in two tables, one
    named with a space and a backquote (the probe quotes names), and a view the probe must not count."""
    conn = _mysql(mysql_url)
    try:
        cur = conn.cursor()
        cur.execute("DROP VIEW IF EXISTS usertable_view")
        for table in ("usertable", "`odd ``name`"):
            cur.execute(f"CREATE TABLE IF NOT EXISTS {table} (k int primary key)")
            cur.execute(f"TRUNCATE {table}")
        cur.execute("INSERT INTO usertable SELECT seq FROM seq_1_to_300")
        cur.execute("INSERT INTO `odd ``name` SELECT seq FROM seq_1_to_21")
        cur.execute("CREATE VIEW usertable_view AS SELECT * FROM usertable")
    finally:
        conn.close()
    with _endpoints_at(MYSQL_PORT):
        yield mysql_url.rsplit("/", 1)[-1]


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


@pytest.mark.parametrize(
    ("provider", "operations"),
    [("aurora", ("snapshot_restore", "pitr", "scale_out")), ("rds", ("snapshot_restore", "pitr"))],
)
def test_mysql_targets_operations_probe_with_pymysql_and_leave_nothing(
    aws: Any, at_local_mariadb: str, provider: str, operations: tuple[str, ...]
) -> None:
    """Aurora MySQL and RDS MySQL: the probe logs in with the master secret's password over PyMySQL
    (the Lambda's driver) and counts the base tables' rows (300 + 21; the view is not a table)."""
    spec: dict[str, Any] = {"provider": provider, "engine": "mysql", "engine_version": "8.0.39",
                            "instance_class": "db.r6g.large", "database": at_local_mariadb, "username": USER}  # fmt: skip
    if provider == "rds":
        spec.update(storage={"type": "gp3", "size_gb": 20}, backup_retention_days=1)
    run_id = f"ops-my-{provider}"
    t = target(aws, spec, run_id)
    t.create()
    t.handle["operations"] = " ".join(operations)
    assert t.status() == "ready"
    aws[1]("secretsmanager").put_secret_value(
        SecretId=t.credentials().secret_arn,
        SecretString=json.dumps({"username": USER, "password": PASSWORD}),
    )

    done = {name: _run(t, name)[0] for name in operations}

    assert list(done) == list(operations)
    for entry in done.values():
        assert entry["ok"] is True, entry
        said = f"probe at 127.0.0.1:{MYSQL_PORT}: {ROWS:,} rows in the user tables, as before"
        assert said in entry["detail"], entry
    t.delete()
    assert leftovers(aws[1], run_id) == []


def test_a_mysql_probe_that_cannot_log_in_fails_before_anything_is_made(
    aws: Any, at_local_mariadb: str
) -> None:
    """A secret that does not log in: the probe raises (the first step, before anything is made),
    so the operation fails and CheckOperations records it; the password is in no message."""
    from benchwright.providers.aws.probe import mysql_rows

    wrong = "not-the-password-4417"
    with pytest.raises(Exception) as err:
        mysql_rows("127.0.0.1", MYSQL_PORT, USER, wrong, at_local_mariadb, 3)
    assert "Access denied" in str(err.value) and wrong not in str(err.value)
    spec = {"provider": "aurora", "engine": "mysql", "engine_version": "8.0.39",
            "instance_class": "db.r6g.large", "database": at_local_mariadb, "username": USER}  # fmt: skip
    t = target(aws, spec, "ops-my-denied")
    t.create()
    assert t.status() == "ready"
    aws[1]("secretsmanager").put_secret_value(
        SecretId=t.credentials().secret_arn, SecretString=json.dumps({"username": USER, "password": wrong})
    )
    with pytest.raises(Exception, match="Access denied") as failed:
        t.operation_step("snapshot_restore", {})
    assert wrong not in str(failed.value)
    assert not aws[1]("rds").describe_db_cluster_snapshots(SnapshotType="manual")["DBClusterSnapshots"]
    t.delete()
    assert leftovers(aws[1], "ops-my-denied") == []


def at_the_deadline(aws: Any, t: Any, name: str, progress: dict[str, Any]) -> dict[str, Any]:
    """CheckOperations once the operation's deadline has passed (moved into the past: no waiting),
    with the target rebuilt from its handle as the next Lambda does: the operation log entry."""
    from benchwright.providers.aws.bundle import aws_providers
    from benchwright.stages import RunState
    from benchwright.stages.operations import check_operations
    from tests.aws_world import rds_spec

    spec = {
        **rds_spec(f"{t.run_id}-spec"),
        "target": t.spec.model_dump(exclude_none=True),
        "operations": [name],
    }
    state = RunState(run_id=t.run_id, spec_name=spec["name"], spec=spec, target=dict(t.handle),
                     operations_status="running",
                     operation_progress={**progress, "deadline": "2000-01-01T00:00:00+00:00"})  # fmt: skip
    after = check_operations(state, aws_providers(state.spec, *aws, probe=lambda h, p: True))
    assert after.operation_progress is None, after.operation_progress
    (entry,) = after.operation_log
    return entry


def test_a_restore_whose_probe_never_logs_in_times_out_naming_the_probe_error(
    aws: Any, at_local_postgres: str
) -> None:
    """The restored copy never accepts the master secret: each poll's failed probe is tolerated (the
    next one tries again), and at the deadline the operation fails saying why, without the password."""
    spec = {"provider": "aurora", "engine": "postgres", "engine_version": "16.4",
            "instance_class": "db.r6g.large", "database": at_local_postgres, "username": USER}  # fmt: skip
    t = target(aws, spec, "ops-nologin")
    t.create()
    assert t.status() == "ready"
    secrets = aws[1]("secretsmanager")
    arn = t.credentials().secret_arn
    secrets.put_secret_value(SecretId=arn, SecretString=json.dumps({"username": USER, "password": PASSWORD}))
    progress, entry = t.operation_step("pitr", {})  # counts the rows before with the right password
    while entry is None and progress.get("phase") != "restore":
        progress, entry = t.operation_step("pitr", progress)
    wrong = "not-the-password-5521"
    secrets.put_secret_value(SecretId=arn, SecretString=json.dumps({"username": USER, "password": wrong}))

    for _ in range(3):  # moto: available at once; the probe fails every poll and is tried again
        progress, entry = t.operation_step("pitr", progress)
        assert entry is None, entry
    said = progress["last_probe_error"]
    assert said.startswith("OperationalError: ") and f"(127.0.0.1:{PG_PORT})" in said, said
    assert "password authentication failed" in said and wrong not in said, said

    entry = at_the_deadline(aws, t, "pitr", progress)

    assert entry["ok"] is False, entry
    assert (
        "TimeoutError: pitr did not finish by its deadline" in entry["detail"]
        and "; last probe error: OperationalError:" in entry["detail"]
    )
    assert "password authentication failed" in entry["detail"] and wrong not in json.dumps(entry), entry
    clusters = [c["DBClusterIdentifier"] for c in aws[1]("rds").describe_db_clusters()["DBClusters"]]
    assert not [c for c in clusters if c.endswith("-pitr")], clusters  # the failed operation's copy
    t.delete()
    assert leftovers(aws[1], "ops-nologin") == []


def test_a_restore_whose_master_secret_is_gone_fails_at_once_not_at_the_deadline(
    aws: Any, at_local_postgres: str
) -> None:
    """A secret that cannot be read will not mend by waiting four hours: the probe's first poll fails
    the operation, naming the secret, and the restored copy is cleaned up."""
    spec = {"provider": "aurora", "engine": "postgres", "engine_version": "16.4",
            "instance_class": "db.r6g.large", "database": at_local_postgres, "username": USER}  # fmt: skip
    t = target(aws, spec, "ops-nosecret")
    t.create()
    secrets = aws[1]("secretsmanager")
    arn = t.credentials().secret_arn
    secrets.put_secret_value(SecretId=arn, SecretString=json.dumps({"username": USER, "password": PASSWORD}))
    progress, entry = t.operation_step("pitr", {})
    while entry is None and progress.get("phase") != "restore":
        progress, entry = t.operation_step("pitr", progress)
    secrets.delete_secret(SecretId=arn, ForceDeleteWithoutRecovery=True)

    with pytest.raises(OperationFailed) as failed:
        t.operation_step("pitr", progress)
    assert "secret" in str(failed.value).lower(), failed.value
    assert "last_probe_error" not in progress
    t.operation_cleanup("pitr", progress)
    clusters = [c["DBClusterIdentifier"] for c in aws[1]("rds").describe_db_clusters()["DBClusters"]]
    assert not [c for c in clusters if c.endswith("-pitr")], clusters
    t.delete()
    assert leftovers(aws[1], "ops-nosecret") == []
