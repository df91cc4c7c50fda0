"""Will a burst bucket drain during the run? Answered from the spec alone, before anything exists.

A target group (benchwright.sharing) is one provisioned target that runs its cells one after
another: the load of each dataset, then every cell's warmup and run. The buckets carry over from
cell to cell, so the forecast walks that timeline phase by phase at each phase's expected I/O rate
(``expected_iops``; without it, the gp2 burst ceiling: the worst case, and said to be assumed):

- gp2: 5.4 M I/O credits, refilled at the baseline, spent by I/O above it (forecast/facts.py); the
  bucket starts full, as a new volume's does, or at ``target.storage.burst_start_pct``;
- gp3 / io1 / io2: no bucket, but a ceiling: an expected rate above it is capped;
- T classes: CPU credits, assuming every vCPU busy (no hint exists for CPU: an upper bound).
  RDS runs db.t3 / db.t4g Unlimited, so a drained bucket is surplus cost, not throttling.

Each cell gets a small forecast of its measured (run) phase: the predicted regime of each balance
in the judge's own terms (judge/credits.py), stored with the run so the judge can hold the observed
balances against it (forecast/check.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from benchwright.forecast import facts
from benchwright.judge.credits import DRAINING_DROP, CreditRegime
from benchwright.sharing import TargetGroup
from benchwright.spec.model import BenchmarkSpec
from benchwright.spec.target_facts import BurstStorage


@dataclass(frozen=True)
class Segment:
    """One phase on the target's timeline."""

    item: str  # "<cell id> #<repeat>"
    phase: str
    seconds: float
    iops: float | None  # the phase's expected_iops; None: not given


Storage = BurstStorage  # the target's own (spec/target_facts.py): RDS's storage, an EC2 volume


@dataclass
class Drain:
    """Where on the timeline a bucket ran dry: seconds from the first phase, in which phase."""

    after_s: float
    item: str
    phase: str


@dataclass
class BucketRun:
    """A bucket's walk over the timeline: its share left at each measured phase's start and end."""

    metric: str  # BurstBalance | CPUCreditBalance
    assumed: bool  # a rate came from the worst case, not from a hint
    rate: float  # the highest rate it was spent at (IOPS, or busy vCPUs' share)
    drain: Drain | None = None
    windows: dict[str, tuple[float, float]] = field(default_factory=dict)  # item -> (start %, end %)
    total_s: float = 0.0
    surplus_credits: float = 0.0  # CPU credits spent beyond the balance (Unlimited: billed)


def storage_of(spec: BenchmarkSpec) -> Storage | None:
    """The storage the target says has burst credits to forecast (spec/target_facts.py), or None."""
    return spec.target.burst_storage()


def timeline(group: TargetGroup) -> list[Segment]:
    """The group's phases in the order they run: each dataset's load once, every item's warmup and run."""
    from benchwright.spec import enabled_phases, phase_seconds

    out: list[Segment] = []
    for dataset in group.datasets:
        for i, item in enumerate(dataset.items):
            spec = item.cell.spec
            phases = enabled_phases(spec)
            for name in ("load", "warmup", "run"):
                if name not in phases or (name == "load" and (not dataset.loads or i > 0)):
                    continue
                phase = getattr(spec.workload.phases, name)
                out.append(Segment(item.label, name, phase_seconds(spec, name), phase.expected_iops))
    return out


def ceiling(storage: Storage) -> float | None:
    """The IOPS a volume delivers without a bucket (its baseline or provisioned IOPS); None: unknown."""
    if storage.kind == "gp2":
        return facts.gp2_baseline(storage.size_gib)
    if storage.kind == "gp3":
        if storage.iops is not None:
            return float(storage.iops)
        if storage.engine == "ebs":
            return facts.GP3_EBS_IOPS
        return facts.gp3_rds_baseline(storage.engine, storage.size_gib)
    if storage.kind in ("io1", "io2") and storage.iops is not None:
        return float(storage.iops)
    return None  # magnetic / standard / st1 / sc1: no documented figure to hold a rate against


def _walk(
    segments: list[Segment], bucket: float, start: float, net: Any, metric: str, assumed: bool, rate: float
) -> BucketRun:
    """Spend a bucket along the timeline; ``net(segment)`` is its change per second (negative: spent)."""
    run = BucketRun(metric, assumed, rate)
    balance, t = start, 0.0
    for seg in segments:
        before = balance
        change = net(seg)
        after = balance + change * seg.seconds
        if after <= 0.0 and change < 0.0:
            if run.drain is None:
                run.drain = Drain(t + balance / -change, seg.item, seg.phase)
            run.surplus_credits += -after
        balance = min(bucket, max(0.0, after))
        if seg.phase == "run":
            run.windows[seg.item] = (100.0 * before / bucket, 100.0 * balance / bucket)
        t += seg.seconds
    run.total_s = t
    return run


