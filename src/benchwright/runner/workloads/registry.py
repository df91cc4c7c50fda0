"""The workload lookups: every registered workload, its descriptor, its class, whether an engine can
run it.

Apart from base.py (which a workload imports to define itself and ``register`` with) so that the
two never need each other: a workload's module imports base, the package imports each built-in's
module, and this module imports the package, so asking anything here finds the built-ins registered.
"""

from __future__ import annotations

import benchwright.runner.workloads  # noqa: F401 - importing the package registers the built-ins
from benchwright.errors import CapabilityError, SpecError
from benchwright.runner.drivers import capabilities
from benchwright.runner.workloads.base import WORKLOADS, Workload
from benchwright.runner.workloads.descriptor import WorkloadDescriptor


def registered() -> dict[str, type[Workload]]:
    """Every registered workload class by name (the built-ins, and any a test has registered)."""
    return WORKLOADS


def descriptors() -> dict[str, WorkloadDescriptor]:
    """Every registered workload's descriptor, by name, in registration order."""
    return {name: cls.descriptor for name, cls in registered().items()}


def descriptor_of(name: str) -> WorkloadDescriptor | None:
    """The descriptor of workload ``name`` (or of a native tool's results it publishes like), None
    when no registered workload has that name."""
    found = descriptors()
    if name in found:
        return found[name]
    return next((d for d in found.values() if name in d.result_aliases), None)


def workload_class(name: str) -> type[Workload]:
    try:
        return WORKLOADS[name]
    except KeyError:
        raise SpecError(
            "workload", f"unknown workload {name!r} (one of {', '.join(sorted(WORKLOADS))})"
        ) from None


def check_capability(workload: str, engine: str) -> None:
    """Refuse a workload on an engine that cannot run it, before anything starts."""
    needed = workload_class(workload).requires
    if needed not in capabilities(engine):
        raise CapabilityError(
            "engine", f"workload {workload!r} needs {needed.value}, which engine {engine!r} does not offer"
        )
