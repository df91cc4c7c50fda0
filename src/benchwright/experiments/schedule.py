"""Issuing a spec's events while the runner measures: the local orchestrator's side.

The orchestrator already tails the runner's log while it polls (local.py); the schedule reads the
same lines. The runner reports a ``phase_started`` progress event (runner/progress.py) as it sets the
measured phase up and releases its clients a moment later (``engine.START_DELAY_NS`` after connecting), so the events are
timed from that line: ``at_s`` is approximate by a fraction of a second, and what counts is the
instant each event was really issued, which the event log keeps (UTC) and the availability analysis
places on the result's own clock (experiments/availability.py).

The action runs through ``Target.trigger`` (locally: restart the throwaway server, blocking until it
answers again). The target's handle may change (a new server pid); ``apply`` puts it, and the event
log, into the run state, also when the runner failed, so teardown always finds the live server.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from benchwright.providers.base import Target
from benchwright.runner.progress import RunnerEvent

START_DELAY_S = 0.2  # engine.START_DELAY_NS: clients are released this long after the phase is set up


class EventSchedule:
    def __init__(
        self, events: list[dict[str, Any]], measured_phase: str, target: Callable[[], Target]
    ) -> None:
        self.pending = sorted(events, key=lambda e: float(e["at_s"]))
        self.measured_phase = measured_phase
        self.target = target
        self.t0: float | None = None
        self.log: list[dict[str, Any]] = []
        self.handle: dict[str, str] = {}
        self.closed = False

    @classmethod
    def for_spec(
        cls, spec: dict[str, Any], measured_phase: str, target: Callable[[], Target]
    ) -> EventSchedule | None:
        events = spec.get("events") or []
        return cls(list(events), measured_phase, target) if events else None

    def feed(self, line: str) -> None:
        if self.t0 is not None:
            return
        event = RunnerEvent.parse_line(line)
        if event is not None and event.event == "phase_started" and event.phase == self.measured_phase:
            self.t0 = time.monotonic() + START_DELAY_S

    def poll(self) -> list[str]:
        """Issue every event that is due; returns a line per event for the console."""
        said: list[str] = []
        while self.pending and self.t0 is not None and not self.closed:
            event = self.pending[0]
            if time.monotonic() - self.t0 < float(event["at_s"]):
                break
            self.pending.pop(0)
            said.append(self._issue(event))
        return said

    def _issue(self, event: dict[str, Any]) -> str:
        target = self.target()
        target.handle.update(self.handle)  # a previous event may have restarted it (new pid)
        entry: dict[str, Any] = {"action": event["action"], "at_s": float(event["at_s"])}
        entry["issued_at"] = datetime.now(UTC).isoformat()
        try:
            detail = target.trigger(str(event["action"]), event.get("to"))
        except Exception as exc:  # the run goes on; the event says what happened
            detail = f"failed: {type(exc).__name__}: {exc}"
        entry["completed_at"] = datetime.now(UTC).isoformat()
        entry["detail"] = detail
        self.handle.update(target.handle)
        self.log.append(entry)
        return f"event {event['action']} at {event['at_s']:g} s: {detail}"

    def close(self) -> None:
        """The measured phase is over: events still pending are logged as not issued."""
        self.closed = True
        for event in self.pending:
            self.log.append(
                {
                    "action": event["action"],
                    "at_s": float(event["at_s"]),
                    "issued_at": None,
                    "detail": "not issued: the measured phase ended first",
                }
            )
        self.pending = []

    def apply(self, state: Any) -> Any:
        """The run state with the target's current handle and the event log."""
        return state.model_copy(
            update={"target": {**state.target, **self.handle}, "event_log": [*state.event_log, *self.log]}
        )
