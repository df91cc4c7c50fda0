"""What one spec run produced: its matrix cells, their phase documents, cost and verdict.

A ``RunRecord`` is the unit every ResultStore saves and every report, comparison and notification
reads. It wraps whole ``ResultDocument``s (one per phase) instead of copying their numbers into a
second schema, so the document stays the single source of truth.
"""

from __future__ import annotations

import secrets
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from benchwright.results import MetricSeries, ResultDocument, ValidityFlag

RunStatus = Literal["running", "succeeded", "invalid", "failed", "aborted"]  # benchwright.outcome
VerdictKind = Literal["faster", "slower", "no_change", "unstable", "no_history", "no_verdict"]


def new_run_id(now: datetime | None = None) -> str:
    """A run's id: its UTC start to the second plus 6 random hex digits (sortable, unique enough),
    the same for local runs, API runs and suites (everywhere a run id is made)."""
    now = now or datetime.now(UTC)
    return f"{now:%Y%m%d-%H%M%S}-{secrets.token_hex(3)}"


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class CostEstimate(_Model):
    """What a run (or one cell) cost, and what that buys: ``items`` maps a line item to dollars."""

    currency: str = "USD"
    total: float
    items: dict[str, float] = Field(default_factory=dict)
    ops_per_dollar: float | None = None
    monthly_nightly: float | None = None  # the same run every night for 30 days
    source: str  # "AWS prices: Price List API", "AWS prices: cached price list of 2026-11-24", "local (free)"
    # per line item: where its unit prices came from and, for usage, what its quantity rests on
    notes: dict[str, str] = Field(default_factory=dict)


def combined_cost(costs: list[CostEstimate]) -> CostEstimate | None:
    """The cost of several cells as one: totals AND the nightly-for-a-month figures summed (a suite
    costs what all its cells cost, not what its last one did). Recomputed from the cells every time,
    so saving a record twice (a retried stage) never counts a cell twice."""
    if not costs:
        return None
    monthly = [c.monthly_nightly for c in costs if c.monthly_nightly is not None]
    sources = sorted({c.source for c in costs})
    return CostEstimate(
        currency=costs[0].currency,
        total=round(sum(c.total for c in costs), 6),
        items={},
        ops_per_dollar=None,
        monthly_nightly=round(sum(monthly), 4) if monthly else None,
        source=sources[0] if len(sources) == 1 else "; ".join(sources),
    )


class SharedData(_Model):
    """What a cell shared with others of its run (benchwright.sharing): the provisioned target and the
    loaded data. A cell that did not load ran on data ``loaded_by`` wrote, after ``runs_before``
    other cells had run on it (a run phase that writes changes the data the next cell sees)."""

    target_group: str  # g1: the cells on one provisioned target
    provisioned_by: str  # "<cell id> #<repeat>": the cell whose stages created the target
    dataset: str | None = None  # g1/d2: the cells on one load; None when the workload has no load
    loaded_by: str | None = None  # the cell whose load phase wrote the data (this one if it loaded)
    loaded_here: bool = False
    runs_before: int = 0  # cells that ran on the same data (same target, since its load) before this one

    def describe(self) -> str:
        if self.dataset is None or self.loaded_here:
            return f"target {self.target_group} (provisioned by {self.provisioned_by})"
        return (
            f"data shared: loaded by {self.loaded_by}, ran after {self.runs_before} earlier cell(s) "
            f"on the same data (target {self.target_group})"
        )


class CellResult(_Model):
    """One matrix cell of one repeat: its phase documents keyed by phase name (load, warmup, run)."""

    cell_id: str
    parameters: dict[str, Any] = Field(default_factory=dict)
    repeat: int = 0
    phases: dict[str, ResultDocument] = Field(default_factory=dict)
    metrics: list[MetricSeries] = Field(default_factory=list)  # host / cloud metrics of the cell window
    validity: list[ValidityFlag] = Field(default_factory=list)  # judgement across the cell's phases
    cost: CostEstimate | None = None
    shared: SharedData | None = None  # the target and data it shared with other cells

    @property
    def measured(self) -> ResultDocument | None:
        """The phase that counts for comparisons: ``run`` when present, else the last phase."""
        if "run" in self.phases:
            return self.phases["run"]
        return list(self.phases.values())[-1] if self.phases else None


class CellVerdict(_Model):
    """One cell's comparison: the numbers before and after, their ratio and its interval."""

    cell_id: str
    kind: VerdictKind
    baseline: float | None = None  # mean of the baseline runs' metric
    value: float | None = None  # mean of this run's repeats
    ratio: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    fingerprint_changes: list[str] = Field(default_factory=list)  # vs the newest run left out for it


class Verdict(_Model):
    """A statistical comparison with history or another run; never a bare percentage."""

    kind: VerdictKind
    metric: str  # e.g. "throughput" or "p99_us:READ"
    effect: float | None = None  # ratio new / baseline (1.10 = 10 % higher)
    ci_low: float | None = None  # confidence interval of that ratio
    ci_high: float | None = None
    min_effect: float  # smallest relative change we call a change (0.05 = 5 %)
    message: str
    cells: list[CellVerdict] = Field(default_factory=list)  # per cell: before, after, interval
    # "engine_version 16.3 -> 16.4": what changed against earlier runs that were therefore not compared
    fingerprint_changes: list[str] = Field(default_factory=list)


class RunWarning(_Model):
    """Something went wrong beside the measurement and did not change the run's status or numbers
    (``sink_failed``: the time-series sink refused the record; the S3 record is the truth)."""

    code: str
    message: str
    at: datetime | None = None


class RunRecord(_Model):
    """One execution of a spec, from start to teardown; saved again at every status change."""

    run_id: str
    spec_name: str
    spec: dict[str, Any] = Field(default_factory=dict)  # the spec as run, secrets already removed
    status: RunStatus = "running"
    started_at: datetime
    ended_at: datetime | None = None
    cells: list[CellResult] = Field(default_factory=list)
    environment: dict[str, Any] = Field(default_factory=dict)
    verdict: Verdict | None = None
    cost: CostEstimate | None = None
    report: str | None = None  # where the HTML report is (path or URL)
    tags: dict[str, str] = Field(default_factory=dict)
    error: str | None = None
    # A cell of an AWS suite keeps its own record; the suite's record (this id) is the run that history,
    # verdicts and reports see, so stores leave such a cell record out of a spec's history.
    suite_run_id: str | None = None
    warnings: list[RunWarning] = Field(default_factory=list)
