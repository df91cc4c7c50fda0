"""Validation of the experiment sections that needs the whole spec: which events a provider can do
and whether they fall inside the measured phase. Called from ``spec.check_workload``, so a bad event
is refused at the edge (validate, run, the workflow's ValidateSpec) before anything is created."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from benchwright.errors import SpecError
from benchwright.experiments.capacity import check_capacity
from benchwright.experiments.models import EVENT_ACTIONS, OPERATIONS

if TYPE_CHECKING:
    from benchwright.spec import BenchmarkSpec


def check_experiments(spec: BenchmarkSpec, q: Callable[[str], str]) -> None:
    """Raise ``SpecError`` naming the field (``events[1].action``) of the first problem."""
    provider = spec.target.provider
    run = spec.workload.phases.run
    seen: set[float] = set()
    for i, event in enumerate(spec.events):
        allowed = EVENT_ACTIONS.get(provider, ())
        if event.action not in allowed:
            where = "locally" if provider == "local" else f"on a {provider} target"
            can = f"only {', '.join(allowed)}" if allowed else "none: it is not ours to restart or resize"
            raise SpecError(q(f"events[{i}].action"), f"{event.action} is not possible {where} ({can})")
        if run is None or not run.enabled:
            raise SpecError(q(f"events[{i}]"), "events happen during the run phase, which is disabled")
        if run.duration_s is not None and event.at_s >= run.duration_s:
            raise SpecError(
                q(f"events[{i}].at_s"), f"{event.at_s:g} s is not within the run phase's {run.duration_s:g} s"
            )
        _check_cloud_event(spec, i, event.action, event.to or {}, q)
        if event.at_s in seen:
            raise SpecError(q(f"events[{i}].at_s"), f"another event is already at {event.at_s:g} s")
        seen.add(event.at_s)
    for i, operation in enumerate(spec.operations):
        allowed = OPERATIONS.get(provider, ())
        if operation not in allowed:
            can = ", ".join(allowed) if allowed else "none yet"
            raise SpecError(
                q(f"operations[{i}]"), f"{operation} is not built for {provider} targets (there: {can})"
            )
        if operation in spec.operations[:i]:
            raise SpecError(q(f"operations[{i}]"), f"{operation} is listed twice")
        _check_cloud_operation(spec, i, operation, q)
    check_capacity(spec, q)


SCALE_KEY = {
    "rds": "instance_class",
    "aurora": "instance_class",
    "elasticache": "node_type",
    "memorydb": "node_type",
}


def _check_cloud_event(
    spec: BenchmarkSpec, i: int, action: str, to: dict[str, object], q: Callable[[str], str]
) -> None:
    """What the cloud APIs refuse: a forced failover without a standby, a scale to nothing."""
    target = spec.target
    provider = target.provider
    if action == "failover":
        standby = {
            "rds": getattr(target, "multi_az", True),
            "elasticache": getattr(target, "replicas", 1) >= 1,
            "memorydb": getattr(target, "replicas_per_shard", 1) >= 1,
        }.get(provider, True)
        if not standby:
            needs = {"rds": "target.multi_az: true", "elasticache": "target.replicas >= 1",
                     "memorydb": "target.replicas_per_shard >= 1"}[provider]  # fmt: skip
            raise SpecError(
                q(f"events[{i}].action"), f"a failover needs a standby to fail over to: set {needs}"
            )
    if action == "scale":
        key = SCALE_KEY.get(provider)
        if key is not None and (set(to) != {key} or not isinstance(to.get(key), str)):
            raise SpecError(q(f"events[{i}].to"), f"scale on {provider} takes exactly {{{key}: NAME}}")


def _check_cloud_operation(spec: BenchmarkSpec, i: int, operation: str, q: Callable[[str], str]) -> None:
    """What a cloud operation needs of its target: backups for PITR, replicas that survive the loss of
    a node. (The probe query runs in a Lambda for both engines RDS and Aurora have: psycopg for
    PostgreSQL, PyMySQL for MySQL.)"""
    target = spec.target
    if target.provider == "ec2":
        _check_node_replace(target, i, operation, q)
        return
    if target.provider not in ("rds", "aurora"):
        return
    if operation == "pitr" and target.provider == "rds" and not getattr(target, "backup_retention_days", 0):
        raise SpecError(
            q("target.backup_retention_days"),
            "pitr needs automated backups: set target.backup_retention_days to 1 or more",
        )


def _check_node_replace(target: object, i: int, operation: str, q: Callable[[str], str]) -> None:
    """node_replace terminates a node: only a replicated YugabyteDB cluster keeps its data and answers."""
    template = getattr(target, "template", "")
    if template != "yugabytedb-3node":
        raise SpecError(
            q(f"operations[{i}]"),
            f"{operation} replaces a node of a cluster: template {template} is a single server "
            "(built for yugabytedb-3node)",
        )
    if getattr(target, "replication_factor", 1) < 3:
        raise SpecError(
            q("target.replication_factor"),
            f"{operation} terminates a node: with replication_factor 1 its data is lost; set 3",
        )
