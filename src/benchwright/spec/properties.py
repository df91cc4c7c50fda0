"""The two questions the stages ask of a spec's workload: which phases run, with which properties.

Apart from the checks (spec/checks.py) because the experiments' capacity check and the sharing of
loaded data ask them too, and the checks call the experiments' checks: one module each side imports.
"""

from __future__ import annotations

from benchwright.spec._base import Scalar
from benchwright.spec.model import BenchmarkSpec
from benchwright.spec.workload import PHASE_NAMES


def str_props(values: dict[str, Scalar]) -> dict[str, str]:
    return {k: (str(v).lower() if isinstance(v, bool) else str(v)) for k, v in values.items()}


def enabled_phases(spec: BenchmarkSpec) -> list[str]:
    """Phases to run, in order: those enabled; a default (unwritten) load / run only if the workload has it."""
    # deferred: importing the registry loads every built-in workload
    from benchwright.runner.workloads.registry import workload_class

    supported = workload_class(spec.workload.name).phases
    phases = spec.workload.phases
    out: list[str] = []
    for name in PHASE_NAMES:
        p = getattr(phases, name)
        if p is None or not p.enabled:
            continue
        if phases.is_default(name) and name not in supported:
            continue
        out.append(name)
    return out


def workload_properties(spec: BenchmarkSpec, phase: str | None = None) -> dict[str, str]:
    """The workload's properties: YCSB property files, then the spec's properties, then phase overrides."""
    props = str_props(spec.workload.properties)
    if spec.workload.files:
        # deferred: a module of a workload's package loads every built-in workload
        from benchwright.runner.workloads.ycsb.properties import load_properties

        props = load_properties(list(spec.workload.files), props)
    if phase is not None:
        p = getattr(spec.workload.phases, phase)
        if p is not None:
            props.update(str_props(p.properties))
    return props
