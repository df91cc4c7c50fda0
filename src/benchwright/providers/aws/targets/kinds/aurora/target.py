"""Aurora PostgreSQL / MySQL: a cluster plus its instances, provisioned classes or Serverless v2.

Aurora publishes the cluster endpoint before a writer instance exists, so readiness needs every
instance available and the probe connecting to the writer endpoint.
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
from benchwright.providers.aws.deletion import (
    delete_db_cluster,
    delete_db_instance,
    delete_parameter_group_later_ok,
    named,
)
from benchwright.providers.aws.targets.base import ServiceStatus
from benchwright.providers.aws.targets.kinds.aurora.spec import AuroraTarget as AuroraSpec
from benchwright.providers.aws.targets.managed_sql import (
    FAILED_STATES,
    ManagedSqlTarget,
    parameter_family,
)
from benchwright.providers.aws.targets.monitoring import monitoring_args

ENGINES = {"postgres": ("aurora-postgresql", 5432), "mysql": ("aurora-mysql", 3306)}


class AuroraTarget(ManagedSqlTarget[AuroraSpec]):
    kind = "aurora"
    cluster = True

    @property
    def default_port(self) -> int:  # type: ignore[override]
        return ENGINES[self.engine][1]

    @property
    def instance_count(self) -> int:
        return self.spec.instances

    @property
    def aws_engine(self) -> str:
        return ENGINES[self.engine][0]

    def instance_name(self, index: int) -> str:
        return f"{self.name}-{index}"

    def _create(self) -> dict[str, str]:
        rds = self.clients("rds")
        tags = tag_list(self.tags())
        aws_engine = self.aws_engine
        # the spec ties db.serverless and serverless_v2 together: one implies the other
        serverless = self.spec.serverless_v2
        handle = {"name": self.name, "engine": self.engine}
        cluster: dict[str, Any] = {
            "DBClusterIdentifier": self.name,
            "Engine": aws_engine,
            "EngineVersion": self.spec.engine_version,
            "MasterUsername": self.spec.username,
            "ManageMasterUserPassword": True,
            "DatabaseName": self.spec.database,
            "DeletionProtection": False,
            "Tags": tags,
        }
        if self.spec.storage_type == "aurora-iopt1":  # "aurora" (standard) is the API default
            cluster["StorageType"] = "aurora-iopt1"
        if serverless is not None:
            cluster["ServerlessV2ScalingConfiguration"] = {
                "MinCapacity": serverless.min_acu,
                "MaxCapacity": serverless.max_acu,
            }
        if self.config.db_subnet_group:
            cluster["DBSubnetGroupName"] = self.config.db_subnet_group
        if self.config.security_group_ids:
            cluster["VpcSecurityGroupIds"] = list(self.config.security_group_ids)
        server_settings = self.spec.settings
        if server_settings:
            group = self.name + "-cluster-params"
            family = parameter_family(aws_engine, self.spec.engine_version)
            _create_ignoring_exists(
                rds.create_db_cluster_parameter_group,
                DBClusterParameterGroupName=group,
                DBParameterGroupFamily=family,
                Description=f"benchwright {self.run_id}",
                Tags=tags,
            )
            params = [
                {"ParameterName": k, "ParameterValue": str(v), "ApplyMethod": "pending-reboot"}
                for k, v in sorted(server_settings.items())
            ]
            for i in range(0, len(params), 20):
                aws_call(
                    f"aurora parameter group {group}",
                    rds.modify_db_cluster_parameter_group,
                    DBClusterParameterGroupName=group,
                    Parameters=params[i : i + 20],
                )
            cluster["DBClusterParameterGroupName"] = group
            handle["cluster_parameter_group"] = self.handle["cluster_parameter_group"] = group
        _create_ignoring_exists(rds.create_db_cluster, what=f"aurora cluster {self.name}", **cluster)
        instance_class = self.spec.instance_class  # db.serverless for serverless v2
        for index in range(self.instance_count):
            args: dict[str, Any] = {
                "DBInstanceIdentifier": self.instance_name(index),
                "DBClusterIdentifier": self.name,
                "Engine": aws_engine,
                "DBInstanceClass": instance_class,
                "PubliclyAccessible": False,
                "Tags": tags,
            }
            if index == 0 and self.spec.availability_zone:
                args["AvailabilityZone"] = self.spec.availability_zone
            args |= monitoring_args(self.spec.monitoring, self.config.monitoring_role_arn)
            _create_ignoring_exists(
                rds.create_db_instance, what=f"aurora instance {args['DBInstanceIdentifier']}", **args
            )
        handle["instances"] = str(self.instance_count)
        return handle

    def _service_status(self) -> ServiceStatus:
        rds = self.clients("rds")
        from botocore.exceptions import ClientError

        try:
            cluster = rds.describe_db_clusters(DBClusterIdentifier=self.name)["DBClusters"][0]
        except ClientError as exc:
            if is_not_found(exc):
                return "deleted", None, None
            raise aws_error(exc, self.name) from exc
        if cluster.get("Status") in FAILED_STATES:
            return "failed", None, None
        secret = (cluster.get("MasterUserSecret") or {}).get("SecretArn")
        if secret:
            self.handle["secret_arn"] = secret
        for index in range(int(self.handle.get("instances", self.instance_count))):
            try:
                db = rds.describe_db_instances(DBInstanceIdentifier=self.instance_name(index))["DBInstances"][
                    0
                ]
            except ClientError as exc:
                if is_not_found(exc):
                    return "creating", None, None
                raise aws_error(exc, self.name) from exc
            if db.get("DBInstanceStatus") in FAILED_STATES:
                return "failed", None, None
            if db.get("DBInstanceStatus") != "available":
                return "creating", None, None
            if index == 0 and db.get("AvailabilityZone"):
                self.handle["availability_zone"] = db["AvailabilityZone"]
        if cluster.get("Status") != "available" or not cluster.get("Endpoint"):
            return "creating", None, None
        return "ready", cluster["Endpoint"], int(cluster.get("Port") or self.default_port)

    def metric_dimensions(self) -> list[tuple[str, dict[str, str]]]:
        return [
            ("AWS/RDS", {"DBInstanceIdentifier": self.instance_name(0)}),
            ("AWS/RDS", {"DBClusterIdentifier": self.name}),
        ]

    def monitored_instances(self) -> list[str]:
        """The writer (instance 0, where the run's load lands): its OS and DB-load series."""
        return [self.instance_name(0)]

    def _delete(self) -> None:
        rds = self.clients("rds")
        self._delete_operations()
        for index in range(int(self.handle.get("instances", self.instance_count))):
            member = self.instance_name(index)
            named(f"aurora instance {member}", delete_db_instance, rds, member, cluster_member=True)
        named(f"aurora cluster {self.name}", delete_db_cluster, rds, self.name)
        if self.handle.get("cluster_parameter_group"):
            delete_parameter_group_later_ok(rds, self.handle["cluster_parameter_group"], cluster=True)


def aws_error(exc: Exception, name: str) -> Exception:
    from benchwright.providers.aws.common import translate

    return translate(exc, f"aurora cluster {name}")


def _create_ignoring_exists(call: Any, what: str = "aurora", **kwargs: Any) -> None:
    """Create, treating "already exists" as success: a retried stage finds its own resource."""
    try:
        aws_call(what, call, **kwargs)
    except ProvisioningFailed as exc:
        if not already_exists(exc):
            raise
