"""A quick rehearsal that stands for the full spec's burst credits (issue 27: "its rehearsal observes
the drain it predicted").

A ``--quick`` rehearsal loads a few records for a few seconds, so a gp2 volume's 5.4 M credit bucket
stays full, while the full spec's long load drains it before the measured phases (experiment 3's
lost day). To rehearse that drain, the full spec's own forecast (forecast/credits.py) says where the
bucket stands when each gp2 target's first measured phase starts; the quick spec carries it as
``target.storage.burst_start_pct`` (so the quick cells' forecast, made by ExpandMatrix as on AWS,
starts there too) and the stand-in's balance model starts at the same share (rehearse/metrics.py).
The judge then holds the observed BurstBalance against the forecast as after a real run.
"""

from __future__ import annotations

from typing import Any

from benchwright.forecast.credits import forecast_spec
from benchwright.providers.aws.targets.kinds import kind_of_provider
from benchwright.spec.model import BenchmarkSpec, SuiteSpec, spec_dict

StorageKey = tuple[str, int]  # (storage type, size in GiB)


def measured_starts(full: SuiteSpec) -> dict[StorageKey, float]:
    """Per gp2 volume of the full spec, the bucket's share (percent) when its first measured phase
    starts; the lowest when several target groups have the same volume."""
    out: dict[StorageKey, float] = {}
    for spec in full.benchmarks:
        for group in forecast_spec(spec):
            if group.storage is None or group.gp2 is None or not group.gp2.windows:
                continue
            start = next(iter(group.gp2.windows.values()))[0]  # the first run phase on the timeline
            key = (group.storage.kind, group.storage.size_gib)
            out[key] = min(out.get(key, 100.0), round(start, 1))
    return out


def _stamp(storage: Any, starts: dict[StorageKey, float]) -> None:
    if isinstance(storage, dict) and storage.get("type") == "gp2":
        start = starts.get(("gp2", int(storage.get("size_gb", 0))))
        if start is not None:
            storage["burst_start_pct"] = start


def carry(quick: SuiteSpec, starts: dict[StorageKey, float]) -> SuiteSpec:
    """The quick suite with each gp2 storage whose bucket the kind's stand-in models (its
    ``burst_start_field``, the target's and a matrix's values: RDS's ``target.storage``) starting
    where the full spec's forecast says."""
    benchmarks: list[BenchmarkSpec] = []
    for spec in quick.benchmarks:
        data = spec_dict(spec)
        kind = kind_of_provider(spec.target.provider)
        field = kind.burst_start_field if kind is not None else None
        if field is not None:
            _stamp(data["target"].get(field), starts)
            for value in data.get("matrix", {}).get(f"target.{field}", []):
                _stamp(value, starts)
        benchmarks.append(BenchmarkSpec.model_validate(data))
    return SuiteSpec(suite=quick.suite, description=quick.description, benchmarks=benchmarks)


def standin_starts(starts: dict[StorageKey, float]) -> dict[str, float]:
    """The stand-ins' burst starts (fraction of the bucket), keyed as the RDS stand-in looks them up."""
    return {standin_key(kind, size): pct / 100.0 for (kind, size), pct in starts.items()}


def standin_key(storage_type: str, size_gb: float) -> str:
    return f"{storage_type}:{int(size_gb)}"
