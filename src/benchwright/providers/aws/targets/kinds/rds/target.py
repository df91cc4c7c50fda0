"""RDS PostgreSQL / MySQL instances: storage type and IOPS, Multi-AZ, server settings, managed password
(the master password's handling is shared with Aurora: providers/aws/targets/managed_sql.py).
"""

from __future__ import annotations

from typing import Any

from benchwright.errors import ProvisioningFailed
from benchwright.providers.aws.common import (
    already_exists,
    aws_call,
    is_not_found,
    tag_list,
)
from benchwright.providers.aws.deletion import delete_db_instance, delete_parameter_group_later_ok, named
from benchwright.providers.aws.targets.base import ServiceStatus, storage_text
from benchwright.providers.aws.targets.kinds.rds.spec import RdsTarget as RdsSpec
from benchwright.providers.aws.targets.managed_sql import (
    FAILED_STATES,
    ManagedSqlTarget,
    parameter_family,
)
from benchwright.providers.aws.targets.monitoring import monitoring_args

ENGINES = {"postgres": ("postgres", 5432), "mysql": ("mysql", 3306)}


class RdsTarget(ManagedSqlTarget[RdsSpec]):
    kind = "rds"

    @property
    def default_port(self) -> int:  # type: ignore[override]
        return ENGINES[self.engine][1]

    # create ---------------------------------------------------------------------------------
    def _parameter_group(self, rds: Any, tags: dict[str, str]) -> str | None:
        settings = self.spec.settings
        if not settings:
            return None
        name = self.name + "-params"
        family = parameter_family(self.engine, self.spec.engine_version)
        what = f"rds parameter group {name}"
        try:
            aws_call(
                what,
                rds.create_db_parameter_group,
                DBParameterGroupName=name,
                DBParameterGroupFamily=family,
                Description=f"benchwright {self.run_id}",
                Tags=tag_list(tags),
            )
        except ProvisioningFailed as exc:
            if not already_exists(exc):
                raise
        params = [
            {"ParameterName": k, "ParameterValue": str(v), "ApplyMethod": "pending-reboot"}
            for k, v in sorted(settings.items())
        ]
        for i in range(0, len(params), 20):  # the API takes at most 20 per call
            aws_call(
                what, rds.modify_db_parameter_group, DBParameterGroupName=name, Parameters=params[i : i + 20]
            )
        return name

    def _storage_args(self) -> dict[str, Any]:
        """The storage arguments; the spec's RdsStorage has already checked type, size and IOPS."""
        storage = self.spec.storage
        kind = storage.type
        args: dict[str, Any] = {
            "StorageType": "standard" if kind == "magnetic" else kind,
            "AllocatedStorage": storage.size_gb,
        }
        if storage.iops and kind in {"io1", "io2", "gp3"}:
            args["Iops"] = storage.iops
        if storage.throughput_mbps and kind == "gp3":
            args["StorageThroughput"] = storage.throughput_mbps
        return args

    def _create(self) -> dict[str, str]:
        rds = self.clients("rds")
        tags = self.tags()
        name = self.name
        group = self._parameter_group(rds, tags)
        if group:
            self.handle["parameter_group"] = group  # known at once: a failed create cleans it up
        args: dict[str, Any] = {
            "DBInstanceIdentifier": name,
            "Engine": self.engine,
            "DBInstanceClass": self.spec.instance_class,
            "MasterUsername": self.spec.username,
            "ManageMasterUserPassword": True,
            "DBName": self.spec.database,
            "MultiAZ": self.spec.multi_az,
            "EngineVersion": self.spec.engine_version,
            "PubliclyAccessible": False,
            "BackupRetentionPeriod": self.spec.backup_retention_days,  # pitr needs >= 1
            "DeletionProtection": False,
            "CopyTagsToSnapshot": True,
            "Tags": tag_list(tags),
            **self._storage_args(),
        }
        if group:
            args["DBParameterGroupName"] = group
        if self.spec.availability_zone:  # the spec refuses it together with multi_az
            args["AvailabilityZone"] = self.spec.availability_zone
        if self.config.db_subnet_group:
            args["DBSubnetGroupName"] = self.config.db_subnet_group
        if self.config.security_group_ids:
            args["VpcSecurityGroupIds"] = list(self.config.security_group_ids)
        args |= monitoring_args(self.spec.monitoring, self.config.monitoring_role_arn)
        from botocore.exceptions import ClientError

        try:
            aws_call(f"rds instance {name}", rds.create_db_instance, **args)
        except ProvisioningFailed as exc:
            if not isinstance(exc.__cause__, ClientError) or not already_exists(exc):
                raise  # a re-run of this stage finds its own instance: that is success
        handle = {"name": name, "engine": self.engine}
        if group:
            handle["parameter_group"] = group
        return handle

    # status ---------------------------------------------------------------------------------
    def _describe(self) -> dict[str, Any] | None:
        from botocore.exceptions import ClientError

        try:
            found = self.clients("rds").describe_db_instances(DBInstanceIdentifier=self.name)["DBInstances"]
        except ClientError as exc:
            if is_not_found(exc):
                return None
            raise
        return found[0] if found else None

    def _service_status(self) -> ServiceStatus:
        db = aws_call(f"rds instance {self.name}", self._describe)
        if db is None:
            return "deleted", None, None
        state = db.get("DBInstanceStatus", "")
        if db.get("AvailabilityZone"):
            self.handle["availability_zone"] = db["AvailabilityZone"]
        secret = (db.get("MasterUserSecret") or {}).get("SecretArn")
        if secret:
            self.handle["secret_arn"] = secret
        if state in FAILED_STATES:
            return "failed", None, None
        if state != "available" or not db.get("Endpoint"):
            return "creating", None, None
        return "ready", db["Endpoint"]["Address"], int(db["Endpoint"].get("Port") or self.default_port)

    # use ------------------------------------------------------------------------------------
    def fingerprint_facts(self) -> dict[str, str | None]:
        """The class and storage as RDS describes the instance (what was provisioned, not only asked)."""
        facts = super().fingerprint_facts()
        try:
            db = self._describe() or {}
        except Exception:  # the spec's figures stand
            return facts
        if db.get("DBInstanceClass"):
            facts["target_class"] = str(db["DBInstanceClass"])
        if db.get("StorageType"):
            facts["storage"] = storage_text(
                str(db["StorageType"]),
                db.get("AllocatedStorage"),
                db.get("Iops"),
                db.get("StorageThroughput"),
            )
        return facts

    def metric_dimensions(self) -> list[tuple[str, dict[str, str]]]:
        return [("AWS/RDS", {"DBInstanceIdentifier": self.name})]

    def monitored_instances(self) -> list[str]:
        """The DB instances whose Enhanced Monitoring / PI series are collected (target.monitoring)."""
        return [self.name]

    # delete ---------------------------------------------------------------------------------
    def _delete(self) -> None:
        rds = self.clients("rds")
        self._delete_operations()
        named(f"rds instance {self.name}", delete_db_instance, rds, self.name)
        group = self.handle.get("parameter_group")
        if group:
            delete_parameter_group_later_ok(rds, group)
