"""Turn one matrix cell's spec into the runner's plan: the phases with their threads, rate and limits.

The plan is what travels to the runner (a file locally, an S3 object on AWS). It carries the connection
properties WITHOUT the password: the launcher passes that out of band (``Credentials``).

Fan-out (``runner.count > 1``): every runner of a cell gets the same ``start_at``, the wall-clock instant
at which its measured phase releases its workers (``PhaseConfig.start_at``), so the N runners
drive the target together instead of one after another as their tasks happen to start.
"""

from __future__ import annotations

import time
from collections.abc import Mapping

from benchwright.experiments.models import EVENT_GIVE_UP_S
from benchwright.runner.plan import DATASET_CHECK, DATASET_TARGET, PhaseConfig, PlanContext, RunnerPlan
from benchwright.spec import BenchmarkSpec, enabled_phases, phase_seconds, workload_properties

PHASES = ("load", "warmup", "run")
UNBOUNDED = 1 << 50

# Seconds from building the plans to the moment every runner is certain to be up, per platform:
# Fargate RunTask to RUNNING (ENI attach, image pull of a ~300 MB image, interpreter start) is
# typically 30-90 s and can reach a few minutes under capacity pressure; an EC2 runner boots an
# instance and installs the package from user-data (2-4 min). A runner that still comes up late
# starts at once and flags its result ``late_start`` (runner/main.py), so a margin too small
# costs synchronisation, never the run.
START_MARGIN_S = {"local": 5.0, "fargate": 180.0, "ec2": 300.0}
# The phases before the measured one (load, warm-up) are estimated (spec.phase_seconds); the
# estimate is stretched by this factor so a slower-than-assumed load does not make runners late.
PRIOR_PHASE_SLACK = 1.5


def fanout_start_at(spec: BenchmarkSpec, now: float | None = None) -> float | None:
    """The shared release instant of the measured phase for ``runner.count > 1``; None for one runner.

    now + the platform's start-up margin + the (stretched) estimate of the phases that precede the
    measured one in every runner."""
    if spec.runner.count <= 1:
        return None
    enabled = enabled_phases(spec)
    measured = _measured(enabled)
    before = sum(phase_seconds(spec, name) for name in enabled[: enabled.index(measured)])
    margin = START_MARGIN_S.get(spec.runner.platform, max(START_MARGIN_S.values()))
    return (time.time() if now is None else now) + margin + before * PRIOR_PHASE_SLACK


def _measured(enabled: list[str]) -> str:
    return "run" if "run" in enabled else enabled[-1]


def _split(total: float | int | None, count: int, index: int) -> float | int | None:
    """This runner's share of a total (operation count or rate) across ``count`` runners."""
    if total is None or count == 1:
        return total
    if isinstance(total, int):
        return total // count + (1 if index < total % count else 0)
    return total / count


def _load_share(spec: BenchmarkSpec, props: dict[str, str], count: int, index: int) -> dict[str, str]:
    """This runner's part of a load split between runners (the workload's descriptor's
    ``load_share``: YCSB's insertstart / insertcount slices); validation refuses several runners
    for a load that cannot be split."""
    from benchwright.runner.workloads.registry import descriptors

    found = descriptors().get(spec.workload.name)
    if found is None or found.load_share is None:
        return {}
    return found.load_share(props, count, index)


def _dataset_properties(spec: BenchmarkSpec) -> dict[str, str]:
    """How the runner treats data on the target (runner/dataset.py): on an ``endpoint`` target it
    resets only what Benchwright created; with several runners (one load split between them) it
    neither resets nor checks, as no runner alone holds the dataset."""
    out = {} if spec.target.facts.owned else {DATASET_TARGET: "endpoint"}
    if spec.runner.count > 1:
        out[DATASET_CHECK] = "off"
    return out


def _opt_float(value: str | None) -> float | None:
    if value in (None, ""):
        return None
    f = float(value)  # already validated by the workload's property checks
    return f if f > 0 else None


def build_plan(
    spec: BenchmarkSpec,
    run_id: str,
    cell_id: str,
    connection: Mapping[str, str],
    *,
    runner_index: int = 0,
    seed: int | None = None,
    repeat: int = 0,
    start_at: float | None = None,
    context: PlanContext | None = None,
) -> RunnerPlan:
    """One runner's plan. For fan-out, pass every runner the same ``start_at`` (``fanout_start_at``)."""
    count = spec.runner.count
    phases: list[PhaseConfig] = []
    enabled = enabled_phases(spec)
    measured = _measured(enabled)
    for name in enabled:
        p = getattr(spec.workload.phases, name)
        props = workload_properties(spec, name)
        threads = p.threads or int(props.get("threadcount", "1") or 1)
        props["threadcount"] = str(threads)
        if name == "load":
            props.update(_load_share(spec, props, count, runner_index))
        props.update(_dataset_properties(spec))
        if spec.events and name == measured:
            props.setdefault("client.give_up_s", f"{EVENT_GIVE_UP_S:g}")  # ride out the events' outages
        rate = p.target_rate or _opt_float(props.get("target"))
        share = _split(rate, count, runner_index)
        operations = p.operation_count
        if operations is None and p.duration_s and name != "load":
            operations = UNBOUNDED  # a duration without a count: the phase is bounded by time alone
        phases.append(
            PhaseConfig(
                workload=spec.workload.name,
                phase=name,  # type: ignore[arg-type]
                engine=spec.target.engine,
                properties={**props, **dict(connection)},
                threads=threads,
                processes=spec.runner.processes,
                target=float(share) if share is not None else None,
                operation_count=_split(operations, count, runner_index),  # type: ignore[arg-type]
                max_seconds=p.duration_s,
                seed=seed,
                measured=name == measured,
                start_at=start_at if name == measured else None,
            )
        )
    return RunnerPlan(
        run_id=run_id,
        cell_id=cell_id,
        repeat=repeat,
        runner_index=runner_index,
        runner_count=count,
        connection=dict(connection),
        phases=phases,
        context=context or PlanContext(),
    )
