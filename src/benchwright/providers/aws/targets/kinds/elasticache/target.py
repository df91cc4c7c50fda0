"""ElastiCache Redis / Valkey replication groups, pinned to an AZ so the runner can sit beside them."""

from __future__ import annotations

import re
from typing import Any

from benchwright.errors import ProvisioningFailed, SpecError
from benchwright.providers.aws.common import (
    already_exists,
    aws_call,
    is_not_found,
    tag_list,
)
from benchwright.providers.aws.deletion import gone_ok, named
from benchwright.providers.aws.targets.base import AwsTarget, ServiceStatus, redis_connection
from benchwright.providers.aws.targets.cache_params import (
    ELASTICACHE,
    delete_group_later_ok,
    elasticache_family,
    settings_group,
)
from benchwright.providers.aws.targets.kinds.elasticache.spec import ElastiCacheTarget as ElastiCacheSpec


def az_name(clients: Any, az: str) -> str:
    """An AZ id (use1-az1) as this account's AZ name (us-east-1a); a name passes through."""
    if not re.match(r"^[a-z]{2,4}[0-9]-az[0-9]+$", az):
        return az
    zones = aws_call(
        "ec2 describe_availability_zones", clients("ec2").describe_availability_zones, ZoneIds=[az]
    )["AvailabilityZones"]
    if not zones:
        raise SpecError("target.availability_zone", f"unknown AZ id {az!r}")
    return str(zones[0]["ZoneName"])


class ElastiCacheTarget(AwsTarget[ElastiCacheSpec]):
    kind = "elasticache"
    default_port = 6379

    def _parameter_group(self, client: Any) -> str | None:
        """The spec's settings as a parameter group made before the cluster (cache_params)."""
        family = elasticache_family(self.spec.cache_engine, self.spec.engine_version)
        return settings_group(ELASTICACHE, client, self, family)

    def _create(self) -> dict[str, str]:
        client = self.clients("elasticache")
        group = self._parameter_group(client)
        replicas = self.spec.replicas
        args: dict[str, Any] = {
            "ReplicationGroupId": self.name,
            "ReplicationGroupDescription": f"benchwright {self.run_id}",
            "Engine": self.spec.cache_engine,
            "EngineVersion": self.spec.engine_version,
            "CacheNodeType": self.spec.node_type,
            "NumCacheClusters": replicas + 1,
            "AutomaticFailoverEnabled": replicas > 0,
            "TransitEncryptionEnabled": self.spec.tls,
            "PreferredCacheClusterAZs": [az_name(self.clients, self.spec.availability_zone)] * (replicas + 1),
            "Tags": tag_list(self.tags()),
        }
        if group:
            args["CacheParameterGroupName"] = group
        if self.config.cache_subnet_group:
            args["CacheSubnetGroupName"] = self.config.cache_subnet_group
        if self.config.security_group_ids:
            args["SecurityGroupIds"] = list(self.config.security_group_ids)
        try:
            aws_call(f"elasticache replication group {self.name}", client.create_replication_group, **args)
        except ProvisioningFailed as exc:
            if not already_exists(exc):
                raise
        return {"name": self.name, **({"parameter_group": group} if group else {})}

    def _service_status(self) -> ServiceStatus:
        from botocore.exceptions import ClientError

        client = self.clients("elasticache")
        try:
            group = client.describe_replication_groups(ReplicationGroupId=self.name)["ReplicationGroups"][0]
        except ClientError as exc:
            if is_not_found(exc):
                return "deleted", None, None
            raise
        status = group.get("Status", "")
        if status in {"create-failed", "deleting"}:
            return "failed", None, None
        if status != "available":
            return "creating", None, None
        node_groups = group.get("NodeGroups") or [{}]
        primary = node_groups[0].get("PrimaryEndpoint") or group.get("ConfigurationEndpoint") or {}
        members = node_groups[0].get("NodeGroupMembers") or []
        for member in members:
            if member.get("CurrentRole", "primary") == "primary" and member.get("PreferredAvailabilityZone"):
                self.handle["availability_zone"] = member["PreferredAvailabilityZone"]
                break
        if not primary.get("Address"):
            return "creating", None, None
        return "ready", primary["Address"], int(primary.get("Port") or self.default_port)

    def connection_properties(self) -> dict[str, str]:
        host, port = self.endpoint()
        return redis_connection(host, port, self.spec.tls)

    def metric_dimensions(self) -> list[tuple[str, dict[str, str]]]:
        return [
            ("AWS/ElastiCache", {"ReplicationGroupId": self.name}),
            ("AWS/ElastiCache", {"CacheClusterId": f"{self.name}-001"}),
        ]

    def _delete(self) -> None:
        client = self.clients("elasticache")
        named(
            f"elasticache replication group {self.name}",
            gone_ok,
            client.delete_replication_group,
            ReplicationGroupId=self.name,
        )
        group = self.handle.get("parameter_group")
        if group:
            delete_group_later_ok(ELASTICACHE, client, group)
