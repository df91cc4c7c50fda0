"""Operation benchmarks on RDS instances and Aurora clusters, one non-blocking step per poll.

Experiment 1 timed these by hand; here each is the service's own API calls, stepped by the
``check_operations`` stage (stages/operations.py) so that no Lambda waits for minutes:

- ``snapshot_restore``: CreateDBSnapshot (Aurora: CreateDBClusterSnapshot), until it is available;
  RestoreDBInstanceFromDBSnapshot (RestoreDBClusterFromSnapshot plus a writer instance), until the
  restored database is available and answers the probe query.
- ``pitr``: once the source's LatestRestorableTime has passed the instant the operation began (the
  workload's writes are all in the backup), RestoreDBInstanceToPointInTime /
  RestoreDBClusterToPointInTime to that instant, then as above.
- ``scale_out`` (Aurora): CreateDBInstance of a reader in the cluster, until its own endpoint answers.

Each is timed from its first API call to the probe's first success: the probe query counts the rows
of every user table (probe.sql_rows: PostgreSQL or MySQL) with the source's master credentials (a restore keeps the
snapshot's master password), and a count that differs from the source's before the operation fails
it. The time is observed by the poll, so it is late by up to one ``poll_seconds``; ``steps`` splits it
(``snapshot_s``, ``restore_s`` to "available", ``ready_s`` from there to the probe). Then the restored
resource and the snapshot are deleted. Everything is tagged like the target (run id, owner, expiry)
and named from the target's name (``names``), so teardown deletes it by name on every path and the
janitor by tag.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from benchwright.errors import ProvisioningFailed
from benchwright.providers.aws.common import aws_call, is_not_found, tag_list
from benchwright.providers.aws.deletion import (
    delete_db_cluster,
    delete_db_instance,
    delete_db_snapshot,
    named,
)
from benchwright.providers.base import probe_or_none

if TYPE_CHECKING:
    from benchwright.providers.aws.targets.managed_sql import ManagedSqlTarget

SHORT = {"snapshot_restore": "snap", "pitr": "pitr", "scale_out": "reader"}
FAILED = {"failed", "error", "incompatible-restore", "incompatible-parameters", "restore-error",
          "incompatible-network", "storage-full"}  # fmt: skip


class OperationFailed(ProvisioningFailed):
    """An operation benchmark could not finish (the run's results stand)."""


def _now() -> datetime:
    return datetime.now(UTC)


def _since(progress: dict[str, Any], key: str, now: datetime) -> float:
    return round((now - datetime.fromisoformat(progress[key])).total_seconds(), 3)


def names(target_name: str, operation: str) -> dict[str, str]:
    """The resources an operation makes, by name: found again by teardown and by a retried step."""
    short = SHORT[operation]
    return {"restored": f"{target_name}-{short}", "snapshot": f"{target_name}-snap"}


class SqlOperations:
    """The operations of one RDS instance (``cluster`` False) or Aurora cluster (True)."""

    def __init__(self, target: ManagedSqlTarget[Any], cluster: bool) -> None:
        self.target = target
        self.cluster = cluster
        self.rds = target.clients("rds")

    # ------------------------------------------------------------------ the step machine
    def step(self, name: str, progress: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any] | None]:
        if name not in SHORT or (name == "scale_out" and not self.cluster):
            raise OperationFailed(f"{name} is not an operation of a {self.target.kind} target")
        phase = progress.get("phase") or "start"
        if phase == "start":
            return self._start(name, progress), None
        if phase == "snapshot":
            return self._wait_snapshot(progress), None
        if phase == "backup":
            return self._wait_backup(progress), None
        return self._wait_restored(name, progress)

    def _start(self, name: str, progress: dict[str, Any]) -> dict[str, Any]:
        host, port = self.target.endpoint()
        ids = names(self.target.name, name)
        started = _now().isoformat()
        progress = {**progress, "name": name, "rows_before": self.rows(host, port), "started_at": started}
        if name == "snapshot_restore":
            self._create_snapshot(ids["snapshot"])
            return {**progress, "phase": "snapshot", "snapshot": ids["snapshot"], "restored": ids["restored"]}
        if name == "pitr":
            return self._wait_backup({**progress, "phase": "backup", "restored": ids["restored"]})
        self._create_instance(ids["restored"], self.target.name)  # scale_out: a reader in the cluster
        return {**progress, "phase": "restore", "restore_called_at": started, "restored": ids["restored"]}

    def _wait_snapshot(self, progress: dict[str, Any]) -> dict[str, Any]:
        snap = self._describe_snapshot(progress["snapshot"])
        status = str(snap.get("Status", "")).lower()
        if status in FAILED:
            raise OperationFailed(f"snapshot {progress['snapshot']} is {status}")
        if status != "available":
            return progress
        now = _now()
        self._restore_snapshot(progress["snapshot"], progress["restored"])
        return {
            **progress,
            "phase": "restore",
            "snapshot_s": _since(progress, "started_at", now),
            "restore_called_at": now.isoformat(),
            "snapshot_gb": float(snap.get("AllocatedStorage") or 0),
        }

    def _wait_backup(self, progress: dict[str, Any]) -> dict[str, Any]:
        """PITR restores to the instant the operation began, once the backup reaches it."""
        source = self._describe(self.target.name)
        latest = source.get("LatestRestorableTime")
        wanted = datetime.fromisoformat(progress["started_at"])
        if latest is not None and latest < wanted:
            return progress
        now = _now()
        self._restore_pitr(progress["restored"], wanted)
        return {
            **progress,
            "phase": "restore",
            "backup_wait_s": _since(progress, "started_at", now),
            "started_at": now.isoformat(),  # timed from the restore call
            "restore_called_at": now.isoformat(),
        }

    def _wait_restored(
        self, name: str, progress: dict[str, Any]
    ) -> tuple[dict[str, Any], dict[str, Any] | None]:
        restored = progress["restored"]
        endpoint = self._available_endpoint(restored, name, progress)
        if endpoint is None:
            return progress, None
        now = _now()
        progress.setdefault("available_at", now.isoformat())
        where = f"{endpoint[0]}:{endpoint[1]}"
        rows = probe_or_none(progress, lambda: self.rows(*endpoint), where, fatal=(OperationFailed,))
        if rows is None:  # not answering yet: the next poll probes again
            return progress, None
        progress["probed"] = where
        return progress, self._finish(name, progress, rows, _now())

    def _finish(self, name: str, progress: dict[str, Any], rows: int, now: datetime) -> dict[str, Any]:
        before = int(progress["rows_before"])
        self.cleanup(name, progress)
        if rows != before:
            raise OperationFailed(f"{name}: the probe counted {rows:,} rows, {before:,} before")
        steps: dict[str, float] = {
            k: float(progress[k]) for k in ("snapshot_s", "backup_wait_s") if k in progress
        }
        steps["restore_s"] = _since(
            progress, "restore_called_at", datetime.fromisoformat(progress["available_at"])
        )
        steps["ready_s"] = _since(progress, "available_at", now)
        gb = progress.get("snapshot_gb")
        return {
            "name": name,
            "started_at": progress["started_at"],
            "seconds": _since(progress, "started_at", now),
            "steps": steps,
            "size_bytes": int(gb * 1024**3) if gb else None,
            "ok": True,
            "detail": f"{self._calls(name)}; probe at {progress['probed']}: {rows:,} rows in the user "
            f"tables, as before",
        }

    def _calls(self, name: str) -> str:
        cluster = self.cluster
        return {
            "snapshot_restore": "CreateDBClusterSnapshot, RestoreDBClusterFromSnapshot + a writer"
            if cluster
            else "CreateDBSnapshot, RestoreDBInstanceFromDBSnapshot",
            "pitr": "RestoreDBClusterToPointInTime + a writer"
            if cluster
            else "RestoreDBInstanceToPointInTime",
            "scale_out": "CreateDBInstance (a reader)",
        }[name]

    # ------------------------------------------------------------------ probe
    def rows(self, host: str, port: int) -> int:
        from benchwright.providers.aws.probe import sql_rows
        from benchwright.providers.aws.secrets import secret_value

        arn = self.target.credentials().secret_arn
        if not arn:
            raise OperationFailed(f"{self.target.name}: no master secret to probe with")
        password = secret_value(self.target.clients, arn, "password", fatal=OperationFailed)
        spec = self.target.spec
        return sql_rows(
            self.target.engine, host, port, spec.username, password, spec.database,
            self.target.config.probe_timeout_s,
        )  # fmt: skip

    # ------------------------------------------------------------------ API calls
    def _network(self) -> dict[str, Any]:
        config = self.target.config
        args: dict[str, Any] = {"Tags": tag_list(self.target.tags())}
        if config.db_subnet_group:
            args["DBSubnetGroupName"] = config.db_subnet_group
        if config.security_group_ids:
            args["VpcSecurityGroupIds"] = list(config.security_group_ids)
        return args

    def _instance_args(self) -> dict[str, Any]:
        spec = self.target.spec
        args: dict[str, Any] = {"DBInstanceClass": spec.instance_class, "PubliclyAccessible": False}
        if spec.availability_zone:
            args["AvailabilityZone"] = spec.availability_zone
        group = self.target.handle.get("parameter_group")
        if group:
            args["DBParameterGroupName"] = group
        return args

    def _create_snapshot(self, snapshot: str) -> None:
        tags = tag_list(self.target.tags())
        if self.cluster:
            call: Any = self.rds.create_db_cluster_snapshot
            args: dict[str, Any] = {
                "DBClusterSnapshotIdentifier": snapshot,
                "DBClusterIdentifier": self.target.name,
            }
        else:
            call = self.rds.create_db_snapshot
            args = {"DBSnapshotIdentifier": snapshot, "DBInstanceIdentifier": self.target.name}
        aws_call(f"snapshot {snapshot}", call, Tags=tags, **args)

    def _describe_snapshot(self, snapshot: str) -> dict[str, Any]:
        if self.cluster:
            found = self.rds.describe_db_cluster_snapshots(DBClusterSnapshotIdentifier=snapshot)
            return dict(found["DBClusterSnapshots"][0])
        return dict(self.rds.describe_db_snapshots(DBSnapshotIdentifier=snapshot)["DBSnapshots"][0])

    def _cluster_args(self) -> dict[str, Any]:
        spec: Any = self.target.spec
        args: dict[str, Any] = {"Engine": self.target.aws_engine, **self._network()}
        if spec.serverless_v2 is not None:
            args["ServerlessV2ScalingConfiguration"] = {
                "MinCapacity": spec.serverless_v2.min_acu,
                "MaxCapacity": spec.serverless_v2.max_acu,
            }
        if spec.storage_type == "aurora-iopt1":
            args["StorageType"] = "aurora-iopt1"
        group = self.target.handle.get("cluster_parameter_group")
        if group:
            args["DBClusterParameterGroupName"] = group
        return args

    def _restore_snapshot(self, snapshot: str, restored: str) -> None:
        what = f"restore {restored} from {snapshot}"
        if self.cluster:
            args = {**self._cluster_args(), "EngineVersion": self.target.spec.engine_version}
            aws_call(what, self.rds.restore_db_cluster_from_snapshot, DBClusterIdentifier=restored,
                     SnapshotIdentifier=snapshot, **args)  # fmt: skip
            return
        aws_call(what, self.rds.restore_db_instance_from_db_snapshot, DBInstanceIdentifier=restored,
                 DBSnapshotIdentifier=snapshot, **self._network(), **self._instance_args())  # fmt: skip

    def _restore_pitr(self, restored: str, when: datetime) -> None:
        what = f"restore {restored} to {when:%H:%M:%S} UTC"
        if self.cluster:
            aws_call(what, self.rds.restore_db_cluster_to_point_in_time, DBClusterIdentifier=restored,
                     SourceDBClusterIdentifier=self.target.name, RestoreToTime=when,
                     RestoreType="full-copy", **{k: v for k, v in self._cluster_args().items()
                                                 if k not in ("Engine",)})  # fmt: skip
            return
        aws_call(what, self.rds.restore_db_instance_to_point_in_time, TargetDBInstanceIdentifier=restored,
                 SourceDBInstanceIdentifier=self.target.name, RestoreTime=when,
                 **self._network(), **self._instance_args())  # fmt: skip

    def _create_instance(self, ident: str, cluster: str) -> None:
        spec = self.target.spec
        aws_call(f"aurora instance {ident}", self.rds.create_db_instance, DBInstanceIdentifier=ident,
                 DBClusterIdentifier=cluster, Engine=self.target.aws_engine,
                 DBInstanceClass=spec.instance_class, PubliclyAccessible=False,
                 Tags=tag_list(self.target.tags()))  # fmt: skip

    def _describe(self, ident: str) -> dict[str, Any]:
        if self.cluster:
            return dict(self.rds.describe_db_clusters(DBClusterIdentifier=ident)["DBClusters"][0])
        return dict(self.rds.describe_db_instances(DBInstanceIdentifier=ident)["DBInstances"][0])

    def _instance(self, ident: str) -> dict[str, Any] | None:
        from botocore.exceptions import ClientError

        try:
            return dict(self.rds.describe_db_instances(DBInstanceIdentifier=ident)["DBInstances"][0])
        except ClientError as exc:
            if is_not_found(exc):
                return None
            raise

    def _available_endpoint(
        self, restored: str, name: str, progress: dict[str, Any]
    ) -> tuple[str, int] | None:
        """host, port of the restored database (scale_out: the reader) once AWS says available."""
        if not self.cluster or name == "scale_out":
            db = self._instance(restored)
            if db is None:
                return None
            status = str(db.get("DBInstanceStatus", ""))
            if status in FAILED:
                raise OperationFailed(f"{restored} is {status}")
            endpoint = db.get("Endpoint") or {}
            if status != "available" or not endpoint.get("Address"):
                return None
            return str(endpoint["Address"]), int(endpoint.get("Port") or self.target.default_port)
        return self._cluster_endpoint(restored, progress)

    def _cluster_endpoint(self, restored: str, progress: dict[str, Any]) -> tuple[str, int] | None:
        """A restored cluster has no instance: its writer is created once the cluster is available."""
        cluster = self._describe(restored)
        status = str(cluster.get("Status", ""))
        if status in FAILED:
            raise OperationFailed(f"cluster {restored} is {status}")
        if status != "available":
            return None
        writer = f"{restored}-0"
        if not progress.get("writer"):
            self._create_instance(writer, restored)
            progress["writer"] = writer
        db = self._instance(writer)
        if db is None or str(db.get("DBInstanceStatus")) != "available" or not cluster.get("Endpoint"):
            if db is not None and str(db.get("DBInstanceStatus")) in FAILED:
                raise OperationFailed(f"{writer} is {db.get('DBInstanceStatus')}")
            return None
        return str(cluster["Endpoint"]), int(cluster.get("Port") or self.target.default_port)

    # ------------------------------------------------------------------ deleting
    def cleanup(self, name: str, progress: dict[str, Any] | None = None) -> list[str]:
        """Delete what ``name`` makes (by name: also what a lost step made); what is still there
        (a snapshot still being taken cannot be deleted yet: the janitor deletes it by tag)."""
        ids = names(self.target.name, name)
        left: list[str] = []
        restored = ids["restored"]
        if self.cluster and name != "scale_out":
            named(
                f"aurora instance {restored}-0",
                delete_db_instance,
                self.rds,
                f"{restored}-0",
                cluster_member=True,
            )
            named(f"aurora cluster {restored}", delete_db_cluster, self.rds, restored)
        else:
            named(f"rds instance {restored}", delete_db_instance, self.rds, restored)
        if name == "snapshot_restore" and not self._delete_snapshot(ids["snapshot"]):
            left.append(ids["snapshot"])
        return left

    def _delete_snapshot(self, snapshot: str) -> bool:
        """False while the snapshot is still being taken (the janitor deletes it later, by tag)."""
        return delete_db_snapshot(self.rds, snapshot, cluster=self.cluster)


def delete_operation_resources(target: ManagedSqlTarget[Any], cluster: bool) -> None:
    """Teardown's part: what each of the spec's operations may have made (the target handle's
    ``operations``, set when the target was provisioned), deleted by name, before the target."""
    listed = [n for n in target.handle.get("operations", "").split() if n in SHORT]
    if not listed:
        return
    ops = SqlOperations(target, cluster)
    for name in listed:
        if name == "scale_out" and not cluster:
            continue
        ops.cleanup(name)
