"""Issuing a spec's events while the runner measures: one code path for both orchestrators.

The ``check_runner`` stage (stages/steps.py) calls ``issue_due_events`` on every poll: the local
orchestrator polls every 0.2 s, the state machine every ``poll_seconds`` (WaitForRunner ->
CheckRunner, one Lambda invocation per poll). The runner writes when each phase started into its
output (``RunnerOutput.started``: a local file, or one S3 object on AWS), so both orchestrators learn
the measured phase's start the same way, from the runner's own clock, without reading its log.

An event is due ``at_s`` after that start plus ``START_DELAY_S`` (the runner releases its clients
that long after setting the phase up, ``engine.START_DELAY_NS``) and is issued on the first poll at
or after that instant, through ``Target.trigger`` (locally: restart the throwaway server; on AWS: the
service's API call, which returns at once). What counts is the instant each event was really issued,
which the event log keeps (UTC) and the availability analysis places on the result's own clock
(experiments/availability.py).

Everything the schedule knows lives in the run state (``measured_started_at``, ``event_log``: one
entry per event, in ``at_s`` order, issued or not), so a Lambda that sees only the state resumes it on
the next poll. On AWS the stage also sets the Wait's ``poll_seconds``: while the start is not known
yet, at most half the first event's ``at_s`` (the start is learnt before that event is due); once it
is, the time left until the next event (at least ``MIN_WAIT_S``); with nothing pending, the run's
steady poll again. So ``at_s`` is honoured within about a second plus a Lambda's start, and the
issued time recorded is the real one either way.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from benchwright.experiments.models import EventSpec
    from benchwright.providers.base import Providers, Target
    from benchwright.stages.state import RunState

START_DELAY_S = 0.2  # engine.START_DELAY_NS: clients are released this long after the phase is set up
MIN_WAIT_S = 1.0  # the shortest Wait between two polls while an event is close (ASL Wait: whole seconds)
MEASURED_PHASE = "run"  # events happen during the run phase (experiments/checks.py refuses the rest)
NOT_ISSUED = "not issued: the measured phase ended first"


def _utcnow() -> datetime:
    return datetime.now(UTC)


@dataclass
class EventSchedule:
    """The spec's events against the measured phase's start; ``log`` holds one entry per event done."""

    events: list[EventSpec]  # sorted by at_s
    log: list[dict[str, Any]] = field(default_factory=list)
    started_at: datetime | None = None  # the measured phase's start, as the runner wrote it
    clock: Callable[[], datetime] = _utcnow

    @classmethod
    def of(cls, state: RunState, clock: Callable[[], datetime] = _utcnow) -> EventSchedule | None:
        """The schedule of a run state, resumed where the last poll left it; None without events."""
        events = sorted(state.spec.events, key=lambda e: e.at_s)
        if not events:
            return None
        return cls(events, list(state.event_log), state.measured_started_at, clock)

    @property
    def pending(self) -> list[EventSpec]:
        return self.events[len(self.log) :]

    def due_at(self, event: EventSpec) -> datetime | None:
        if self.started_at is None:
            return None
        return self.started_at + timedelta(seconds=START_DELAY_S + event.at_s)

    def learn_start(self, started: Iterable[datetime | None]) -> None:
        """The earliest of the runners' reported starts of the measured phase (fan-out: the first)."""
        known = [s for s in started if s is not None]
        if self.started_at is None and known:
            self.started_at = min(known)

    def due(self) -> list[EventSpec]:
        """The pending events whose instant has come, in order."""
        now = self.clock()
        found = []
        for event in self.pending:
            when = self.due_at(event)
            if when is None or when > now:
                break
            found.append(event)
        return found

    def issue(self, event: EventSpec, target: Target) -> dict[str, Any]:
        """Do one event's action; the run goes on whatever happens (a failed call is its detail)."""
        entry: dict[str, Any] = {"action": event.action, "at_s": event.at_s}
        entry["issued_at"] = self.clock().isoformat()
        try:
            detail = target.trigger(event.action, event.to)
        except Exception as exc:  # the run goes on; the event says what happened
            detail = f"failed: {type(exc).__name__}: {exc}"
        entry["completed_at"] = self.clock().isoformat()
        entry["detail"] = detail
        self.log.append(entry)
        return entry

    def close(self, detail: str = NOT_ISSUED) -> None:
        """The measured phase is over (or the run ended): events still pending are logged as not
        issued, with ``detail`` saying why."""
        for event in self.pending:
            self.log.append(
                {
                    "action": event.action,
                    "at_s": event.at_s,
                    "issued_at": None,
                    "detail": detail,
                }
            )

    def wait_s(self, steady_s: float) -> float:
        """How long the workflow should wait before its next poll (never longer than ``steady_s``)."""
        pending = self.pending
        if not pending:
            return steady_s
        when = self.due_at(pending[0])
        if when is None:  # learn the start well before the first event is due
            return min(steady_s, max(MIN_WAIT_S, pending[0].at_s / 2))
        left = (when - self.clock()).total_seconds()
        return min(steady_s, max(MIN_WAIT_S, float(math.ceil(left))))


def issue_due_events(
    state: RunState, providers: Providers, running: bool, clock: Callable[[], datetime] = _utcnow
) -> RunState:
    """One poll of the spec's events: learn the measured phase's start from the runners' outputs,
    issue every event that is due, close the schedule once the runners are done (``running`` False),
    and set the next Wait. The target's handle may change (a local restart: a new pid); it goes into
    the state with the log, so teardown always finds the live server."""
    schedule = EventSchedule.of(state, clock)
    if schedule is None:
        return state
    steady = state.steady_poll_seconds if state.steady_poll_seconds is not None else state.poll_seconds
    target_handle = dict(state.target)
    if not running:
        schedule.close()
    else:
        if schedule.started_at is None and schedule.pending:
            outputs = (providers.launcher.output(h) for h in state.runners)
            schedule.learn_start(o.started.get(MEASURED_PHASE) if o is not None else None for o in outputs)
        for event in schedule.due():
            target = providers.target(state.spec.target, state.run_id, target_handle)
            schedule.issue(event, target)
            target_handle.update(target.handle)
    return state.model_copy(
        update={
            "target": target_handle,
            "event_log": schedule.log,
            "measured_started_at": schedule.started_at,
            "steady_poll_seconds": steady,
            "poll_seconds": schedule.wait_s(steady),
        }
    )


def close_pending_events(state: RunState) -> RunState:
    """The run ended (teardown, on every path): each event still pending is logged as not issued.

    A runner that fails raises out of ``check_runner``; on AWS the Catch then carries the state of the
    poll before (Step Functions keeps a failed Task's input), whose log lacks the events that were
    still to come. Teardown sees that state, so it closes the schedule with the run's error."""
    schedule = EventSchedule.of(state)
    if schedule is None or not schedule.pending:
        return state
    why = f"{state.error_type}" if state.error_type else "it ended"
    schedule.close(f"not issued: the run stopped first ({why})")
    return state.model_copy(update={"event_log": schedule.log})


def said(entry: dict[str, Any]) -> str:
    """The console line of one event log entry."""
    return f"event {entry['action']} at {float(entry['at_s']):g} s: {entry.get('detail')}"
