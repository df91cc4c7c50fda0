"""One deletion path per kind of AWS resource Benchwright creates, used by teardown and the janitor.

A target's teardown (``AwsTarget._delete``), a runner's stop and the janitor's sweep (its ``KINDS``,
janitor.py) all delete through the function of the resource's kind here (the cache parameter groups'
is ``cache_params.delete_group_later_ok``), so a kind is deleted one way, however it is found: by the
handle a stage kept, or by its run tag after a lost execution.

Every function is idempotent: a resource already gone counts as deleted. It returns True when the
resource is gone or going, False when AWS answers "not yet" (a parameter group while its cluster is
still deleting, an interface still attached, a snapshot still being taken): the janitor finds it again
by its tags. Any other refusal is raised as the ClientError, for the caller to name (``delete_named``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from benchwright.providers.aws.common import ENI_IN_USE, error_code, in_state, is_not_found, translate


def gone_ok(call: Callable[..., Any], **kwargs: Any) -> bool:
    from botocore.exceptions import ClientError

    try:
        call(**kwargs)
    except ClientError as exc:
        if is_not_found(exc):
            return True
        raise
    return True


def delete_db_instance(rds: Any, name: str, cluster_member: bool = False) -> bool:
    """An RDS instance, or an Aurora cluster's member (whose backups belong to the cluster)."""
    extra = {} if cluster_member else {"DeleteAutomatedBackups": True}
    return gone_ok(rds.delete_db_instance, DBInstanceIdentifier=name, SkipFinalSnapshot=True, **extra)


def delete_db_cluster(rds: Any, name: str) -> bool:
    return gone_ok(rds.delete_db_cluster, DBClusterIdentifier=name, SkipFinalSnapshot=True)


def delete_db_snapshot(rds: Any, name: str, cluster: bool = False) -> bool:
    """A manual snapshot (snapshot_restore); False while it is still being taken."""
    from botocore.exceptions import ClientError

    try:
        if cluster:
            rds.delete_db_cluster_snapshot(DBClusterSnapshotIdentifier=name)
        else:
            rds.delete_db_snapshot(DBSnapshotIdentifier=name)
    except ClientError as exc:
        if is_not_found(exc):
            return True
        if in_state(exc, "InvalidDBSnapshot", "InvalidDBClusterSnapshot"):
            return False
        raise
    return True


def delete_parameter_group_later_ok(rds: Any, group: str, cluster: bool = False) -> bool:
    """An RDS (cluster) parameter group; False while its instance is still deleting."""
    from botocore.exceptions import ClientError

    call = rds.delete_db_cluster_parameter_group if cluster else rds.delete_db_parameter_group
    key = "DBClusterParameterGroupName" if cluster else "DBParameterGroupName"
    try:
        call(**{key: group})
        return True
    except ClientError as exc:
        if is_not_found(exc):
            return True
        if in_state(exc, "InvalidDBParameterGroup"):
            return False
        raise


def delete_eni_later_ok(ec2: Any, eni: str) -> bool:
    """A network interface; False while it is still attached to an instance being terminated."""
    from botocore.exceptions import ClientError

    try:
        ec2.delete_network_interface(NetworkInterfaceId=eni)
        return True
    except ClientError as exc:
        if is_not_found(exc):
            return True
        if error_code(exc) in ENI_IN_USE:
            return False
        raise


def terminate_instances(ec2: Any, ids: list[str]) -> bool:
    """EC2 instances (a target's nodes, a measured runner); terminated ones stay listed a while."""
    return gone_ok(ec2.terminate_instances, InstanceIds=ids) if ids else True


def stop_task(ecs: Any, cluster: str, task: str, reason: str) -> bool:
    return gone_ok(ecs.stop_task, cluster=cluster, task=task, reason=reason)


def named(what: str, deleter: Callable[..., bool], *args: Any, **kwargs: Any) -> bool:
    """A deletion function's call, with a refusal raised as the named error teardown reports."""
    from botocore.exceptions import ClientError

    try:
        return deleter(*args, **kwargs)
    except ClientError as exc:
        raise translate(exc, what) from exc
