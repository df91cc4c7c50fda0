"""Validity flags: reasons to doubt or reject a result, attached to every phase and cell.

The engine already notes what only it can see (workers lost, interruption); this module applies the
spec's validity policy to what is in the documents: a saturated client, too many errors, a window
too short to mean anything (and shorter than CloudWatch's 60 s resolution can describe), a
throughput collapse mid-run (change-point analysis; the drained-burst-bucket signature of seed
experiment 3) and credit/burst balances in the host or cloud metrics (judge/credits.py, the one
credit judgement).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from benchwright.judge.changepoint import find_collapse
from benchwright.judge.credits import SHORT_FOR_CLOUD_METRICS, judge_credits
from benchwright.judge.stall import stall_threshold, stalls_of
from benchwright.results import IntervalSample, MetricSeries, ResultDocument, ValidityFlag
from benchwright.runs import CellResult, RunRecord

MEASURED_PHASES = ("run",)


class ValidityPolicy(BaseModel):
    """Thresholds for judging a result. The spec's ``validity`` section fills it (same field names)."""

    model_config = ConfigDict(extra="forbid")

    max_error_rate: float = Field(default=0.01, ge=0.0, le=1.0)  # failed / all operations before "invalid"
    min_duration_s: float = Field(default=10.0, ge=0.0)  # measured phase shorter than this: "too_short"
    cloud_min_duration_s: float = Field(default=120.0, ge=0.0)  # with CloudWatch metrics (60 s points)
    collapse_drop: float = Field(default=0.3, gt=0.0, lt=1.0)  # later level this far below the earlier one
    collapse_min_segment_s: float = Field(default=5.0, gt=0.0)  # shortest level worth calling a level
    # no operation completed for longer than this in the measured phase: "stall" (judge/stall.py)
    max_stall_s: float = Field(default=5.0, gt=0.0)
    # the runner flags a saturated client as a warning; "invalid" makes the judge invalidate the cell
    client_saturation: Literal["invalid", "warning"] = "warning"
    balance_floor_percent: float = Field(default=5.0, ge=0.0)  # BurstBalance & co. below this: drained
    credit_floor: float = Field(default=1.0, ge=0.0)  # CPUCreditBalance below this: drained

    @classmethod
    def of(cls, value: ValidityPolicy | Mapping[str, Any] | None) -> ValidityPolicy:
        if value is None:
            return cls()
        if isinstance(value, ValidityPolicy):
            return value
        if isinstance(value, BaseModel):
            value = value.model_dump()
        return cls.model_validate({k: v for k, v in dict(value).items() if k in cls.model_fields})


def _duration_s(doc: ResultDocument) -> float:
    return doc.runtime_ms / 1000.0


def _uses_cloud_metrics(series: Iterable[MetricSeries]) -> bool:
    return any(s.source.startswith("cloudwatch") for s in series)


def judge_document(
    doc: ResultDocument, policy: ValidityPolicy | None = None, measured: bool | None = None
) -> None:
    """Add the policy's flags to ``doc.validity`` (idempotent: a code is never added twice)."""
    policy = policy or ValidityPolicy()
    measured = doc.phase in MEASURED_PHASES if measured is None else measured

    if doc.client.saturated:  # replaces the runner's own flag: the policy decides the severity
        _replace(
            doc,
            "client_saturated",
            policy.client_saturation,
            f"the load generator was saturated (busiest worker {doc.client.max_process_cpu_share:.0%} CPU, "
            f"timer lag p99 {doc.client.schedule_lag_p99_ms:.0f} ms): the numbers measure the client",
        )

    errors = sum(
        n
        for s in doc.operations.values()
        for status, n in s.statuses.items()
        if status not in ("OK", "NOT_FOUND", "USER_ABORT", "RETRY")
    )
    total = sum(s.operations for s in doc.operations.values())
    # A retried transaction (deadlock, serialization failure) is what sysbench reports as an "ignored
    # error" and TPC-C expects: it is counted and shown, not a failure.
    retries = sum(s.statuses.get("RETRY", 0) for s in doc.operations.values())
    if total and retries:
        doc.flag("retries", "info", f"{retries} of {total} transactions retried (deadlock or conflict)")
    if total and errors / total > policy.max_error_rate:
        _replace(
            doc,
            "error_rate",
            "invalid",
            f"{errors} of {total} operations failed ({errors / total:.2%}, policy allows "
            f"{policy.max_error_rate:.2%})",
        )

    if not measured:
        return
    duration = _duration_s(doc)
    if duration < policy.min_duration_s:
        doc.flag(
            "too_short",
            "warning",
            f"the measured phase ran {duration:.1f} s, less than the policy's {policy.min_duration_s:g} s",
        )
    if _uses_cloud_metrics(doc.metrics) and duration < policy.cloud_min_duration_s:
        doc.flag(
            SHORT_FOR_CLOUD_METRICS,
            "warning",
            f"the measured phase ran {duration:.0f} s; CloudWatch reports 60 s points, so fewer than "
            f"{policy.cloud_min_duration_s:g} s cannot show what the server did",
        )

    collapse = throughput_collapse(doc, policy)
    if collapse:
        doc.flag("throughput_collapse", "invalid", collapse)
    stall = stall_message(doc, policy)
    if stall:
        # during a spec's events (failover, reboot) an outage is what is measured (doc.availability)
        doc.flag("stall", "warning" if doc.availability and doc.availability.events else "invalid", stall)


