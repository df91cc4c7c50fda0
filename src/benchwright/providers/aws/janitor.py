"""Find and delete what runs left behind, by tag: the backstop behind Catch -> Teardown.

Every resource we create carries run id / owner / expires-at tags. The Resource Groups Tagging API
does not cover MemoryDB (and lags for others), so each kind lists its own resources in its service
(its ``find``, providers/aws/targets/kinds/) and deletes each through its one path.
``leftovers(run_id)`` is what the tests use to prove a run left nothing; ``sweep(now)`` is what the
scheduled janitor Lambda runs.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from benchwright.providers.aws.common import Clients
from benchwright.providers.aws.names import OWNER_TAG
from benchwright.providers.aws.tagged import Resource as Resource  # the kinds' listers yield it
from benchwright.providers.aws.targets.kinds import kinds, resource_kinds
from benchwright.providers.aws.targets.kinds.base import Finder


# ---------------------------------------------------------------- listing, by each kind's own lister
def _listers() -> dict[str, tuple[Finder, ...]]:
    """Each service's listers (a kind's ``find``; Aurora and RDS share the rds service), in the kinds'
    order: what ``find(services=[...])`` selects by the kinds' ``lister`` names."""
    found: dict[str, tuple[Finder, ...]] = {}
    for kind in kinds().values():
        if kind.lister is not None and kind.find is not None:
            found[kind.lister] = (*found.get(kind.lister, ()), kind.find)
    return found


LISTERS: dict[str, tuple[Finder, ...]] = _listers()


def find(clients: Clients, services: list[str] | None = None) -> list[Resource]:
    found: list[Resource] = []
    for name in services or list(LISTERS):
        for lister in LISTERS[name]:
            found.extend(lister(clients))
    return found


def leftovers(clients: Clients, run_id: str, services: list[str] | None = None) -> list[Resource]:
    """Everything still alive that is tagged with ``run_id``."""
    return [r for r in find(clients, services) if r.run_id == run_id]


# ---------------------------------------------------------------- deleting
Deleter = Callable[[Clients, str, dict[str, str]], bool]

# Each kind the listers find, with its one deletion path (deletion.py, cache_params.py), in the order
# a run's resources are deleted: as each AWS kind declares them (providers/aws/targets/kinds/).
KINDS: dict[str, Deleter] = {resource.name: resource.delete for resource in resource_kinds()}
ORDER: tuple[str, ...] = tuple(KINDS)


def delete(clients: Clients, resource: Resource) -> bool:
    """Delete one resource through its kind's path; True when it is gone or going (already gone
    included), False when AWS refused (the next sweep finds it again by its tags)."""
    from botocore.exceptions import ClientError

    try:
        deleter = KINDS[resource.kind]
    except KeyError:
        raise ValueError(f"no deletion path for resource kind {resource.kind!r}") from None
    try:
        return deleter(clients, resource.id, resource.extra)
    except ClientError:
        return False


def in_deletion_order(resources: list[Resource]) -> list[Resource]:
    return sorted(resources, key=lambda r: ORDER.index(r.kind))


def delete_run(clients: Clients, run_id: str) -> list[Resource]:
    """Delete everything of one run (instances before their parameter groups); returns what remains."""
    for resource in in_deletion_order(leftovers(clients, run_id)):
        with contextlib.suppress(Exception):
            delete(clients, resource)
    return leftovers(clients, run_id)


def of_run(resource_run_id: str | None, run_id: str) -> bool:
    """True for ``run_id`` itself and for its suite cells (``<run id>-NNN``, see suite.cell_run_id)."""
    if not resource_run_id or not run_id:
        return False
    if resource_run_id == run_id:
        return True
    rest = resource_run_id.removeprefix(f"{run_id}-")
    return rest != resource_run_id and len(rest) == 3 and rest.isdigit()


def sweep_run(clients: Clients, run_id: str, dry_run: bool = False) -> SweepReport:
    """Delete, now, everything tagged with one run (and its suite cells), expired or not: what the
    API's cancel asks for, since a stopped execution never reaches its own Teardown."""
    found = in_deletion_order([r for r in find(clients) if of_run(r.run_id, run_id)])
    report = SweepReport()
    for resource in found:
        label = f"{resource.kind}:{resource.id}"
        ok = True
        if not dry_run:
            try:
                ok = delete(clients, resource)
            except Exception:  # one stubborn resource must not stop the rest of the sweep
                ok = False
        (report.deleted if ok else report.failed).append(label)
    return report


@dataclass
class SweepReport:
    deleted: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)  # not expired yet
    failed: list[str] = field(default_factory=list)
    running: list[str] = field(default_factory=list)  # expired, but the run's execution still runs
    unchecked: list[str] = field(default_factory=list)  # expired; Step Functions could not be asked

    def as_dict(self) -> dict[str, Any]:
        return {"deleted": self.deleted, "kept": self.kept, "failed": self.failed,
                "running": self.running, "unchecked": self.unchecked}  # fmt: skip


def sweep(
    clients: Clients,
    now: datetime | None = None,
    owner: str | None = None,
    dry_run: bool = False,
    running: Callable[[str | None], bool | None] | None = None,
) -> SweepReport:
    """Delete every tagged resource whose expires-at has passed (optionally only ``owner``'s), unless
    ``running`` says its run's execution still runs (a suite outliving an estimate). When that cannot
    be asked (None), the expires-at tag alone decides, as before: a leak costs, the alarm tells."""
    now = now or datetime.now(UTC)
    report = SweepReport()
    for resource in find(clients):
        label = f"{resource.kind}:{resource.id}"
        if owner and resource.tags.get(OWNER_TAG) != owner:
            continue
        if not resource.expired(now):
            report.kept.append(label)
            continue
        alive = running(resource.run_id) if running is not None else None
        if alive:
            report.running.append(label)
            continue
        if alive is None and running is not None:
            report.unchecked.append(label)
        if dry_run or delete(clients, resource):
            report.deleted.append(label)
        else:
            report.failed.append(label)
    return report
