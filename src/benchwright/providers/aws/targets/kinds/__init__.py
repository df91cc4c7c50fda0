"""The AWS target kinds, each described in its own module here; a new kind is its module plus a line
in ``MODULES``. The janitor's deletion table and order are read from them (janitor.KINDS)."""

from __future__ import annotations

import importlib

from benchwright.providers.aws.targets.kinds.base import AwsTargetKind, ResourceKind

MODULES: tuple[str, ...] = (
    "benchwright.providers.aws.targets.kinds.ecs_runner",
    "benchwright.providers.aws.targets.kinds.ec2",
    "benchwright.providers.aws.targets.kinds.rds",
    "benchwright.providers.aws.targets.kinds.aurora",
    "benchwright.providers.aws.targets.kinds.elasticache",
    "benchwright.providers.aws.targets.kinds.memorydb",
    "benchwright.providers.aws.targets.kinds.endpoint",
)


def kinds() -> dict[str, AwsTargetKind]:
    """Every registered kind by name."""
    found: dict[str, AwsTargetKind] = {}
    for module in MODULES:
        kind = importlib.import_module(module).KIND
        if not isinstance(kind, AwsTargetKind) or kind.name in found:
            raise ValueError(f"{module}.KIND: not an AwsTargetKind, or a second kind named {kind.name!r}")
        found[kind.name] = kind
    return found


def resource_kinds() -> tuple[ResourceKind, ...]:
    """Every kind's resources in deletion order; a resource kind is owned by one kind only."""
    owned: dict[str, ResourceKind] = {}
    for kind in kinds().values():
        for resource in kind.resources:
            if resource.name in owned:
                raise ValueError(f"resource kind {resource.name!r} is declared by two AWS kinds")
            owned[resource.name] = resource
    return tuple(sorted(owned.values(), key=lambda r: (r.order, r.name)))
