"""The workflow's stages: one plain function per stage, each ``(RunState, Providers) -> RunState``.

The same functions run inside the Step Functions Lambdas (functions/) and in the local orchestrator
(benchwright.local), in the order of ``STAGE_ORDER``. The ASL's Task states carry the PascalCase form of
these names (``provision_target`` -> ``ProvisionTarget``; see ``asl_state_name``) and a test holds
statemachines/benchmark.asl.json to that order. Stages with a ``check_`` prefix never block: they
poll once and set a status, and the caller (ASL Wait/Choice, or ``local.wait_until``) loops.

``RunState`` is deliberately small and serializable: ids, pointers, statuses, timestamps, the error.
Never secrets, never whole result documents (Step Functions has a 256 KiB state limit).

Its ``spec`` is the cell's validated ``BenchmarkSpec``, typed from parse to provider: a stage reads
fields, never a dict. Between processes (the Lambdas, the ASL) it travels as ``spec_dict`` (what was
written, defaults left out), which validates back to the same spec; in one process (the local
orchestrator) the model is passed on and never validated again.

``FinishState`` is what finishing a run needs and nothing more: the suite's SummarizeSuite and an
aborted execution finish a run that has no cell state (and, for an execution stopped before its spec
was read, no spec). A ``RunState`` is a ``FinishState`` with the cell's progress and a spec it always
has, so the one ``finish_run`` stage takes either.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, field_serializer

from benchwright.providers.base import MetricsWindow, Providers, RunnerHandle
from benchwright.spec import BenchmarkSpec, spec_dict

RunStatus = Literal["pending", "running", "succeeded", "invalid", "failed", "aborted"]


def utcnow() -> datetime:
    return datetime.now(UTC)


class FinishState(BaseModel):
    """A run as the finish stage sees it (stages.finish): who, which spec, how it ended."""

    model_config = ConfigDict(extra="forbid")

    run_id: str
    spec_name: str
    spec: BenchmarkSpec | None = None  # None: an aborted execution whose input held no readable spec
    status: RunStatus = "pending"
    stage: str | None = None  # the last stage that completed
    created_at: datetime = Field(default_factory=utcnow)
    updated_at: datetime = Field(default_factory=utcnow)
    error: str | None = None
    error_type: str | None = None
    # a suite cell's run is finished by its suite (SummarizeSuite) instead
    suite_run_id: str | None = None
    notification: str | None = None  # "sent", "skipped (notify.on: ...)" or "failed: ..."
    warnings: list[str] = Field(default_factory=list)  # reported, never fatal (Slack down, no report)

    @field_serializer("spec")
    def _spec_data(self, spec: BenchmarkSpec | None) -> dict[str, Any] | None:
        """What was written (``spec_dict``): it validates back to the same spec in the next Lambda."""
        return spec_dict(spec) if spec is not None else None

    def advance(self, stage: str, **changes: Any) -> Self:
        """A copy with ``changes`` applied and ``stage`` recorded as done."""
        return self.model_copy(update={**changes, "stage": stage, "updated_at": utcnow()})


class RunState(FinishState):
    """One benchmark cell's progress through the stages."""

    spec: BenchmarkSpec  # the cell's concrete spec (small; secrets are never in a spec)
    cell_id: str = "default"
    repeat: int = 0
    parameters: dict[str, Any] = Field(default_factory=dict)  # the matrix values of this cell
    shared: dict[str, Any] | None = None  # runs.SharedData: the target and loaded data it shares
    target_cells: int = 1  # the cells the target this state provisions serves (a suite's target group)
    # the burst-credit forecast of this cell's measured phase (forecast/credits.py), made from the spec
    # before anything was created; the judge stores it in the measured document and checks it
    credits_forecast: dict[str, Any] | None = None
    # target
    target: dict[str, str] = Field(default_factory=dict)  # the Target's handle (ids, pid, port)
    target_status: str | None = None
    ready_deadline: datetime | None = None
    # runner(s)
    runners: list[RunnerHandle] = Field(default_factory=list)
    runner_status: str | None = None
    runner_deadline: datetime | None = None
    result_pointers: list[str] = Field(default_factory=list)
    event_log: list[dict[str, Any]] = Field(default_factory=list)  # events issued (stages/schedule.py)
    measured_started_at: datetime | None = None  # the measured phase's start, as the runner wrote it
    steady_poll_seconds: float | None = None  # poll_seconds outside an event's approach (schedule.py)
    operation_log: list[dict[str, Any]] = Field(default_factory=list)  # operation benchmarks timed
    # the spec's operations after the runner: "pending" (check_runner), "running", "done"; None: none
    operations_status: str | None = None
    operation_progress: dict[str, Any] | None = None  # the operation under way (stages/operations.py)
    window: MetricsWindow | None = None
    metrics_pointer: str | None = None
    # outcome
    valid: bool | None = None
    cost_total: float | None = None
    poll_seconds: float = 10.0  # the ASL Wait states read this (injectable for tests)
    torn_down: bool = False


Stage = Callable[[RunState, Providers], RunState]

# The order of the workflow. The ASL inserts Wait/Choice states around the three check_ stages.
STAGE_ORDER: list[str] = [
    "validate_spec",
    "provision_target",
    "check_target",
    "launch_runner",
    "check_runner",
    "check_operations",
    "collect_metrics",
    "judge_results",
    "store_results",
    "price_run",
    "teardown",
    "finish_run",
]
# What one cell runs before its teardown (the local orchestrator's loop; teardown runs on every path).
CELL_STAGES: list[str] = STAGE_ORDER[: STAGE_ORDER.index("teardown")]


def asl_state_name(stage: str) -> str:
    """``provision_target`` -> ``ProvisionTarget`` (the Task state's name in the ASL)."""
    return "".join(part.capitalize() for part in stage.split("_"))


ASL_STATE_NAMES: list[str] = [asl_state_name(s) for s in STAGE_ORDER]


def stage_function(name: str) -> Stage:
    """The function for a stage name (imported lazily so a Lambda loads only what it needs)."""
    from benchwright.stages import finish, operations, steps

    if name not in STAGE_ORDER:
        raise KeyError(f"unknown stage {name!r} (one of {', '.join(STAGE_ORDER)})")
    module = {"finish_run": finish, "check_operations": operations}.get(name, steps)
    fn: Stage = getattr(module, name)
    return fn


__all__ = [
    "ASL_STATE_NAMES",
    "CELL_STAGES",
    "STAGE_ORDER",
    "FinishState",
    "Providers",
    "RunState",
    "Stage",
    "asl_state_name",
    "stage_function",
]
