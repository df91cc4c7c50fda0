"""The AWS target kinds, each in its own folder here: NAME/kind.py its descriptor (``KIND``), and for a
target kind NAME/target.py its AwsTarget class and NAME/spec.py its spec model (``MODEL``, which
imports only the spec layer). A new kind is its folder plus a line in ``FOLDERS``.

The janitor's listers, deletion table and order are read from the descriptors (janitor.LISTERS,
janitor.KINDS), the price book prices a target through its kind (pricing.AwsPriceBook.target_lines,
its ``usage`` and ``io_requests``) and so do the seeds' monthly prices (monthly.py), a
rehearsal installs each kind's stand-in (rehearse/hooks.py), the stack grants the IAM actions the
kinds declare (``iam_actions``: infra/permissions.py, run_session.py), and the spec's ``TargetSpec``
is made of the kinds' models (spec/targets.py). This module imports no kind at import time: the spec layer
reads it."""

from __future__ import annotations

import importlib
import importlib.util
from typing import TYPE_CHECKING, Any, TypeAlias

from benchwright.providers.aws.targets.kinds.base import AwsTargetKind, ResourceKind

# The registry: one line per kind, its folder here (in the order the janitor lists and the rehearsal
# installs their stand-ins).
FOLDERS: tuple[str, ...] = (
    "ecs_runner",
    "ec2",
    "rds",
    "aurora",
    "elasticache",
    "memorydb",
    "endpoint",
)
MODULES: tuple[str, ...] = tuple(f"{__name__}.{folder}.kind" for folder in FOLDERS)

if TYPE_CHECKING:
    # The kinds' models as mypy reads them (the run-time union is built from FOLDERS: spec_models);
    # tests/unit/test_aws_target_kinds.py holds the two equal.
    from benchwright.providers.aws.targets.kinds.aurora.spec import AuroraTarget
    from benchwright.providers.aws.targets.kinds.ec2.spec import Ec2Target
    from benchwright.providers.aws.targets.kinds.elasticache.spec import ElastiCacheTarget
    from benchwright.providers.aws.targets.kinds.endpoint.spec import EndpointTarget
    from benchwright.providers.aws.targets.kinds.memorydb.spec import MemoryDbTarget
    from benchwright.providers.aws.targets.kinds.rds.spec import RdsTarget

    AwsTargetModel: TypeAlias = (
        Ec2Target | RdsTarget | AuroraTarget | ElastiCacheTarget | MemoryDbTarget | EndpointTarget
    )


def spec_models() -> tuple[type[Any], ...]:
    """Each target kind's spec model (its folder's spec.py ``MODEL``), in the registry's order; a
    runner kind has none. Imports the spec modules only, never a descriptor or a target class."""
    found: list[type[Any]] = []
    for folder in FOLDERS:
        module = f"{__name__}.{folder}.spec"
        if importlib.util.find_spec(module) is not None:
            found.append(importlib.import_module(module).MODEL)
    return tuple(found)


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


IAM_FIELDS = ("iam_list", "iam_delete", "iam_describe", "iam_create", "iam_modify", "iam_events",
              "iam_operations", "iam_operations_delete")  # fmt: skip


def iam_actions(field: str) -> list[str]:
    """The union of every kind's IAM actions ``field`` (one of ``IAM_FIELDS``), in the registry's
    order, each action once: the stack grants these (infra/permissions.py, run_session.py), so a new
    kind's needs come from its descriptor, not from an edit there."""
    if field not in IAM_FIELDS:
        raise ValueError(f"{field!r}: not an AWS kind's IAM field ({', '.join(IAM_FIELDS)})")
    found: list[str] = []
    for kind in kinds().values():
        found += [action for action in getattr(kind, field) if action not in found]
    return found
