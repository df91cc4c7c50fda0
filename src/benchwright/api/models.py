"""Request and response bodies of the API (pydantic, extra=forbid): the OpenAPI schema comes from here."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

RUN_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_-]{0,79}$"
MAX_BODY_BYTES = 256 * 1024  # a spec travels in Step Functions input, whose limit is 256 KiB


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class SubmitRequest(_Model):
    """Exactly one of ``spec`` (one benchmark) or ``suite`` (several), as the YAML would hold them."""

    spec: dict[str, Any] | None = Field(
        default=None, description="a benchmark spec (see docs: spec reference)"
    )
    suite: dict[str, Any] | None = Field(
        default=None, description="a suite: {suite, benchmarks: [spec, ...]}"
    )
    tags: dict[str, str] = Field(default_factory=dict, max_length=20)

    @model_validator(mode="after")
    def _one(self) -> SubmitRequest:
        if (self.spec is None) == (self.suite is None):
            raise ValueError("give exactly one of 'spec' or 'suite'")
        return self


class StartedRun(_Model):
    run_id: str
    spec_name: str
    kind: Literal["benchmark", "suite"]  # which workflow: a spec with a matrix or repeats runs as a suite
    execution_arn: str


class SubmitResponse(_Model):
    """One run per benchmark: a suite of N benchmarks starts N runs (each expands its own matrix)."""

    runs: list[StartedRun]
    status: str = "RUNNING"


class RunSummary(_Model):
    run_id: str
    kind: Literal["benchmark", "suite"]
    # Step Functions' status, and INVALID: the run finished but a cell is invalid (never SUCCEEDED)
    status: str = Field(description="RUNNING | SUCCEEDED | INVALID | FAILED | TIMED_OUT | ABORTED")
    started_at: datetime | None = None
    stopped_at: datetime | None = None


class RunList(_Model):
    runs: list[RunSummary]


class RunDetail(RunSummary):
    spec_name: str | None = None
    summary: dict[str, Any] | None = Field(default=None, description="per-cell headline metrics")
    validity: list[dict[str, Any]] = Field(default_factory=list)
    cost: dict[str, Any] | None = None
    verdict: dict[str, Any] | None = None
    error: str | None = None
    warnings: list[dict[str, Any]] = Field(
        default_factory=list, description="beside the run, never its status (sink_failed: the sink refused)"
    )


class ReportLink(_Model):
    run_id: str
    url: str
    expires_in: int


class RecordLink(_Model):
    """The run's whole record (runs/<id>/record.json) can outgrow a Lambda response: a link to it."""

    run_id: str
    url: str
    expires_in: int


class CancelResponse(_Model):
    run_id: str
    status: Literal["ABORTED", "ALREADY_FINISHED"]
    teardown_started: bool


class ErrorBody(_Model):
    """Every 4xx: ``error`` is a stable code, ``message`` names the field or the run."""

    error: str
    message: str
    field: str | None = None
