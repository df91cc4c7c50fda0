"""What the local orchestrator (benchwright.local) does while a cell runs: poll a ``check_`` stage as
the ASL's Wait + Choice would, keep a second Ctrl-C from cutting teardown short, echo the runners'
logs, issue the spec's events (the check_runner stage does; this shows them), and keep what a failed
cell measured (``salvage``). The spec's operations are the check_operations stage's.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from rich.markup import escape

from benchwright.errors import RunnerFailed
from benchwright.providers.base import Providers
from benchwright.stages import RunState, stage_function
from benchwright.stages import steps as st

POLL_S = 0.2


def wait_until(
    state: RunState,
    providers: Providers,
    stage: str,
    done: Callable[[RunState], bool],
    on_poll: Callable[[RunState], None] | None = None,
) -> RunState:
    """Call a non-blocking ``check_`` stage until ``done`` (its own deadline raises on timeout)."""
    fn = stage_function(stage)
    state = fn(state, providers)
    while not done(state):
        if on_poll is not None:
            on_poll(state)
        time.sleep(POLL_S)
        state = fn(state, providers)
    return state


STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


@contextlib.contextmanager
def sigint_deferred() -> Iterator[None]:
    """Ignore a second Ctrl-C (or SIGTERM / SIGHUP) while cleaning up, so teardown cannot be cut short."""
    try:
        previous = {sig: signal.signal(sig, signal.SIG_IGN) for sig in STOP_SIGNALS}
    except ValueError:  # not the main thread
        yield
        return
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


class LogTail:
    """New lines of the runners' logs since the last call: the runner's progress on our console."""

    def __init__(self, paths: list[Path]) -> None:
        self.offsets = {p: 0 for p in paths}

    def new_lines(self) -> list[str]:
        lines: list[str] = []
        for path, offset in self.offsets.items():
            try:
                with open(path, "rb") as f:
                    f.seek(offset)
                    data = f.read()
            except OSError:
                continue
            complete = data[: data.rfind(b"\n") + 1]
            self.offsets[path] = offset + len(complete)
            lines += [x for x in complete.decode(errors="replace").splitlines() if x.strip()]
        return lines


def salvage(
    state: RunState,
    p: Providers,
    interrupted: bool,
    error: BaseException | None,
    say: Callable[[str], None],
) -> RunState:
    """Stop runners, keep what they measured, judge and store it marked as a partial result."""
    # a runner that stopped part-way gives a partial (aborted) result; one that never reached the
    # target, or refused its input, measured nothing: that run failed
    never_ran = any(f"{kind}:" in str(error) for kind in ("TargetUnreachable", "SpecError", "SchemaMissing"))
    aborted = interrupted or (isinstance(error, RunnerFailed) and not never_ran)
    status = "aborted" if aborted else "failed"
    message = "interrupted (Ctrl-C)" if interrupted else f"{type(error).__name__}: {error}"
    label = escape(f"[{state.cell_id} #{state.repeat + 1}]")
    say(f"{label} [yellow]{status}[/yellow]: {escape(message)}")
    error_type = "Interrupted" if interrupted else type(error).__name__
    state = state.model_copy(update={"status": status, "error": message, "error_type": error_type})
    if not state.runners:
        return state
    for handle in state.runners:
        with contextlib.suppress(Exception):
            p.launcher.stop(handle)
    try:
        for stage in (st.record_results, st.collect_metrics, st.judge_results, st.store_results):
            state = stage(state, p)
        say(f"{label} partial result stored ({status})")
    except Exception as exc:  # never let salvage hide the teardown
        say(f"[red]could not store the partial result:[/red] {type(exc).__name__}: {exc}")
    return state


def describe(state: RunState) -> str:
    port = state.target.get("port")
    return f"127.0.0.1:{port}" if port else state.target.get("endpoint", state.spec.target.provider)


# ---------------------------------------------------------------- environment
def environment() -> dict[str, Any]:
    from benchwright.runner.engine import host_facts

    facts = host_facts().model_dump()
    facts["orchestrator"] = "local"
    facts["pid"] = os.getpid()
    return facts
