"""The state a stage takes and gives back: ``RunState`` (one cell) and ``FinishState`` (what
finishing a run needs). See the stages package's docstring for why they are small and serializable.
Kept apart from the package's stage table so that stage modules import it without importing the
package that imports them."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, field_serializer

from benchwright.providers.base import MetricsWindow, RunnerHandle
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
