"""What crosses the process boundary: the phase's configuration (``PhaseConfig``, the runner plan's
own phase model), the report a worker sends back, and the constants both sides agree on (the clock
unit, the start delay, publish rates)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from benchwright.runner.measure import RecorderExport

NS = 1_000_000_000
START_DELAY_NS = 200_000_000  # every worker is connected and waiting before the start instant
ERROR_ABORT_S = 3.0  # a thread whose every operation failed for this long gives up
ProgressFn = Callable[[float, int, float], None]  # (elapsed s, operations so far, current ops/s)
PUBLISH_S, LIVE_PUBLISH_S = 0.25, 0.1  # how often a worker publishes its count / its sealed intervals


@dataclass
class WorkerReport:
    process_index: int
    recorder: RecorderExport
    cpu_user_s: float
    cpu_system_s: float
    wall_s: float
    peak_rss_mb: float
    lag_p99_ms: float
    cpu_wait_s: float = 0.0  # client threads runnable but waiting for a core (Linux schedstat)
    error_kinds: dict[str, int] = field(default_factory=dict)
    # runs of failed operations: (client, first failure s, next success s or None, failures)
    failure_windows: list[tuple[int, float, float | None, int]] = field(default_factory=list)
    aborted_reason: str | None = None
    setup_error: str | None = None
    workload_figures: dict[str, Any] = field(default_factory=dict)  # Workload.worker_figures
    event_loop: str = ""  # the model of the event loop its connections shared (EventLoop.model); "": threads
