"""What each event did to the measured phase: the outage, the errors, the recovery, before and after.

Inputs are the measured result document (its 1-second intervals and every client's failure windows,
recorded by the runner on the error path: engine._thread_loop and the event loop) and the event log
the orchestrator kept while it issued the events (when each was issued and when its call returned).

For one event, issued at ``issued_s`` (seconds since the phase's start instant), up to the next:
- the failure windows that began from ``issued_s - CLOCK_SLACK_S`` on are the event's;
- ``unavailable_s`` runs from the first of them (the end of the first failed operation) to the last
  affected client's next successful operation; None (with ``detail``) when a client never recovered;
- ``before``: the complete intervals between the previous event's recovery (or the phase's second
  interval: the first one ramps up) and the issue; ``steady_after_s``: from the issue to the start of
  the first of two consecutive intervals back within ``STEADY_FRACTION`` of the before throughput,
  after the outage; ``after``: from there to the next event or the end of the phase.
Percentiles: the intervals keep p50/p99/max only, so ``p99_us`` is the median of the intervals' p99.
"""

from __future__ import annotations

from datetime import datetime
from statistics import mean, median
from typing import Any

from benchwright.results import (
    Availability,
    EventOutcome,
    FailureWindow,
    IntervalSample,
    ResultDocument,
    WindowFigures,
)

STEADY_FRACTION = 0.9
CLOCK_SLACK_S = 0.5  # the orchestrator's and the runner's clocks (same host locally; NTP in AWS)
METHOD = (
    "unavailable_s: from the first failed operation after the event to the next successful operation "
    "of the last client that failed (per-client failure windows recorded by the runner); steady_after_s: "
    f"the issue to the first of two 1-second intervals back at {STEADY_FRACTION:.0%} of the throughput "
    "before; p99 before/after: the median of the 1-second intervals' p99"
)


def _figures(intervals: list[IntervalSample], width: float) -> WindowFigures | None:
    if not intervals:
        return None
    return WindowFigures(
        seconds=round(len(intervals) * width, 3),
        throughput=round(mean(i.throughput for i in intervals), 3),
        p99_us=float(median(i.p99_us for i in intervals)),
    )


def _complete(doc: ResultDocument) -> list[IntervalSample]:
    runtime = doc.runtime_ms / 1000
    return [i for i in doc.intervals if i.t <= runtime + 1e-6]


def analyse(doc: ResultDocument, log: list[dict[str, Any]]) -> Availability:
    """The availability section for ``doc`` from the orchestrator's event log."""
    width = doc.measurement.interval_s
    intervals = _complete(doc)
    runtime = doc.runtime_ms / 1000
    issued = sorted((e for e in log if e.get("issued_at")), key=lambda e: _when(e["issued_at"]))
    outcomes: list[EventOutcome] = []
    floor = width  # the first interval ramps up
    for n, event in enumerate(issued):
        at = (_when(event["issued_at"]) - doc.started_at).total_seconds()
        until = (
            (_when(issued[n + 1]["issued_at"]) - doc.started_at).total_seconds() - CLOCK_SLACK_S
            if n + 1 < len(issued)
            else runtime + 1.0
        )
        mine = [w for w in doc.failure_windows if at - CLOCK_SLACK_S <= w.start_s < until]
        outcome = EventOutcome(
            action=str(event["action"]),
            at_s=float(event["at_s"]),
            issued_at=_when(event["issued_at"]),
            issued_s=round(at, 3),
            completed_s=_offset(event.get("completed_at"), doc.started_at),
            unavailable_s=0.0,
            detail=str(event.get("detail") or ""),
        )
        recovered = at
        if mine:
            first = min(w.start_s for w in mine)
            ends = [w.end_s for w in mine]
            outcome.first_failure_s = round(first, 3)
            outcome.errors = sum(w.errors for w in mine)
            outcome.clients_affected = len({w.client for w in mine})
            if any(e is None for e in ends):
                outcome.unavailable_s = None
                outcome.detail = _join(
                    outcome.detail, "a client never succeeded again before the phase ended"
                )
                recovered = runtime
            else:
                recovered = max(e for e in ends if e is not None)
                outcome.recovered_s = round(recovered, 3)
                outcome.unavailable_s = round(recovered - first, 3)
        before = [i for i in intervals if i.t - width >= floor - 1e-9 and i.t <= at + 1e-9]
        outcome.before = _figures(before, width)
        next_at = until + CLOCK_SLACK_S if n + 1 < len(issued) else runtime + width
        later = [i for i in intervals if i.t - width >= recovered - 1e-9 and i.t <= next_at + 1e-9]
        steady_from = _steady(later, outcome.before.throughput if outcome.before else None)
        if steady_from is not None:
            outcome.steady_after_s = round(later[steady_from].t - width - at, 3)
            outcome.after = _figures(later[steady_from:], width)
            floor = later[steady_from].t - width
        else:
            outcome.after = _figures(later, width)
            outcome.detail = _join(outcome.detail, "throughput did not return to its level before the event")
            floor = next_at
        outcomes.append(outcome)
    for event in log:
        if not event.get("issued_at"):
            outcomes.append(
                EventOutcome(
                    action=str(event["action"]), at_s=float(event["at_s"]), issued_at=doc.started_at,
                    issued_s=-1.0, unavailable_s=None, detail=str(event.get("detail") or "not issued"),
                )
            )  # fmt: skip
    return Availability(method=METHOD, events=outcomes)


def _steady(intervals: list[IntervalSample], baseline: float | None) -> int | None:
    if not intervals:
        return None
    if not baseline:
        return 0
    good = [i.throughput >= STEADY_FRACTION * baseline for i in intervals]
    for k in range(len(good)):
        if good[k] and (k + 1 == len(good) or good[k + 1]):
            return k
    return None


def _when(value: Any) -> datetime:
    return value if isinstance(value, datetime) else datetime.fromisoformat(str(value))


def _offset(value: Any, start: datetime) -> float | None:
    return None if not value else round((_when(value) - start).total_seconds(), 3)


def _join(a: str, b: str) -> str:
    return f"{a}; {b}" if a else b


def errors_outside(doc: ResultDocument, availability: Availability) -> int:
    """Failed operations not explained by an event's outage."""
    total = doc.failed()
    return max(0, total - sum(e.errors for e in availability.events))


def attach(cell: Any, log: list[dict[str, Any]]) -> None:
    """Give the cell's measured document its availability section (no-op without events)."""
    doc = cell.measured
    if doc is None or not log:
        return
    doc.availability = analyse(doc, log)


def reconcile_flags(cell: Any) -> None:
    """Errors and a throughput dip are what an event is for: when every failed operation fell inside
    an event's outage, the error-rate and collapse flags become ``info`` naming the availability
    section, so the run stays valid; any error outside the outages keeps the flags as they were."""
    doc: ResultDocument | None = cell.measured
    if doc is None or doc.availability is None or not any(e.issued_s >= 0 for e in doc.availability.events):
        return
    if errors_outside(doc, doc.availability):
        return
    note = "expected: during the events' outages (see availability)"
    for flags in (doc.validity, cell.validity):
        for i, f in enumerate(flags):
            if f.code in ("error_rate", "throughput_collapse", "server_lost") and f.severity != "info":
                if f.code == "server_lost":
                    continue  # the phase really stopped: never excused
                flags[i] = f.model_copy(update={"severity": "info", "message": f"{f.message} ({note})"})


__all__ = ["FailureWindow", "analyse", "attach", "reconcile_flags"]
