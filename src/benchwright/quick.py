"""The ``--quick`` size of a spec: few records, short phases, few threads (CI and smoke tests).

Used by ``run``, ``validate`` and ``rehearse``; the caps keep a matrix's shape (an axis that capping
would merge into one value is scaled instead), so a quick run still shows every cell.
"""

from __future__ import annotations

import contextlib
from typing import Any

from pydantic import ByteSize, TypeAdapter

from benchwright.spec import BenchmarkSpec, enabled_phases, is_zip, spec_dict

# Property names (after any "workload." prefix such as tpcc. or redisbench.) and their quick-run caps
# every workload shares; each workload adds its own (its descriptor's ``quick_caps``: ``quick_caps()``).
QUICK_PROPERTIES = {
    "operationcount": 1000,
    "rows": 200,
    "keys": 1000,
    "threadcount": 2,
    "clients": 2,
    "threads": 2,
}


def quick_caps() -> dict[str, int]:
    """The shared caps and every registered workload's; two workloads capping one name differently
    is a programming error (the cap is found by the property's last name, whatever the workload)."""
    from benchwright.runner.workloads.registry import descriptors

    caps = dict(QUICK_PROPERTIES)
    for found in descriptors().values():
        for name, cap in found.quick_caps.items():
            if caps.setdefault(name, cap) != cap:
                raise ValueError(f"quick cap {name!r}: {found.name} says {cap}, another {caps[name]}")
    return caps


def _capped(props: dict[str, Any], threads: int) -> dict[str, Any]:
    """Quick-run caps applied to a mapping of property names (or paths) to values."""
    caps = quick_caps()
    for key, value in list(props.items()):
        limit = caps.get(key.rsplit(".", 1)[-1])
        if limit is not None:
            with contextlib.suppress(TypeError, ValueError):
                props[key] = min(int(float(value)), threads if limit == 2 else limit)
    return props


def _capped_zip(entries: list[dict[str, Any]], threads: int) -> list[dict[str, Any]]:
    """Zip entries capped like properties; a key whose entries capping would make equal is scaled
    instead, so the axis keeps its shape (keyspaces of 100k and 1M keys become 100 and 1,000)."""
    capped = [_capped(dict(entry), threads) for entry in entries]
    caps = quick_caps()
    for key in {k for entry in entries for k in entry}:
        limit = caps.get(key.rsplit(".", 1)[-1])
        found = [entry.get(key) for entry in entries]
        if limit is None or not all(isinstance(v, (int, float)) and v > 0 for v in found):
            continue
        old = [float(v) for v in found]  # type: ignore[arg-type]
        if len({c.get(key) for c in capped}) < len(set(old)):
            cap = threads if limit == 2 else limit
            for entry, value in zip(capped, old, strict=True):
                entry[key] = max(1, int(value * cap / max(old)))
    return capped


def scale_down(spec: BenchmarkSpec, seconds: float = 2.0, threads: int = 2) -> BenchmarkSpec:
    """A small version of a spec (the ``--quick`` option): few records, short phases, few threads."""
    data = spec_dict(spec)
    size = _size_property(spec.workload.name)
    if data["workload"].pop("data_size", None) is not None and size:  # a data size derives it: cap that
        data["workload"].setdefault("properties", {})[size] = quick_caps()[size]
    props = _capped(data["workload"].setdefault("properties", {}), threads)
    if "maxexecutiontime" in props:
        props["maxexecutiontime"] = min(int(float(props["maxexecutiontime"])), int(seconds))
    phases = data["workload"].setdefault("phases", {})
    if "run" in enabled_phases(spec):
        phases.setdefault("run", {})
    for name, phase in phases.items():
        if phase is not None:
            _shorten_phase(name, phase, seconds, threads)
    data["matrix"] = {
        path: values
        for path, values in (_small_axis(p, v, threads, size) for p, v in data.get("matrix", {}).items())
    }
    data["repeats"] = 1
    data["validity"] = {**data.get("validity", {}), "min_duration_s": 0.0}
    return BenchmarkSpec.model_validate(data)


def _shorten_phase(name: str, phase: dict[str, Any], seconds: float, threads: int) -> None:
    if phase.get("threads"):
        phase["threads"] = min(phase["threads"], threads)
    if phase.get("duration_s"):
        phase["duration_s"] = min(phase["duration_s"], 1.0 if name == "warmup" else seconds)
    if phase.get("operation_count"):
        phase["operation_count"] = min(phase["operation_count"], 1000)
    if name == "run" and not phase.get("duration_s") and not phase.get("operation_count"):
        phase["duration_s"] = seconds


def _size_property(workload: str) -> str | None:
    """The property ``workload.data_size`` derives for this workload (YCSB's recordcount), if any."""
    from benchwright.runner.workloads.registry import descriptors

    found = descriptors().get(workload)
    return found.size_property if found is not None and found.from_data_size is not None else None


def _small_axis(path: str, values: list[Any], threads: int, size: str | None) -> tuple[str, list[Any]]:
    """Two values of a matrix axis, capped; an axis that capping would merge into one is scaled."""
    if path == "workload.data_size" and size:  # sizes stand for records: keep their proportions
        sizes = [float(TypeAdapter(ByteSize).validate_python(v)) for v in values[:2]]
        cap = quick_caps()[size]
        path, values = f"workload.properties.{size}", [s / max(sizes) * cap for s in sizes]
    if is_zip(path):  # linked axes: cap each property inside the entries
        return path, _capped_zip(values[:2], threads)
    small = values[:2]
    limit = threads if path.endswith(".threads") else quick_caps().get(path.rsplit(".", 1)[-1])
    if limit is None or not all(isinstance(v, (int, float)) for v in small):
        return path, small
    cap = threads if limit == 2 else limit
    capped = sorted({min(int(v), cap) for v in small})
    if len(capped) < len(set(small)) and max(small) > cap and min(small) > 0:
        # capping would merge the axis into one cell: scale it instead, keeping its shape
        capped = sorted({max(1, int(v * cap / max(small))) for v in small})
    return path, capped
