"""An existing database: nothing is created or deleted; readiness is still a real connection.

The password of an endpoint is named by ``password_env`` (the NAME of an environment variable). In
AWS that variable is set on the runner task from a Secrets Manager secret by the deploy stack; the
workflow passes only its name, never the value.
"""

from __future__ import annotations

from benchwright.providers.aws.targets.base import AwsTarget, ServiceStatus, redis_connection
from benchwright.providers.aws.targets.kinds.endpoint.spec import EndpointTarget as EndpointSpec


class EndpointTarget(AwsTarget[EndpointSpec]):
    kind = "endpoint"

    def _create(self) -> dict[str, str]:
        return {"name": "endpoint"}

    def _hosts(self) -> list[tuple[str, int]]:
        out = []
        for item in self.spec.hosts:  # host:port, checked by the spec
            host, _, port = item.rpartition(":")
            out.append((host, int(port)))
        return out

    def _service_status(self) -> ServiceStatus:
        hosts = self._hosts()
        if not hosts:
            return "failed", None, None
        host, port = hosts[0]
        return "ready", host, port

    def connection_properties(self) -> dict[str, str]:
        hosts = self._hosts()
        engine = self.spec.engine
        if engine == "redis":
            host, port = hosts[0]
            props = redis_connection(host, port, self.spec.tls)
            props["redis.db"] = str(self.spec.db)
            return props
        user, database = self.spec.user, self.spec.database
        joined = ",".join(f"{h}:{p}" for h, p in hosts)
        from benchwright.providers.urls import sql_url

        return sql_url(engine, user, joined.split(","), database)

    def _delete(self) -> None:
        """Not ours: never deleted."""
