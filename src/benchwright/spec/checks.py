"""The semantic checks that need the workload registry: does the workload exist, can this engine run
it, are its properties (and the driver's, and a native tool's) valid.

The two questions the stages ask of a spec's workload (which phases run, with which properties) are
in spec/properties.py, which the experiments and sharing modules import without these checks.
"""

from __future__ import annotations

from typing import Any

from benchwright.errors import CapabilityError, SpecError
from benchwright.spec.model import BenchmarkSpec
from benchwright.spec.properties import enabled_phases, str_props, workload_properties
from benchwright.spec.workload import DEFAULTED, PHASE_NAMES


def _requalify(exc: SpecError, prefix: str) -> SpecError:
    field = exc.field or ""
    if field and not field.startswith(("workload.", "target.")) and ":" not in field:
        field = f"workload.properties.{field}"
    elif not field:
        field = "workload.properties"
    full = ".".join(p for p in (prefix, field) if p)
    new = type(exc).__new__(type(exc))
    SpecError.__init__(new, full, exc.detail)
    return new


def _check_driver(spec: BenchmarkSpec, props: dict[str, str], q: Any) -> None:
    """Driver settings in the properties (redis.datatype ...) are checked now, not in the runner.
    Nothing connects, and no client library is needed (drivers.check_settings)."""
    # deferred: the drivers package imports the event loop and its compiled extension
    from benchwright.runner.drivers import check_settings

    try:
        placeholder = {
            "postgres.url": "postgresql://check@127.0.0.1:5432/check",
            "mysql.url": "mysql://check@127.0.0.1:3306/check",
        }  # the target's come later
        check_settings(spec.target.engine, {**placeholder, **props})
    except SpecError as exc:
        raise SpecError(
            q(f"workload.properties.{exc.field}" if exc.field else "workload.properties"), exc.detail
        ) from None
    except Exception:  # anything else is for the runner to report against the real server
        return


def _check_known(spec: BenchmarkSpec, prefix: str) -> None:
    """Keys in Benchwright's own namespaces (tpcc., redisbench., redis. ...) must exist: a typo is an
    error with a suggestion, not a silently measured default."""
    # deferred: importing the registry loads every built-in workload
    from benchwright.runner.workloads.known_keys import check_known_keys

    sources = [("workload.properties", str_props(spec.workload.properties))]
    for name in PHASE_NAMES:
        p = getattr(spec.workload.phases, name)
        if p is not None:
            sources.append((f"workload.phases.{name}.properties", str_props(p.properties)))
    for where, props in sources:
        try:
            check_known_keys(props)
        except SpecError as exc:
            full = ".".join(x for x in (prefix, where, exc.field) if x)
            raise SpecError(full, exc.detail) from None


def check_workload(spec: BenchmarkSpec, prefix: str = "") -> list[str]:
    """Registry, capability and property checks; returns the workload's warnings."""
    # deferred: importing the registry loads every built-in workload
    from benchwright.runner.workloads.registry import check_capability, workload_class

    def q(field: str) -> str:
        return ".".join(p for p in (prefix, field) if p)

    try:
        cls = workload_class(spec.workload.name)
    except SpecError as exc:
        raise SpecError(q("workload.name"), exc.detail) from None
    try:
        check_capability(spec.workload.name, spec.target.engine)
    except CapabilityError as exc:
        raise CapabilityError(q("target.engine"), exc.detail) from None
    for phase in DEFAULTED:
        if spec.workload.phases.is_default(phase):
            continue  # a default phase runs only if the workload has it: nothing to refuse
        p = getattr(spec.workload.phases, phase)
        if p is not None and p.enabled and phase not in (*cls.phases, *cls.optional_phases):
            raise SpecError(q(f"workload.phases.{phase}"), f"workload {cls.name!r} has no {phase} phase")
    count = spec.runner.count
    if count > 1 and cls.descriptor.load_share is None and "load" in enabled_phases(spec):
        raise SpecError(
            q("runner.count"),
            f"{cls.name}'s load is not split between runners: {count} runners would each load the whole "
            f"{cls.name} dataset. Load with one runner, or disable workload.phases.load and load beforehand",
        )
    # deferred: the spec package imports this module and the experiments import spec's modules
    from benchwright.experiments.checks import check_experiments

    check_experiments(spec, q)
    warnings: list[str] = []
    try:
        props = workload_properties(spec)
    except SpecError as exc:
        raise _requalify(exc, prefix) if ":" not in (exc.field or "") else exc from None
    _check_known(spec, prefix)
    _check_driver(spec, props, q)
    _check_native_tool(spec, props, q)
    validate = getattr(cls, "validate_properties", None)
    if validate is not None:
        try:
            warnings = list(validate(props) or [])
        except SpecError as exc:
            raise _requalify(exc, prefix) from None
    else:
        try:
            cls(props)
        except SpecError as exc:
            raise _requalify(exc, prefix) from None
    return warnings


def native_tools() -> dict[str, tuple[str, ...]]:
    """``native.tool`` values and the workloads each measures (the workloads' descriptors)."""
    # deferred: importing the registry loads every built-in workload
    from benchwright.runner.workloads.registry import descriptors

    tools: dict[str, tuple[str, ...]] = {}
    for name, found in descriptors().items():
        for tool in found.native_tools:
            tools[tool] = (*tools.get(tool, ()), name)
    return tools


def _check_native_tool(spec: BenchmarkSpec, props: dict[str, str], q: Any) -> None:
    """``native.tool``: the phases are measured by that tool from the same settings; it must be one that
    runs this workload, and be installed where the runner runs (the runner image has all of them)."""
    tool = props.get("native.tool")
    if tool is None:
        return
    field = q("workload.properties.native.tool")
    tools = native_tools()
    if tool not in tools:
        raise SpecError(field, f"unknown tool {tool!r} (one of {', '.join(sorted(tools))})")
    if spec.workload.name not in tools[tool]:
        raise SpecError(field, f"{tool} runs workload {tools[tool][0]!r}, not {spec.workload.name!r}")
    if spec.is_local:
        import shutil

        if shutil.which(tool) is None:
            raise SpecError(field, f"{tool} is not on PATH on this machine (install it, or drop native.tool)")
