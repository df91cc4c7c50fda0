"""The runner plan: everything one runner needs to run a cell's phases, as it travels to the runner
(a file locally, an S3 object on AWS). It lives in the runner layer because the runner reads it; the
stages build it and the launchers carry it. No password: see ``providers.base.Credentials``.

One phase has one model from the plan to the engine: the stages build ``PhaseConfig``s, the plan
carries them as JSON, and ``engine.run_phase`` takes each one as it comes out of the plan (the CLI
commands and benchmarks build them directly). This module imports only pydantic, so the launchers
and the Lambdas load it without the engine.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.dataclasses import dataclass

# Properties the stages add for runner/dataset.py (here, so the stages need not import the runner)
DATASET_TARGET = "benchwright.dataset.target"  # "endpoint": reset only what Benchwright created
DATASET_CHECK = "benchwright.dataset.check"  # "off": no reset and no checks (fan-out: one load, N runners)


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


PhaseName = Literal["load", "warmup", "run"]


@dataclass(config=ConfigDict(extra="forbid"))
class PhaseConfig:
    """One phase: what the stages plan and what the engine runs. A validating dataclass (positional
    arguments work, as for the engine's callers) that pickles to the worker processes; the engine
    reads it when the phase starts, never per operation."""

    workload: str
    phase: PhaseName
    engine: str
    properties: dict[str, str] = Field(default_factory=dict)  # workload and connection properties
    threads: int = 1
    processes: int | None = None  # default: min(threads, 2 x cores)
    target: float | None = None  # total operations per second, None = as fast as possible
    operation_count: int | None = None  # None: the workload decides (or time-bounded)
    max_seconds: float | None = None
    interval_s: float = 1.0
    seed: int | None = None
    # The phase the host and cloud metrics are aligned with (the run phase, or the last one).
    measured: bool = False
    # Fan-out (runner_count > 1), measured phase only: the wall-clock epoch seconds at which every
    # runner releases this phase's workers, so N hosts drive the target together
    # (stages.plan.fanout_start_at). None: release as soon as the workers are connected.
    start_at: float | None = Field(default=None, gt=0)

    @property
    def workload_phase(self) -> Literal["load", "run"]:
        """What the workload does in this phase: a warm-up runs the run phase's operations (its
        document is still labelled ``warmup``, and the measured phase comes after it)."""
        return "load" if self.phase == "load" else "run"


class PlanContext(_Model):
    """What the orchestrator knows of the run that the runner cannot see for itself: the runner's
    class and platform, the spec's digest and the target's placement, class and storage (from the
    target's describe calls). The runner adds its own machine and the server's version and writes
    the result's ``Fingerprint`` (runner/fingerprint.py)."""

    runner_class: str = "local"  # "local" | "measured" | "smoke"
    runner_platform: str = "local"  # "local" | "fargate" | "ec2"
    instance_type: str | None = None  # the EC2 type asked for (instance metadata, when reachable, wins)
    spec_digest: str = ""
    target_az: str | None = None
    target_az_id: str | None = None
    target_class: str | None = None
    storage: str | None = None


class RunnerPlan(_Model):
    """Everything one runner needs to run a cell's phases. No password: see ``Credentials``."""

    run_id: str
    cell_id: str
    repeat: int = 0
    runner_index: int = 0
    runner_count: int = 1
    connection: dict[str, str] = Field(default_factory=dict)  # redacted connection properties
    phases: list[PhaseConfig]
    context: PlanContext = Field(default_factory=PlanContext)  # for the result's fingerprint
