"""Turn one matrix cell's spec into the runner's plan: the phases with their threads, rate and limits.

The plan is what travels to the runner (a file locally, an S3 object on AWS). It carries the connection
properties WITHOUT the password: the launcher passes that out of band (``Credentials``).
"""

from __future__ import annotations

from collections.abc import Mapping

from benchwright.providers.base import PhasePlan, RunnerPlan
from benchwright.spec import BenchmarkSpec, enabled_phases, workload_properties

PHASES = ("load", "warmup", "run")
UNBOUNDED = 1 << 50


def _split(total: float | int | None, count: int, index: int) -> float | int | None:
    """This runner's share of a total (operation count or rate) across ``count`` runners."""
    if total is None or count == 1:
        return total
    if isinstance(total, int):
        return total // count + (1 if index < total % count else 0)
    return total / count


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
    runner_index: int = 0,
    seed: int | None = None,
    repeat: int = 0,
) -> RunnerPlan:
    count = spec.runner.count
    phases: list[PhasePlan] = []
    enabled = enabled_phases(spec)
    measured = "run" if "run" in enabled else enabled[-1]
    for name in enabled:
        p = getattr(spec.workload.phases, name)
        props = workload_properties(spec, name)
        threads = p.threads or int(props.get("threadcount", "1") or 1)
        props["threadcount"] = str(threads)
        rate = p.target_rate or _opt_float(props.get("target"))
        share = _split(rate, count, runner_index)
        operations = p.operation_count
        if operations is None and p.duration_s and name != "load":
            operations = UNBOUNDED  # a duration without a count: the phase is bounded by time alone
        phases.append(
            PhasePlan(
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
    )
