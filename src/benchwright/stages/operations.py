"""The ``check_operations`` stage: the spec's operation benchmarks, one poll at a time, after the runner.

Experiment 1 timed operations by hand (snapshot restore, point-in-time recovery, scale-out, a dump
and restore). ``check_runner`` sets ``operations_status`` to "pending" when the spec lists any; this
stage then advances the current operation by one step per call (``Target.operation_step``) and never
blocks for minutes: on AWS the ASL's WaitForOperations / CheckOperations / OperationsDone? loop polls
it every ``poll_seconds``, as provisioning is polled; locally ``local.wait_until`` does. A local
target's step is its whole (blocking, seconds-long) operation.

What the operation under way has made (snapshot and restored resource ids, when each step began) is
in ``operation_progress``; each finished one goes into ``operation_log`` (``results.TimedOperation``)
and from there next to the workload's results (``steps._attach_operations``). A failed operation is
logged with ``ok: false`` and its error, what it made is deleted, and the next one starts: the
workload's results stand. What a failed Lambda left is deleted by teardown (by name, from the
target handle's ``operations``) and, behind it, by the janitor (by tag).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from benchwright.providers.base import Providers, last_probe_error
from benchwright.stages.state import RunState, utcnow

OPERATION_TIMEOUT_S = 4 * 3600.0  # a restore of a large database takes hours; then it has failed


def _failed(name: str, progress: dict[str, Any], exc: BaseException) -> dict[str, Any]:
    started = progress.get("started_at") or utcnow().isoformat()
    return {
        "name": name,
        "started_at": started,
        "seconds": None,
        "steps": {},
        "ok": False,
        "detail": f"failed: {type(exc).__name__}: {exc}"[:1000],
    }


def check_operations(state: RunState, providers: Providers) -> RunState:
    """One step of the operation under way; "done" once every listed operation is logged."""
    names = [str(n) for n in state.spec.operations]
    if state.operations_status is None or not names:
        return state.advance("check_operations", operations_status=None)
    done = len(state.operation_log)
    if done >= len(names):
        return state.advance("check_operations", operations_status="done", operation_progress=None)
    name = names[done]
    target = providers.target(state.spec.target, state.run_id, state.target)
    progress = dict(state.operation_progress or {})
    progress.setdefault("deadline", (utcnow() + timedelta(seconds=OPERATION_TIMEOUT_S)).isoformat())
    entry: dict[str, Any] | None
    try:
        deadline = datetime.fromisoformat(progress["deadline"])
        if utcnow() > deadline:  # the operation's own deadline (node_replace: 1 h), else 4 h
            waiting = f", waiting for {progress['waiting_for']}" if progress.get("waiting_for") else ""
            raise TimeoutError(
                f"{name} did not finish by its deadline, {deadline:%Y-%m-%d %H:%M} UTC{waiting}"
                f"{last_probe_error(progress)}"
            )
        progress, entry = target.operation_step(name, progress)
    except Exception as exc:  # the workload's results stand; the operation says it failed
        entry = _failed(name, progress, exc)
        target.operation_cleanup(name, progress)
    handle = {**state.target, **target.handle}  # a local restart: a new pid
    if entry is None:
        return state.advance(
            "check_operations", operations_status="running", operation_progress=progress, target=handle
        )
    log = [*state.operation_log, {k: v for k, v in entry.items() if not k.startswith("_")}]
    status = "done" if len(log) >= len(names) else "running"
    return state.advance(
        "check_operations",
        operations_status=status,
        operation_progress=None,
        operation_log=log,
        target=handle,
        poll_seconds=state.poll_seconds,
    )
