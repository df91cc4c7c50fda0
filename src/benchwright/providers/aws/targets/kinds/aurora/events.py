"""Aurora's events: the API call of each action its kind allows (kind.py names them; events.trigger
calls them). Scaling modifies every instance; a reboot is the writer's."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from benchwright.providers.aws.common import aws_call
from benchwright.providers.aws.targets.base import AwsTarget
from benchwright.providers.aws.targets.events import modify_instance_class, size_to


def aurora_failover(t: AwsTarget, to: Mapping[str, Any]) -> str:
    aws_call(
        f"rds failover_db_cluster {t.name}", t.clients("rds").failover_db_cluster, DBClusterIdentifier=t.name
    )
    return f"FailoverDBCluster {t.name}"


def _aurora_instances(t: AwsTarget) -> list[str]:
    count = int(t.handle.get("instances") or t.instance_count)  # type: ignore[attr-defined]
    return [t.instance_name(i) for i in range(count)]  # type: ignore[attr-defined]


def aurora_scale(t: AwsTarget, to: Mapping[str, Any]) -> str:
    instance_class = size_to(to, "instance_class")
    return "; ".join(modify_instance_class(t, instance_class, name) for name in _aurora_instances(t))


def aurora_reboot(t: AwsTarget, to: Mapping[str, Any]) -> str:
    writer = _aurora_instances(t)[0]
    aws_call(
        f"rds reboot_db_instance {writer}", t.clients("rds").reboot_db_instance, DBInstanceIdentifier=writer
    )
    return f"RebootDBInstance {writer}"
