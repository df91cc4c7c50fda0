"""ElastiCache's events: the API call of each action its kind allows (kind.py names them;
events.trigger calls them)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from benchwright.providers.aws.common import aws_call
from benchwright.providers.aws.targets.base import AwsTarget
from benchwright.providers.aws.targets.events import size_to


def elasticache_failover(t: AwsTarget, to: Mapping[str, Any]) -> str:
    aws_call(
        f"elasticache test_failover {t.name}",
        t.clients("elasticache").test_failover,
        ReplicationGroupId=t.name,
        NodeGroupId="0001",
    )
    return f"TestFailover {t.name} node group 0001"


def elasticache_reboot(t: AwsTarget, to: Mapping[str, Any]) -> str:
    cluster = f"{t.name}-001"  # the replication group's first member (its primary at creation)
    aws_call(
        f"elasticache reboot_cache_cluster {cluster}",
        t.clients("elasticache").reboot_cache_cluster,
        CacheClusterId=cluster,
        CacheNodeIdsToReboot=["0001"],
    )
    return f"RebootCacheCluster {cluster}"


def elasticache_scale(t: AwsTarget, to: Mapping[str, Any]) -> str:
    node_type = size_to(to, "node_type")
    aws_call(
        f"elasticache modify_replication_group {t.name}",
        t.clients("elasticache").modify_replication_group,
        ReplicationGroupId=t.name,
        CacheNodeType=node_type,
        ApplyImmediately=True,
    )
    return f"ModifyReplicationGroup {t.name} to {node_type}"
