"""Validation of the experiment sections that needs the whole spec: which events a provider can do
and whether they fall inside the measured phase. Called from ``spec.check_workload``, so a bad event
is refused at the edge (validate, run, the workflow's ValidateSpec) before anything is created."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from benchwright.errors import SpecError
from benchwright.experiments.capacity import check_capacity

if TYPE_CHECKING:
    from benchwright.spec import BenchmarkSpec


def check_experiments(spec: BenchmarkSpec, q: Callable[[str], str]) -> None:
    """Raise ``SpecError`` naming the field (``events[1].action``) of the first problem. What a target
    can do is its kind's own (``spec.target.facts``, spec/target_facts.py)."""
    provider = spec.target.provider
    facts = spec.target.facts
    run = spec.workload.phases.run
    seen: set[float] = set()
    for i, event in enumerate(spec.events):
        allowed = facts.events
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
        allowed = facts.operations
        if operation not in allowed:
            can = ", ".join(allowed) if allowed else "none yet"
            raise SpecError(
                q(f"operations[{i}]"), f"{operation} is not built for {provider} targets (there: {can})"
            )
        if operation in spec.operations[:i]:
            raise SpecError(q(f"operations[{i}]"), f"{operation} is listed twice")
        refusal = spec.target.operation_refusal(operation)  # backups for PITR, replicas for node_replace
        if refusal is not None:
            field, reason = refusal
            raise SpecError(q(field or f"operations[{i}]"), reason)
    check_capacity(spec, q)


def _check_cloud_event(
    spec: BenchmarkSpec, i: int, action: str, to: dict[str, object], q: Callable[[str], str]
) -> None:
    """What the cloud APIs refuse: a forced failover without a standby, a scale to nothing."""
    target = spec.target
    if action == "failover":
        needs = target.failover_needs()
        if needs is not None:
            raise SpecError(
                q(f"events[{i}].action"), f"a failover needs a standby to fail over to: set {needs}"
            )
    if action == "scale":
        key = target.facts.scale_key
        if key is not None and (set(to) != {key} or not isinstance(to.get(key), str)):
            raise SpecError(q(f"events[{i}].to"), f"scale on {target.provider} takes exactly {{{key}: NAME}}")
