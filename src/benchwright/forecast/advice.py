"""What `validate` says about a forecast: the drain, when, and a size or type that would not drain.

``warnings`` gives one line per finding; ``check_credits`` refuses the spec under
``validity.credits: refuse`` when a bucket is predicted to drain (a capped rate or an Unlimited
T class's surplus cost is said, never refused: neither makes a result lie about its regime).
"""

from __future__ import annotations

from dataclasses import dataclass

from benchwright.errors import SpecError
from benchwright.forecast import facts
from benchwright.forecast.credits import BucketRun, GroupForecast, Segment, Storage, forecast_spec, gp2_run
from benchwright.spec.model import BenchmarkSpec

MAX_PROPOSED_GIB = facts.GP2_NO_BUCKET_FROM_GIB


@dataclass(frozen=True)
class Finding:
    field: str  # the spec field that decides it
    message: str
    drains: bool  # a bucket runs dry during the run: what `validity.credits: refuse` refuses


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h".replace(".0 h", " h")


def gp2_size_without_drain(storage: Storage, segments: list[Segment]) -> int:
    """The smallest gp2 size (GiB) whose bucket lasts the whole timeline (1,000 GiB never drains)."""
    low, high = storage.size_gib, MAX_PROPOSED_GIB
    while low < high:  # a bigger volume refills faster: drains is monotone in the size
        mid = (low + high) // 2
        run = gp2_run(
            Storage("gp2", mid, None, storage.engine, storage.field, storage.burst_start_pct), segments
        )
        if run is not None and run.drain is not None:
            low = mid + 1
        else:
            high = mid
    return low


def _no_bucket_type(storage: Storage, rate: float) -> str:
    if storage.engine == "ebs":
        if rate <= facts.GP3_EBS_IOPS:
            return f"gp3 (a flat {facts.GP3_EBS_IOPS:,.0f} IOPS, no bucket)"
        return f"gp3 with iops >= {rate:,.0f} (no bucket)"
    if rate <= facts.GP3_RDS_SMALL_IOPS:
        return f"gp3 (a flat {facts.GP3_RDS_SMALL_IOPS:,.0f} IOPS baseline below 400 GiB, no bucket)"
    return (
        f"gp3 of {facts.GP3_RDS_THRESHOLD_GIB} GiB or more ({facts.GP3_RDS_LARGE_IOPS:,.0f} IOPS, no bucket)"
    )


def _gp2_finding(forecast: GroupForecast, run: BucketRun) -> Finding | None:
    storage = forecast.storage
    if storage is None or run.drain is None:
        return None
    baseline = facts.gp2_baseline(storage.size_gib)
    rate = f"~{run.rate:,.0f} IOPS" + (
        " (assumed: the burst ceiling; set expected_iops)" if run.assumed else ""
    )
    where = f"{run.drain.item}, {run.drain.phase} phase"
    size = gp2_size_without_drain(storage, forecast.segments)
    message = (
        f"{storage.label}: baseline {baseline:,.0f} IOPS; at {rate} the 5.4 M credit bucket drains after "
        f"~{_duration(run.drain.after_s)} ({where}), inside the {_duration(run.total_s)} run; the measured "
        f"phases after it see the baseline, not the burst. Would not drain: gp2 of >= {size:,} GiB, "
        f"or {_no_bucket_type(storage, run.rate)}"
    )
    return Finding(storage.field, message, drains=True)


def _capped(forecast: GroupForecast) -> Finding | None:
    storage = forecast.storage
    if storage is None or not forecast.capped:
        return None
    worst = max(forecast.capped, key=lambda s: s.iops or 0.0)
    if storage.kind == "gp2" and facts.gp2_baseline(storage.size_gib) < facts.GP2_BURST_IOPS:
        top, what = facts.GP2_BURST_IOPS, "the gp2 burst ceiling"
    else:
        from benchwright.forecast.credits import ceiling

        top, what = ceiling(storage) or 0.0, "its baseline (no bucket)"
    message = (
        f"{storage.label} on {storage.engine}: {worst.item}'s {worst.phase} phase expects ~{worst.iops:,.0f} "
        f"IOPS, above {what} of {top:,.0f} IOPS: the workload is capped there; to measure it uncapped "
        f"use {_no_bucket_type(storage, worst.iops or 0.0)} or io1/io2 with iops >= {worst.iops:,.0f}"
    )
    return Finding(storage.field, message, drains=False)


def _cpu_finding(forecast: GroupForecast) -> Finding | None:
    run, name = forecast.cpu, forecast.instance_class
    found = facts.t_class(name) if name else None
    if run is None or found is None or run.drain is None:
        return None
    family, t = found
    head = f"{name}: {t.vcpus} vCPU(s), CPU baseline {t.baseline:.0%}, {t.credits_per_hour:g} credits/h"
    if family in facts.UNLIMITED_FAMILIES:
        usd = run.surplus_credits / 60.0 * facts.RDS_SURPLUS_USD_PER_VCPU_HOUR
        if usd < 0.01:  # a few minutes of phases: nothing worth saying
            return None
        message = (
            f"{head}, Unlimited mode: with every vCPU busy (the worst case) each target spends "
            f"~{run.surplus_credits:,.0f} surplus credits over {_duration(run.total_s)}, ~{usd:,.2f} USD "
            f"at {facts.RDS_SURPLUS_USD_PER_VCPU_HOUR} USD per vCPU-hour: a cost, not throttling"
        )
        return Finding("target.instance_class", message, drains=False)
    message = (
        f"{head}, Standard mode: with every vCPU busy the bucket drains after ~{_duration(run.drain.after_s)} "
        f"({run.drain.item}, {run.drain.phase} phase) and the instance is throttled to its baseline; "
        "use a db.t3 / db.t4g class (Unlimited) or a fixed-performance class (db.m*, db.r*)"
    )
    return Finding("target.instance_class", message, drains=True)


def findings(spec: BenchmarkSpec) -> list[Finding]:
    out: list[Finding] = []
    for forecast in forecast_spec(spec):
        candidates = [
            _gp2_finding(forecast, forecast.gp2) if forecast.gp2 is not None else None,
            _capped(forecast),
            _cpu_finding(forecast),
        ]
        out += [f for f in candidates if f is not None and f not in out]
    return out


def check_credits(spec: BenchmarkSpec, prefix: str = "") -> list[Finding]:
    """The spec's findings; under ``validity.credits: refuse`` a predicted drain is a SpecError naming
    the field that decides it (nothing has been created yet)."""
    found = findings(spec)
    drains = [f for f in found if f.drains]
    if drains and spec.validity.credits == "refuse":
        first = drains[0]
        raise SpecError(
            prefix + first.field,
            f"{first.message}. Refused by validity.credits: refuse (set it to warn to run anyway)",
        )
    return found
