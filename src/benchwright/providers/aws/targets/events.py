"""Events during a run on AWS targets: the API call each action maps to. Each kind names its calls
(``AwsTargetKind.events``, providers/aws/targets/kinds/) and its spec model the actions it allows
(spec/target_facts.py: the spec check refuses the rest before anything is made);
tests/unit/test_target_facts.py holds the two alike.

| target | failover | reboot | scale (``to``) |
|---|---|---|---|
| RDS | RebootDBInstance ForceFailover (Multi-AZ) | RebootDBInstance | ModifyDBInstance DBInstanceClass |
| Aurora | FailoverDBCluster | RebootDBInstance (the writer) | ModifyDBInstance, every instance |
| ElastiCache | TestFailover of node group 0001 | RebootCacheCluster (the primary's cluster) | ModifyReplicationGroup CacheNodeType |
| MemoryDB | FailoverShard 0001 | - | UpdateCluster NodeType |
| EC2 (self-managed) | - | RebootInstances | - |

Each call only starts the action and returns (the service does it asynchronously): the outage is
what the runner's clients measure, not how long the call took. Scaling applies immediately.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from benchwright.errors import CapabilityError, SpecError
from benchwright.providers.aws.common import aws_call
from benchwright.providers.aws.targets.kinds import kind_of_provider

if TYPE_CHECKING:
    from benchwright.providers.aws.targets.base import AwsTarget


def _size(to: Mapping[str, Any], key: str) -> str:
    value = to.get(key)
    if not isinstance(value, str) or not value:
        raise SpecError("events.to", f"scale on this target needs to: {{{key}: ...}}")
    return value


# ---------------------------------------------------------------- RDS
def _rds_reboot(t: AwsTarget, force_failover: bool) -> str:
    aws_call(
        f"rds reboot_db_instance {t.name}",
        t.clients("rds").reboot_db_instance,
        DBInstanceIdentifier=t.name,
        ForceFailover=force_failover,
    )
    return f"RebootDBInstance {t.name}" + (" with ForceFailover" if force_failover else "")


def _rds_scale(t: AwsTarget, instance_class: str, instance: str | None = None) -> str:
    name = instance or t.name
    aws_call(
        f"rds modify_db_instance {name}",
        t.clients("rds").modify_db_instance,
        DBInstanceIdentifier=name,
        DBInstanceClass=instance_class,
        ApplyImmediately=True,
    )
    return f"ModifyDBInstance {name} to {instance_class}"


def rds_failover(t: AwsTarget, to: Mapping[str, Any]) -> str:
    return _rds_reboot(t, True)


def rds_reboot(t: AwsTarget, to: Mapping[str, Any]) -> str:
    return _rds_reboot(t, False)


def rds_scale(t: AwsTarget, to: Mapping[str, Any]) -> str:
    return _rds_scale(t, _size(to, "instance_class"))


# ---------------------------------------------------------------- Aurora
def aurora_failover(t: AwsTarget, to: Mapping[str, Any]) -> str:
    aws_call(
        f"rds failover_db_cluster {t.name}", t.clients("rds").failover_db_cluster, DBClusterIdentifier=t.name
    )
    return f"FailoverDBCluster {t.name}"


def _aurora_instances(t: AwsTarget) -> list[str]:
    count = int(t.handle.get("instances") or t.instance_count)  # type: ignore[attr-defined]
    return [t.instance_name(i) for i in range(count)]  # type: ignore[attr-defined]


def aurora_scale(t: AwsTarget, to: Mapping[str, Any]) -> str:
    instance_class = _size(to, "instance_class")
    return "; ".join(_rds_scale(t, instance_class, name) for name in _aurora_instances(t))


def aurora_reboot(t: AwsTarget, to: Mapping[str, Any]) -> str:
    writer = _aurora_instances(t)[0]
    aws_call(
        f"rds reboot_db_instance {writer}", t.clients("rds").reboot_db_instance, DBInstanceIdentifier=writer
    )
    return f"RebootDBInstance {writer}"


# ---------------------------------------------------------------- ElastiCache / MemoryDB
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
    node_type = _size(to, "node_type")
    aws_call(
        f"elasticache modify_replication_group {t.name}",
        t.clients("elasticache").modify_replication_group,
        ReplicationGroupId=t.name,
        CacheNodeType=node_type,
        ApplyImmediately=True,
    )
    return f"ModifyReplicationGroup {t.name} to {node_type}"


def memorydb_failover(t: AwsTarget, to: Mapping[str, Any]) -> str:
    aws_call(
        f"memorydb failover_shard {t.name}",
        t.clients("memorydb").failover_shard,
        ClusterName=t.name,
        ShardName="0001",
    )
    return f"FailoverShard {t.name} shard 0001"


def memorydb_scale(t: AwsTarget, to: Mapping[str, Any]) -> str:
    node_type = _size(to, "node_type")
    aws_call(
        f"memorydb update_cluster {t.name}",
        t.clients("memorydb").update_cluster,
        ClusterName=t.name,
        NodeType=node_type,
    )
    return f"UpdateCluster {t.name} to {node_type}"


def ec2_reboot(t: AwsTarget, to: Mapping[str, Any]) -> str:
    ids = [i for i in t.handle.get("instances", "").split(",") if i]
    if not ids:
        raise CapabilityError("events", "the EC2 target has no instances to reboot yet")
    aws_call("ec2 reboot_instances", t.clients("ec2").reboot_instances, InstanceIds=ids)
    return f"RebootInstances {', '.join(ids)}"


def trigger(target: AwsTarget, action: str, to: Mapping[str, Any] | None) -> str:
    """Do ``action`` with the call the target's kind names for it (AwsTargetKind.events)."""
    kind = kind_of_provider(target.kind)
    call = dict(kind.events).get(action) if kind is not None else None
    if call is None:
        raise CapabilityError("events", f"a {target.kind} target cannot {action} during a run")
    return call(target, to or {})
