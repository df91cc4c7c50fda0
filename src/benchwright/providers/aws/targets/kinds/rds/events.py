"""RDS's events: the API call of each action its kind allows (kind.py names them; events.trigger
calls them). Failover is a reboot with ForceFailover (Multi-AZ)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from benchwright.providers.aws.common import aws_call
from benchwright.providers.aws.targets.base import AwsTarget
from benchwright.providers.aws.targets.events import modify_instance_class, size_to


def _rds_reboot(t: AwsTarget, force_failover: bool) -> str:
    aws_call(
        f"rds reboot_db_instance {t.name}",
        t.clients("rds").reboot_db_instance,
        DBInstanceIdentifier=t.name,
        ForceFailover=force_failover,
    )
    return f"RebootDBInstance {t.name}" + (" with ForceFailover" if force_failover else "")


def rds_failover(t: AwsTarget, to: Mapping[str, Any]) -> str:
    return _rds_reboot(t, True)


def rds_reboot(t: AwsTarget, to: Mapping[str, Any]) -> str:
    return _rds_reboot(t, False)


def rds_scale(t: AwsTarget, to: Mapping[str, Any]) -> str:
    return modify_instance_class(t, size_to(to, "instance_class"))
