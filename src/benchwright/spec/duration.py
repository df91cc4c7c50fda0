"""How long a spec will take: provisioning, each phase, teardown, for every cell and repeat.

An estimate, not a measurement: it sizes the polling interval, the runner's deadline, the suite's
poll counts and the budget check before a run. The whole spec's wall time, which knows which cells
share a target and a load, is ``benchwright.sharing.estimated_seconds``.
"""

from __future__ import annotations

from benchwright.experiments.sizing import load_seconds
from benchwright.spec.model import BenchmarkSpec
from benchwright.spec.properties import enabled_phases, str_props, workload_properties
from benchwright.spec.workload import PHASE_NAMES

ASSUMED_OPS_PER_S = 5000.0  # an unpaced phase bounded only by its operation count


def phase_seconds(spec: BenchmarkSpec, phase: str) -> float:
    p = getattr(spec.workload.phases, phase)
    if p is None or not p.enabled or phase not in enabled_phases(spec):
        return 0.0
    props = str_props({**spec.workload.properties, **p.properties})
    duration = p.duration_s or _float(props.get("maxexecutiontime"))
    count = p.operation_count or _float(props.get("recordcount" if phase == "load" else "operationcount"))
    rate = p.target_rate or _float(props.get("target")) or ASSUMED_OPS_PER_S
    by_count = count / rate if count else None
    requests = _fixed_requests(spec.workload.name, props)
    if requests is not None:  # a property fixes the requests (redis-bench's -n per test)
        by_count = requests / rate
    if phase == "load" and not p.operation_count:
        by_count = load_seconds(spec.workload.name, workload_properties(spec, "load")) or by_count
    if duration and by_count:
        return min(duration, by_count)
    return duration or by_count or 60.0


def _fixed_requests(workload: str, props: dict[str, str]) -> float | None:
    """The requests a phase makes when a property fixes them, whatever its rate (the workload's
    descriptor's ``fixed_requests``); None: its count and rate decide."""
    # deferred: importing the registry loads every built-in workload
    from benchwright.runner.workloads.registry import descriptors

    found = descriptors().get(workload)
    return None if found is None or found.fixed_requests is None else found.fixed_requests(props)


def _float(v: str | None) -> float | None:
    try:
        return float(v) if v else None
    except ValueError:
        return None


def cell_seconds(spec: BenchmarkSpec) -> float:
    facts = spec.target.facts  # the kind's own provisioning and teardown estimates (spec/target_facts.py)
    phases = sum(phase_seconds(spec, ph) for ph in PHASE_NAMES)
    return facts.provision_s + phases + facts.teardown_s + 3.0  # runner start, judge, store
