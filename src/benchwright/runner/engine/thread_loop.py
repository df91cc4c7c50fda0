"""The thread model's hot loop: one client thread pulls operations from the workload, times each
driver call and stops at its limit, the deadline, a stop request or a run of failures. Kept apart
from the worker's setup so the per-operation code is easy to read and to benchmark on its own
(benchmarks/bench_progress.py)."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from typing import Any

from benchwright.runner.engine.config import ERROR_ABORT_S, NS
from benchwright.runner.event_loop import sleep_until
from benchwright.runner.measure import Recorder, Status
from benchwright.runner.workloads.base import Operation


def _thread_loop(  # pylint: disable=too-many-positional-arguments  # thread entry point; issue 10 item 6
    ops: Iterator[Operation],
    recorder: Recorder,
    recover: Callable[[], None],
    limit: int | None,
    deadline_ns: int,
    start_ns: int,
    pace_ns: int,
    stop: Any,
    errors: dict[str, int],
    give_up_s: float = ERROR_ABORT_S,
    windows: list[tuple[int, int | None, int]] | None = None,
) -> str | None:
    """Run one thread's operations; return a reason when it gave up because everything failed.

    ``windows`` receives each run of failures as (end of its first failed operation, end of the next
    successful one or None, failed operations): bookkeeping on the error path only.

    The hot path: one ``perf_counter_ns`` on each side of the driver call, one ``record``; the stop
    flag is polled every 32 operations and the recorder's buffers are folded every 65536."""
    if limit == 0:  # more threads than operations: this one has nothing to do
        return None
    perf = time.perf_counter_ns
    record = recorder.record
    idle_until = recorder.idle_until
    error = Status.ERROR
    next_ns = start_ns
    failing_since = 0
    streak = 0
    give_up_ns = int(give_up_s * NS)
    sleep_until(start_ns)
    for done, (name, call) in enumerate(ops, 1):
        if pace_ns:
            now = perf()
            if next_ns > now:
                idle_until(next_ns)  # nothing ends before next_ns: lets live progress move on
                time.sleep((next_ns - now) / NS)
            intended = next_ns
            next_ns += pace_ns
            actual = perf()
            try:
                status = call()
            except Exception as exc:
                status = error
                _count_error(errors, name, exc, recover)
            end = perf()
            record(name, intended, end, status, actual)
        else:
            actual = perf()
            try:
                status = call()
            except Exception as exc:
                status = error
                _count_error(errors, name, exc, recover)
            end = perf()
            record(name, actual, end, status)
        if status is error:
            streak += 1
            if not failing_since:
                failing_since = end
            elif end - failing_since > give_up_ns:
                _close_window(windows, failing_since, None, streak)
                return f"every operation failed for {give_up_s:.0f} s (last: {name})"
        elif failing_since:
            _close_window(windows, failing_since, end, streak)
            failing_since = streak = 0
        if done == limit or end >= deadline_ns:
            _close_window(windows, failing_since, None, streak)
            return None
        if not done & 31:
            if stop.is_set():
                _close_window(windows, failing_since, None, streak)
                return None
            if not done & 0xFFFF:
                recorder.flush()  # keeps the pending buffers small when intervals are long
    _close_window(windows, failing_since, None, streak)
    return None


def _close_window(
    windows: list[tuple[int, int | None, int]] | None, since: int, until: int | None, errors: int
) -> None:
    if windows is not None and since:
        windows.append((since, until, errors))


def _count_error(errors: dict[str, int], name: str, exc: Exception, recover: Callable[[], None]) -> None:
    kind = f"{name}:{type(exc).__name__}"
    errors[kind] = errors.get(kind, 0) + 1
    with contextlib.suppress(Exception):
        recover()
