"""EC2's event: a reboot of the target's instances (kind.py names it; events.trigger calls it)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from benchwright.errors import CapabilityError
from benchwright.providers.aws.common import aws_call
from benchwright.providers.aws.targets.base import AwsTarget


def ec2_reboot(t: AwsTarget, to: Mapping[str, Any]) -> str:
    ids = [i for i in t.handle.get("instances", "").split(",") if i]
    if not ids:
        raise CapabilityError("events", "the EC2 target has no instances to reboot yet")
    aws_call("ec2 reboot_instances", t.clients("ec2").reboot_instances, InstanceIds=ids)
    return f"RebootInstances {', '.join(ids)}"
