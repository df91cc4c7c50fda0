"""MemoryDB's events: the API call of each action its kind allows (kind.py names them; events.trigger
calls them)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from benchwright.providers.aws.common import aws_call
from benchwright.providers.aws.targets.base import AwsTarget
from benchwright.providers.aws.targets.events import size_to


def memorydb_failover(t: AwsTarget, to: Mapping[str, Any]) -> str:
    aws_call(
        f"memorydb failover_shard {t.name}",
        t.clients("memorydb").failover_shard,
        ClusterName=t.name,
        ShardName="0001",
    )
    return f"FailoverShard {t.name} shard 0001"


def memorydb_scale(t: AwsTarget, to: Mapping[str, Any]) -> str:
    node_type = size_to(to, "node_type")
    aws_call(
        f"memorydb update_cluster {t.name}",
        t.clients("memorydb").update_cluster,
        ClusterName=t.name,
        NodeType=node_type,
    )
    return f"UpdateCluster {t.name} to {node_type}"
