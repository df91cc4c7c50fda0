"""The AWS target kinds, each in its own folder here (NAME/kind.py its descriptor, NAME/target.py its
target class); a new kind is its folder plus a line in ``MODULES``. The janitor's listers, deletion table and order are read from them (janitor.LISTERS,
janitor.KINDS), the price book prices a target through its kind (pricing.AwsPriceBook.target_lines,
usage_prices.py, the magnetic I/O line) and so do the seeds' monthly prices (monthly.py), and a
rehearsal installs each kind's stand-in (rehearse/hooks.py)."""

from __future__ import annotations

import importlib
from typing import Any

from benchwright.providers.aws.targets.kinds.base import AwsTargetKind, ResourceKind

MODULES: tuple[str, ...] = (
    "benchwright.providers.aws.targets.kinds.ecs_runner.kind",
    "benchwright.providers.aws.targets.kinds.ec2.kind",
    "benchwright.providers.aws.targets.kinds.rds.kind",
    "benchwright.providers.aws.targets.kinds.aurora.kind",
    "benchwright.providers.aws.targets.kinds.elasticache.kind",
    "benchwright.providers.aws.targets.kinds.memorydb.kind",
    "benchwright.providers.aws.targets.kinds.endpoint.kind",
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


def target_classes() -> dict[str, type[Any]]:
    """Each provider's AwsTarget class, from its kind's ``target`` (imported here, on first use)."""
    found: dict[str, type[Any]] = {}
    for kind in kinds().values():
        if kind.provider is not None and kind.target is not None:
            module, _, name = kind.target.partition(":")
            found[kind.provider] = getattr(importlib.import_module(module), name)
    return found


def kind_of_provider(provider: str) -> AwsTargetKind | None:
    """The kind of a spec's ``target.provider`` (None for ``local``, which no AWS kind serves)."""
    return next((k for k in kinds().values() if k.provider == provider), None)


def rehearsal_services() -> tuple[str, ...]:
    """Every kind's stand-in modules, each once, in the kinds' order (a kind's own order kept):
    what a rehearsal's hooks install after the workflow's own services (rehearse/hooks.py)."""
    found: list[str] = []
    for kind in kinds().values():
        assert kind.rehearsal is not None  # AwsTargetKind refuses a kind without one
        found += [m for m in kind.rehearsal.services if m not in found]
    return tuple(found)


def resource_kinds() -> tuple[ResourceKind, ...]:
    """Every kind's resources in deletion order; a resource kind is owned by one kind only."""
    owned: dict[str, ResourceKind] = {}
    for kind in kinds().values():
        for resource in kind.resources:
            if resource.name in owned:
                raise ValueError(f"resource kind {resource.name!r} is declared by two AWS kinds")
            owned[resource.name] = resource
    return tuple(sorted(owned.values(), key=lambda r: (r.order, r.name)))