def gp2_run(storage: Storage, segments: list[Segment]) -> BucketRun | None:
    """The gp2 bucket over the timeline; None for a volume whose baseline reaches the burst rate."""
    baseline = facts.gp2_baseline(storage.size_gib)
    if storage.kind != "gp2" or baseline >= facts.GP2_BURST_IOPS:
        return None

    def net(seg: Segment) -> float:
        used = min(facts.GP2_BURST_IOPS, seg.iops if seg.iops is not None else facts.GP2_BURST_IOPS)
        return baseline - used

    assumed = any(s.iops is None for s in segments)
    rate = max(min(facts.GP2_BURST_IOPS, s.iops or facts.GP2_BURST_IOPS) for s in segments)
    start = facts.GP2_BUCKET * storage.burst_start_pct / 100.0  # target.storage.burst_start_pct
    return _walk(segments, facts.GP2_BUCKET, start, net, "BurstBalance", assumed, rate)


def cpu_run(instance_class: str, segments: list[Segment]) -> BucketRun | None:
    """A T class's CPU credits with every vCPU busy in every phase (the worst case), starting with
    none in Unlimited mode (no launch credits) and with T2's 30 launch credits per vCPU otherwise."""
    found = facts.t_class(instance_class)
    if found is None or not segments:
        return None
    family, t = found
    start = 0.0 if family in facts.UNLIMITED_FAMILIES else 30.0 * t.vcpus
    per_s = (t.credits_per_hour - 60.0 * t.vcpus) / 3600.0  # earned minus one credit per vCPU-minute
    run = _walk(segments, t.max_balance, start, lambda _: per_s, "CPUCreditBalance", True, 1.0)
    if start == 0.0:  # an empty bucket: "drained" from the first second, as the judge would see it
        run.windows = {k: (0.0, 0.0) for k in run.windows}
    return run


def regime(start_pct: float, end_pct: float, floor_pct: float = 5.0) -> CreditRegime:
    """The judge's terms (judge/credits.credit_regime) for a predicted window."""
    if min(start_pct, end_pct) < floor_pct:
        return "exhausted"
    if end_pct < start_pct * (1.0 - DRAINING_DROP):
        return "draining"
    return "full"


@dataclass
class GroupForecast:
    """Everything predicted for one target group."""

    storage: Storage | None
    instance_class: str | None
    segments: list[Segment]
    gp2: BucketRun | None
    cpu: BucketRun | None
    capped: list[Segment]  # phases whose expected rate is above what the volume delivers

    def cell(self, label: str) -> dict[str, Any]:
        """The small record stored with the cell: per balance, the predicted regime of its run phase."""
        out: dict[str, Any] = {}
        for run in (self.gp2, self.cpu):
            if run is None or label not in run.windows:
                continue
            start, end = run.windows[label]
            out[run.metric] = {
                "regime": regime(start, end),
                "start_pct": round(start, 1),
                "end_pct": round(end, 1),
                "assumed": run.assumed,
            }
        return out


def forecast_group(group: TargetGroup) -> GroupForecast:
    spec = group.items[0].cell.spec
    segments = timeline(group)
    storage = storage_of(spec)
    instance_class = spec.target.cpu_credit_class()
    top = ceiling(storage) if storage is not None else None
    if storage is not None and storage.kind == "gp2" and top is not None:
        top = max(top, facts.GP2_BURST_IOPS)  # while the bucket lasts
    capped = [s for s in segments if top is not None and s.iops is not None and s.iops > top]
    return GroupForecast(
        storage=storage,
        instance_class=instance_class,
        segments=segments,
        gp2=gp2_run(storage, segments) if storage is not None else None,
        cpu=cpu_run(instance_class, segments) if instance_class else None,
        capped=capped,
    )


def forecast_spec(spec: BenchmarkSpec) -> list[GroupForecast]:
    """One forecast per target group of the whole spec (every matrix cell and repeat)."""
    from benchwright.sharing import plan
    from benchwright.spec import expand_matrix

    groups = plan([(c, r) for c in expand_matrix(spec) for r in range(spec.repeats)])
    return [forecast_group(g) for g in groups if g.items]


def item_forecasts(group: TargetGroup) -> dict[str, dict[str, Any]]:
    """Each item's stored forecast, by its label (``<cell id> #<repeat>``), for a target with storage
    or an instance class to forecast (an empty one says: no bucket predicted to move)."""
    if not group.items:
        return {}
    forecast = forecast_group(group)
    if forecast.storage is None and forecast.instance_class is None:
        return {}
    return {item.label: forecast.cell(item.label) for item in group.items}


def single_cell_forecast(spec: BenchmarkSpec) -> dict[str, Any] | None:
    """The stored forecast of a run of one cell and one repeat (the benchmark state machine's, which
    no ExpandMatrix plans); None when the spec plans more than one item or has nothing to forecast."""
    from benchwright.sharing import plan
    from benchwright.spec import expand_matrix

    groups = [g for g in plan([(c, r) for c in expand_matrix(spec) for r in range(spec.repeats)]) if g.items]
    if len(groups) != 1 or len(groups[0].items) != 1:
        return None
    return next(iter(item_forecasts(groups[0]).values()), None)
