"""The runner plan: everything one runner needs to run a cell's phases, as it travels to the runner
(a file locally, an S3 object on AWS). It lives in the runner layer because the runner reads it; the
stages build it and the launchers carry it. No password: see ``providers.base.Credentials``."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class PhasePlan(_Model):
    """One phase for the runner: the fields of ``engine.PhaseConfig``."""

    workload: str
    phase: Literal["load", "warmup", "run"]
    engine: str
    properties: dict[str, str] = Field(default_factory=dict)
    threads: int = 1
    processes: int | None = None
    target: float | None = None
    operation_count: int | None = None
    max_seconds: float | None = None
    interval_s: float = 1.0
    seed: int | None = None
    measured: bool = False  # the phase whose window the host / cloud metrics are aligned with


class RunnerPlan(_Model):
    """Everything one runner needs to run a cell's phases. No password: see ``Credentials``."""

    run_id: str
    cell_id: str
    repeat: int = 0
    runner_index: int = 0
    runner_count: int = 1
    connection: dict[str, str] = Field(default_factory=dict)  # redacted connection properties
    phases: list[PhasePlan]
    # Fan-out (runner_count > 1): wall-clock epoch seconds at which every runner releases the workers
    # of its measured phase, so N hosts load the target together (see stages.plan.fanout_start_at).
    start_at: float | None = Field(default=None, gt=0)
