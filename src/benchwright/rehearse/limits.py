"""Step Functions' and Lambda's limits, measured on a rehearsal's executions.

From each execution's history (GetExecutionHistory's events, as execution.json keeps them): the
largest payload any event carries (a state's input or output, a task's parameters or result, the
execution's input or output) in UTF-8 bytes, and which state carried it; the number of history
events. From the Lambda invocations the sandboxes recorded: each function's longest invocation
against its configured timeout. ``validate``'s estimates of the same limits are in
stages/workflow_limits.py; this is what one rehearsal measured.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from benchwright.stages.workflow_limits import HISTORY_LIMIT_EVENTS, PAYLOAD_LIMIT_BYTES

PAYLOAD_KEYS = ("input", "output", "parameters")
MAX_HOPS = 100  # previousEventId hops to the state an event belongs to (bounded)


def _state_of(event: Mapping[str, Any], by_id: Mapping[Any, Mapping[str, Any]]) -> str:
    """The state an event belongs to: its own ``name``, else the state entered before it (a task's
    events point back through previousEventId to their StateEntered event)."""
    current: Mapping[str, Any] | None = event
    for _ in range(MAX_HOPS):
        if current is None:
            break
        for key, details in current.items():
            if key.startswith("state") and isinstance(details, Mapping) and details.get("name"):
                return str(details["name"])
        kind = str(current.get("type", ""))
        if kind.startswith("Execution"):
            return "(execution)"
        current = by_id.get(current.get("previousEventId"))
    return "?"


def largest_payload(events: Iterable[Mapping[str, Any]]) -> tuple[int, str]:
    """(bytes, state) of the largest payload in one execution's history; (0, "") without any."""
    events = list(events)
    by_id = {e.get("id"): e for e in events if e.get("id") is not None}
    best, where = 0, ""
    for event in events:
        for key, details in event.items():
            if not key.endswith("EventDetails") or not isinstance(details, Mapping):
                continue
            for field in PAYLOAD_KEYS:
                value = details.get(field)
                if isinstance(value, str) and len(value.encode()) > best:
                    best, where = len(value.encode()), _state_of(event, by_id)
    return best, where


def lambda_durations(
    invocations: Iterable[tuple[str, float]], timeouts: Mapping[str, float]
) -> list[dict[str, Any]]:
    """Per function (``(function, seconds)`` pairs): invocations, the longest, its timeout and the share."""
    longest: dict[str, float] = {}
    counts: dict[str, int] = {}
    for function, seconds in invocations:
        longest[function] = max(longest.get(function, 0.0), seconds)
        counts[function] = counts.get(function, 0) + 1
    out = []
    for function in sorted(longest):
        timeout = timeouts.get(function)
        out.append(
            {
                "function": function,
                "invocations": counts[function],
                "max_s": round(longest[function], 3),
                "timeout_s": timeout,
                "share_of_timeout": round(longest[function] / timeout, 4) if timeout else None,
            }
        )
    return out


def measure(
    executions: Iterable[Mapping[str, Any]],
    invocations: Iterable[tuple[str, float]],
    timeouts: Mapping[str, float],
) -> dict[str, Any]:
    """The ``limits`` block of execution.json: the worst execution's payload and history against
    Step Functions' limits, and each function's longest invocation against its timeout."""
    payload, state, events, arn = 0, "", 0, ""
    for execution in executions:
        history = execution.get("events") or []
        size, where = largest_payload(history)
        if size > payload:
            payload, state = size, where
        if len(history) > events:
            events, arn = len(history), str(execution.get("execution_arn", ""))
    functions = lambda_durations(invocations, timeouts)
    worst = max(functions, key=lambda f: f["share_of_timeout"] or 0.0, default=None)
    return {
        "payload_bytes_max": payload,
        "payload_state": state,
        "payload_limit_bytes": PAYLOAD_LIMIT_BYTES,
        "history_events_max": events,
        "history_execution": arn,
        "history_limit_events": HISTORY_LIMIT_EVENTS,
        "lambda": functions,
        "lambda_worst": worst,
        "within_limits": payload <= PAYLOAD_LIMIT_BYTES
        and events <= HISTORY_LIMIT_EVENTS
        and all((f["share_of_timeout"] or 0.0) < 1.0 for f in functions),
    }


def describe(limits: Mapping[str, Any]) -> str:
    """One line for the rehearsal's summary."""
    worst = limits.get("lambda_worst")
    lam = "no Lambda invocations"
    if worst:
        lam = (
            f"Lambda longest {worst['max_s']:.2f} s of {worst['timeout_s']:g} s timeout ({worst['function']})"
        )
    return (
        f"limits: largest state payload {limits['payload_bytes_max']:,} bytes of "
        f"{limits['payload_limit_bytes']:,} ({limits['payload_state'] or '-'}); history "
        f"{limits['history_events_max']:,} events of {limits['history_limit_events']:,}; {lam}"
    )
