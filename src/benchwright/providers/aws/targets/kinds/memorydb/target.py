"""MemoryDB clusters (durable Redis / Valkey). The tagging API misses MemoryDB: the janitor lists it."""

from __future__ import annotations

from typing import Any

from benchwright.errors import ProvisioningFailed
from benchwright.providers.aws.common import (
    already_exists,
    aws_call,
    is_not_found,
    tag_list,
)
from benchwright.providers.aws.deletion import gone_ok, named
from benchwright.providers.aws.targets.base import AwsTarget, ServiceStatus, redis_connection
from benchwright.providers.aws.targets.cache_params import (
    MEMORYDB,
    delete_group_later_ok,
    memorydb_family,
    settings_group,
)
from benchwright.providers.aws.targets.kinds.memorydb.spec import MemoryDbTarget as MemoryDbSpec

ACL_NAME = "open-access"  # MemoryDB's built-in ACL: the default user, no password


class MemoryDbTarget(AwsTarget[MemoryDbSpec]):
    kind = "memorydb"
    default_port = 6379

    def _parameter_group(self, client: Any) -> str | None:
        """The spec's settings as a parameter group made before the cluster (cache_params)."""
        family = memorydb_family(self.spec.cache_engine, self.spec.engine_version)
        return settings_group(MEMORYDB, client, self, family)

    def _create(self) -> dict[str, str]:
        client = self.clients("memorydb")
        group = self._parameter_group(client)
        args: dict[str, Any] = {
            "ClusterName": self.name,
            "Engine": self.spec.cache_engine,
            "EngineVersion": self.spec.engine_version,
            "NodeType": self.spec.node_type,
            "ACLName": ACL_NAME,
            "NumShards": self.spec.shards,
            "NumReplicasPerShard": self.spec.replicas_per_shard,
            "TLSEnabled": self.spec.tls,
            "Tags": tag_list(self.tags()),
        }
        if group:
            args["ParameterGroupName"] = group
        if self.config.memorydb_subnet_group:
            args["SubnetGroupName"] = self.config.memorydb_subnet_group
        if self.config.security_group_ids:
            args["SecurityGroupIds"] = list(self.config.security_group_ids)
        try:
            aws_call(f"memorydb cluster {self.name}", client.create_cluster, **args)
        except ProvisioningFailed as exc:
            if not already_exists(exc):
                raise
        return {"name": self.name, **({"parameter_group": group} if group else {})}

    def _service_status(self) -> ServiceStatus:
        from botocore.exceptions import ClientError

        try:
            found = self.clients("memorydb").describe_clusters(ClusterName=self.name, ShowShardDetails=True)[
                "Clusters"
            ]
        except ClientError as exc:
            if is_not_found(exc):
                return "deleted", None, None
            raise
        if not found:
            return "deleted", None, None
        cluster = found[0]
        status = str(cluster.get("Status", "")).lower()
        if status in {"create-failed", "deleting"}:
            return "failed", None, None
        self._note_zone(cluster)
        endpoint = cluster.get("ClusterEndpoint") or {}
        if status != "available" or not endpoint.get("Address"):
            return "creating", None, None
        return "ready", endpoint["Address"], int(endpoint.get("Port") or self.default_port)

    def _note_zone(self, cluster: dict[str, Any]) -> None:
        """The AZ of shard 0001's first node (its primary at creation): a ``same-az`` runner is placed
        there, and the result names it. MemoryDB says it only with ShowShardDetails."""
        shards = cluster.get("Shards") or []
        nodes = (shards[0].get("Nodes") or []) if shards else []
        zone = nodes[0].get("AvailabilityZone") if nodes else None
        if zone:
            self.handle["availability_zone"] = str(zone)

    def connection_properties(self) -> dict[str, str]:
        host, port = self.endpoint()
        return redis_connection(host, port, self.spec.tls)

    def metric_dimensions(self) -> list[tuple[str, dict[str, str]]]:
        return [("AWS/MemoryDB", {"ClusterName": self.name})]

    def _delete(self) -> None:
        client = self.clients("memorydb")
        named(f"memorydb cluster {self.name}", gone_ok, client.delete_cluster, ClusterName=self.name)
        group = self.handle.get("parameter_group")
        if group:
            delete_group_later_ok(MEMORYDB, client, group)
