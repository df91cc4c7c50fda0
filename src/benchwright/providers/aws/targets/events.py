"""Events during a run on AWS targets: ``trigger`` does an action with the API call the target's kind
names for it (``AwsTargetKind.events``; the calls are in each kind's folder,
providers/aws/targets/kinds/NAME/events.py, tabulated in docs/experiments-events.md), and its spec
model names the actions it allows (spec/target_facts.py: the spec check refuses the rest before
anything is made); tests/unit/test_target_facts.py holds the two alike.

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


def size_to(to: Mapping[str, Any], key: str) -> str:
    """The size a scale event asks for (``to: {KEY: ...}``): a name such as db.r6g.large."""
    value = to.get(key)
    if not isinstance(value, str) or not value:
        raise SpecError("events.to", f"scale on this target needs to: {{{key}: ...}}")
    return value


def modify_instance_class(t: AwsTarget, instance_class: str, instance: str | None = None) -> str:
    """RDS's and Aurora's scale: ModifyDBInstance to ``instance_class`` at once (the target's own instance,
    or an Aurora cluster's ``instance``)."""
    name = instance or t.name
    aws_call(
        f"rds modify_db_instance {name}",
        t.clients("rds").modify_db_instance,
        DBInstanceIdentifier=name,
        DBInstanceClass=instance_class,
        ApplyImmediately=True,
    )
    return f"ModifyDBInstance {name} to {instance_class}"


def trigger(target: AwsTarget, action: str, to: Mapping[str, Any] | None) -> str:
    """Do ``action`` with the call the target's kind names for it (AwsTargetKind.events)."""
    kind = kind_of_provider(target.kind)
    call = dict(kind.events).get(action) if kind is not None else None
    if call is None:
        raise CapabilityError("events", f"a {target.kind} target cannot {action} during a run")
    return call(target, to or {})
