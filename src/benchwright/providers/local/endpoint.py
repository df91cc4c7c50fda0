"""The ``endpoint`` target: a database that already exists. Nothing is created or deleted.

Readiness is a TCP connect to the first host; the password comes from the environment variable the
spec names (``password_env``), so it is never written into the spec, the plan or the run state.
"""

from __future__ import annotations

import os
import socket
from typing import Any, ClassVar

from benchwright.errors import SpecError
from benchwright.providers.aws.targets.kinds.endpoint.spec import EndpointTarget as EndpointSpec
from benchwright.providers.base import Credentials, Target, TargetStatus
from benchwright.providers.urls import sql_url


class EndpointTarget(Target[EndpointSpec]):
    kind = "endpoint"
    serves: ClassVar[type[EndpointSpec]] = EndpointSpec  # the spec model local_target hands it

    def _create(self) -> dict[str, str]:
        return {"endpoint": ",".join(self.spec.hosts)}

    def _status(self) -> TargetStatus:
        host, _, port = self.spec.hosts[0].rpartition(":")
        try:
            with socket.create_connection((host.strip("[]"), int(port)), timeout=2):
                return "ready"
        except OSError:
            return "creating"

    def failure_reason(self) -> str:
        return f"{self.spec.hosts[0]}: not accepting connections"

    def _delete(self) -> None:
        """Nothing to delete: we did not create it."""

    def credentials(self) -> Credentials:
        name = self.spec.password_env
        if not name:
            return Credentials()
        if name not in os.environ:
            raise SpecError("target.password_env", f"environment variable {name} is not set")
        return Credentials(password=os.environ[name])

    def connection_properties(self) -> dict[str, str]:
        engine = self.spec.engine
        hosts = self.spec.hosts
        user, database = self.spec.user, self.spec.database
        if engine == "postgres":
            return sql_url(engine, user, hosts, database, "sslmode=require" if self.spec.tls else "")
        if engine == "mysql":
            return sql_url(engine, user, hosts[:1], database)
        host, _, port = hosts[0].rpartition(":")
        return {
            "redis.host": host,
            "redis.port": port,
            "redis.db": str(self.spec.db),
            "redis.tls": "true" if self.spec.tls else "false",
        }

    def describe(self) -> dict[str, Any]:
        return {"kind": "endpoint", "engine": self.spec.engine, "hosts": list(self.spec.hosts)}
