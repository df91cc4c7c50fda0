"""What RDS instances and Aurora clusters share (kinds/rds/, kinds/aurora/): a SQL endpoint, the
parameter group family, the states that mean failed, and the operations on them (operations.py).

The master password is generated and kept by RDS in Secrets Manager (ManageMasterUserPassword): we
never see it; the runner gets the secret ARN and resolves it itself.
"""

from __future__ import annotations

from typing import Any, ClassVar, TypeVar

from benchwright.providers.aws.targets.base import AwsTarget
from benchwright.providers.aws.targets.kinds.aurora.spec import AuroraTarget as AuroraSpec
from benchwright.providers.aws.targets.kinds.rds.spec import RdsTarget as RdsSpec
from benchwright.providers.base import Credentials

FAILED_STATES = {
    "failed",
    "incompatible-parameters",
    "incompatible-restore",
    "incompatible-network",
    "storage-full",
    "inaccessible-encryption-credentials",
    "restore-error",
}


def parameter_family(engine: str, version: str) -> str:
    """``postgres`` 16.4 -> postgres16; ``mysql`` 8.0.39 -> mysql8.0 (the parameter group family)."""
    parts = (version or "").split(".")
    if engine.startswith("aurora"):
        base = "aurora-postgresql" if "postgres" in engine else "aurora-mysql"
    else:
        base = engine
    if "postgres" in engine:
        return f"{base}{parts[0] or '16'}"
    return f"{base}{parts[0] or '8'}.{parts[1] if len(parts) > 1 else '0'}"


def sql_connection(engine: str, user: str, host: str, port: int, database: str) -> dict[str, str]:
    """Driver properties without the password (the runner adds it from the secret)."""
    from benchwright.providers.urls import sql_url

    return sql_url("mysql" if engine == "mysql" else "postgres", user, [f"{host}:{port}"], database)


SqlSpecT = TypeVar("SqlSpecT", bound=RdsSpec | AuroraSpec)


class ManagedSqlTarget(AwsTarget[SqlSpecT]):
    """What RDS instances and Aurora clusters share: a SQL endpoint and an RDS-managed secret."""

    cluster: ClassVar[bool] = (
        False  # Aurora's operations act on its cluster (AuroraTarget), RDS's on the instance
    )

    @property
    def engine(self) -> str:
        """postgres | mysql (the spec allows no other engine for these providers)."""
        return self.spec.engine

    @property
    def aws_engine(self) -> str:
        """The engine as RDS's API names it (Aurora's names differ: AuroraTarget)."""
        return self.engine

    def connection_properties(self) -> dict[str, str]:
        host, port = self.endpoint()
        return sql_connection(self.engine, self.spec.username, host, port, self.spec.database)

    def credentials(self) -> Credentials:
        if "secret_arn" not in self.handle:
            self._service_status()
        return Credentials(secret_arn=self.handle.get("secret_arn"))

    def operation_step(
        self, name: str, progress: dict[str, Any]
    ) -> tuple[dict[str, Any], dict[str, Any] | None]:
        """snapshot_restore, pitr (and scale_out on Aurora): providers/aws/targets/operations.py."""
        from benchwright.providers.aws.targets.operations import SqlOperations

        return SqlOperations(self, cluster=self.cluster).step(name, progress)

    def operation_cleanup(self, name: str, progress: dict[str, Any]) -> None:
        from benchwright.providers.aws.targets.operations import SHORT, SqlOperations

        if name in SHORT:
            SqlOperations(self, cluster=self.cluster).cleanup(name, progress)

    def _delete_operations(self) -> None:
        from benchwright.providers.aws.targets.operations import delete_operation_resources

        delete_operation_resources(self, cluster=self.cluster)