def stall_message(doc: ResultDocument, policy: ValidityPolicy | None = None) -> str | None:
    """Each stretch of the measured phase in which no operation completed for longer than the
    policy's ``max_stall_s``, with its seconds; None when there is none."""
    policy = policy or ValidityPolicy()
    stalls = stalls_of(doc, policy.max_stall_s)
    if not stalls:
        return None
    threshold = stall_threshold(doc, policy.max_stall_s)
    return (
        "; ".join(s.describe() for s in stalls)
        + f": the server (or the path to it) stalled, longer than validity.max_stall_s ({threshold:g} s)"
    )


def _replace(
    doc: ResultDocument, code: str, severity: Literal["info", "warning", "invalid"], message: str
) -> None:
    doc.validity = [f for f in doc.validity if f.code != code]
    doc.flag(code, severity, message)


def complete_intervals(doc: ResultDocument) -> list[IntervalSample]:
    """The interval series without a partial last interval (the phase ended inside it, so its rate
    is low for no reason): that interval ends after the phase's run time."""
    intervals = doc.intervals
    if intervals and intervals[-1].t > doc.runtime_ms / 1000.0 + 1e-6 and len(intervals) > 1:
        return intervals[:-1]
    return list(intervals)


def throughput_collapse(doc: ResultDocument, policy: ValidityPolicy | None = None) -> str | None:
    """A message when the interval throughput drops to a lasting lower level mid-run, else None."""
    policy = policy or ValidityPolicy()
    intervals = complete_intervals(doc)
    values = [s.throughput for s in intervals]
    min_size = max(2, math.ceil(policy.collapse_min_segment_s / max(doc.measurement.interval_s, 1e-9)))
    if len(values) < 2 * min_size:
        return None
    found = find_collapse(values, policy.collapse_drop, min_size=min_size)
    if not found:
        return None
    at = intervals[found.index - 1].t if found.index > 0 else 0.0
    return (
        f"throughput collapsed at t={at:.0f} s from {found.before:,.0f} to {found.after:,.0f} ops/s "
        f"(-{found.drop:.0%}): a drained burst bucket or credit balance looks like this"
    )


def judge_cell(cell: CellResult, policy: ValidityPolicy | None = None) -> list[ValidityFlag]:
    """Judge every phase, then give the cell the measured phase's flags plus metric-based ones."""
    policy = policy or ValidityPolicy()
    measured = cell.measured
    for name, doc in cell.phases.items():
        judge_document(
            doc, policy, measured=(doc is measured and name not in ("load",)) or name in MEASURED_PHASES
        )
    found: list[ValidityFlag] = []
    for name, doc in cell.phases.items():
        for f in doc.validity:
            if doc is measured or f.severity == "invalid":
                prefix = "" if doc is measured else f"{name} phase: "
                found.append(ValidityFlag(code=f.code, severity=f.severity, message=prefix + f.message))
    for f in found:  # by code AND message: a load's error_rate must not hide the run phase's
        if not any((e.code, e.message) == (f.code, f.message) for e in cell.validity):
            cell.validity.append(f)
    balances = [*cell.metrics, *(measured.metrics if measured else [])]
    fingerprint = measured.fingerprint if measured is not None else None
    target_class = fingerprint.target_class if fingerprint is not None else None
    credits = judge_credits(balances, policy.balance_floor_percent, policy.credit_floor, target_class)
    for f in credits:
        if not any(e.code == f.code and e.message == f.message for e in cell.validity):
            cell.validity.append(f)  # one flag per balance series: several may share a code
    from benchwright.forecast.check import FORECAST_KEY, mismatch_flags

    forecast = measured.extra.get(FORECAST_KEY) if measured is not None else None
    for f in mismatch_flags(forecast, balances, policy.balance_floor_percent, policy.credit_floor):
        if not any(e.code == f.code and e.message == f.message for e in cell.validity):
            cell.validity.append(f)  # the observed regime against the one forecast before the run
    return cell.validity


def copied_from_phases(cell: CellResult, flag: ValidityFlag) -> bool:
    """Is this cell flag one ``judge_cell`` copied from a phase (the measured phase's, or another
    phase's invalid one, prefixed with its name)?"""
    return any(
        f.code == flag.code and flag.message in (f.message, f"{name} phase: {f.message}")
        for name, doc in cell.phases.items()
        for f in doc.validity
    )


def own_flags(cell: CellResult) -> list[ValidityFlag]:
    """The cell's flags that no phase raised (credit and burst balances of the cell's window)."""
    return [f for f in cell.validity if not copied_from_phases(cell, f)]


def phase_flags(cell: CellResult) -> list[tuple[str, ValidityFlag]]:
    """Every flag of the cell once, with where it was raised: each phase's own (``load``, ``warmup``,
    ``run``), then the cell's own (``cell``); never the judge's copies, so no phase hides another's."""
    out = [(name, f) for name, doc in cell.phases.items() for f in doc.validity]
    return out + [("cell", f) for f in own_flags(cell)]


def judge_run(record: RunRecord, policy: ValidityPolicy | Mapping[str, Any] | None = None) -> RunRecord:
    """Judge every cell of a run in place; returns the record for chaining."""
    resolved = ValidityPolicy.of(policy)
    for cell in record.cells:
        judge_cell(cell, resolved)
    return record


def cell_is_valid(cell: CellResult) -> bool:
    return not any(f.severity == "invalid" for f in cell.validity) and all(
        d.valid for d in cell.phases.values()
    )
