"""Live progress by reporting period: the caller's ``PeriodProgress``, the worker side that reads the
intervals its threads have sealed (``_SealedIntervals``, lock-free) and the parent side that sums
them into periods (``_PeriodTracker``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from benchwright.errors import SpecError
from benchwright.runner.engine.config import NS, ProgressFn
from benchwright.runner.measure import SEALED_ALL, LatencyKind, PeriodTotals, Recorder
from benchwright.runner.plan import PhaseConfig

PERIOD_GRACE_S = 1.0  # a period still incomplete this long after its end is reported as it stands


@dataclass(frozen=True)
class Period:
    """One reporting period of a running phase: the operations that ended in [start_s, end_s) after
    the common start instant, with exact latency sums (``totals``: mean, stddev, lag, histogram).

    ``exact`` is False only when a worker was so late (a thread stuck in one long operation) that the
    period was reported ``PERIOD_GRACE_S`` after its end without all of it; its missing operations are
    then counted in the next reported period, as pgbench counts a transaction when it completes."""

    index: int
    start_s: float
    end_s: float
    totals: PeriodTotals
    exact: bool
    latency_kind: LatencyKind
    threads: int  # threads still running at the end of the period (sysbench's "thds")

    @property
    def seconds(self) -> float:
        return self.end_s - self.start_s


class PeriodProgress:
    """A progress callback that also hands over each reporting period's aggregates, live.

    Pass one wherever a ``ProgressFn`` goes (``run_phase``, ``commands.sql.run_and_write``): it is
    still called as ``(elapsed s, operations so far, current ops/s)`` about twice a second (forwarded
    to ``on_progress``), and ``on_period`` gets one ``Period`` per ``every_s`` seconds, in order, as
    soon as every worker has finished with it. ``every_s`` must be a whole number of the phase's
    intervals (``PhaseConfig.interval_s``, 1 s by default): periods are unions of those intervals,
    so they match the result document's interval series exactly."""

    def __init__(
        self, every_s: float, on_period: Callable[[Period], None], on_progress: ProgressFn | None = None
    ) -> None:
        if not every_s > 0:
            raise SpecError("progress", f"the reporting period must be positive, got {every_s}")
        self.every_s = every_s
        self.on_period = on_period
        self.on_progress = on_progress

    def __call__(self, elapsed_s: float, operations: int, rate: float) -> None:
        if self.on_progress is not None:
            self.on_progress(elapsed_s, operations, rate)


@dataclass
class _PeriodUpdate:
    """Worker -> parent: intervals every thread of one process is done with, summed over threads."""

    process_index: int
    sealed_below: int  # every interval below this index is final in that process (SEALED_ALL: done)
    intervals: dict[int, tuple[Any, ...]]  # index -> PeriodTotals.to_wire(), non-empty ones only
    stopped_s: list[float]  # when each of its stopped threads stopped, after the start instant


class _SealedIntervals:
    """The worker side of live progress. Runs on the publisher thread: it only reads buckets the
    worker threads have sealed (they never touch those again), so the hot path takes no lock."""

    def __init__(self, process_index: int, recorders: list[Recorder], stopped_ns: list[int]) -> None:
        self.process_index = process_index
        self.recorders = recorders
        self.stopped_ns = stopped_ns
        self.sent_below = 0
        self.done = False

    def collect(self) -> _PeriodUpdate | None:
        """What was sealed since the last call (None: nothing new)."""
        if self.done:
            return None
        sealed = min(r.sealed_below for r in self.recorders)
        stop = sealed
        if sealed == SEALED_ALL:
            self.done = True
            stop = max(r.last_interval() for r in self.recorders) + 1
        elif sealed <= self.sent_below:
            return None
        intervals = {}
        for index in range(self.sent_below, stop):
            totals = PeriodTotals()
            for recorder in self.recorders:
                bucket = recorder.sealed_bucket(index)
                if bucket is not None:
                    totals.add_bucket(bucket)
            if totals.counts or totals.statuses:  # an interval of failures only is still reported
                intervals[index] = totals.to_wire()
        self.sent_below = max(self.sent_below, stop)
        stopped = [ns / NS for ns in self.stopped_ns if ns]
        return _PeriodUpdate(self.process_index, sealed, intervals, stopped)


class _PeriodTracker:
    """The parent side of live progress: sums the workers' sealed intervals into periods of
    ``every_s`` and hands each to the caller once every worker is done with it (or, for a worker
    stuck in a long operation, ``PERIOD_GRACE_S`` after the period's end)."""

    def __init__(self, live: PeriodProgress, config: PhaseConfig, processes: int) -> None:
        self.live = live
        self.every_s = live.every_s
        self.per = round(live.every_s / config.interval_s)  # intervals per period
        self.limit_s = config.max_seconds
        self.threads = config.threads
        self.kind: LatencyKind = "response_time" if config.target else "service_time"
        self.sealed = [0] * processes
        self.stopped: list[list[float]] = [[] for _ in range(processes)]
        self.pending: dict[int, PeriodTotals] = {}  # interval index -> totals not reported yet
        self.next = 0  # index of the next period to report

    def receive(self, update: _PeriodUpdate) -> None:
        self.sealed[update.process_index] = update.sealed_below
        self.stopped[update.process_index] = update.stopped_s
        for index, wire in update.intervals.items():
            totals = PeriodTotals.from_wire(wire)
            mine = self.pending.get(index)
            if mine is None:
                self.pending[index] = totals
            else:
                mine.add(totals)

    def emit(self, elapsed_s: float, runtime_s: float | None = None) -> None:
        """Report every period that is due at ``elapsed_s``; ``runtime_s`` once the run is over (then
        every period that ended within the run is due, and nothing more will arrive)."""
        while True:
            start_i, end_i = self.next * self.per, (self.next + 1) * self.per
            end_s = (self.next + 1) * self.every_s
            complete = min(self.sealed) >= end_i
            if runtime_s is not None:
                if end_s > min(runtime_s, self.limit_s or runtime_s) + 1e-3:
                    return  # the stragglers after the deadline are not a period of their own
            elif min(self.sealed) == SEALED_ALL:
                return  # every thread has stopped: the run's end decides which periods count
            elif elapsed_s < end_s:
                return
            elif self.limit_s is not None and end_s > self.limit_s + 1e-3:
                return  # past the time limit: wait for the end of the run
            elif not complete and (
                elapsed_s < end_s + PERIOD_GRACE_S
                or (self.limit_s is not None and end_s > self.limit_s - 1e-3)
            ):
                return  # the last period of a timed run waits, so its lines sum to every operation
            totals = PeriodTotals()
            late = False
            for index in sorted(i for i in self.pending if i < end_i):
                late = late or index < start_i
                totals.add(self.pending.pop(index))
            stopped = sum(1 for ts in self.stopped for t in ts if t < end_s)
            self.live.on_period(
                Period(
                    index=self.next,
                    start_s=round(self.next * self.every_s, 9),
                    end_s=round(end_s, 9),
                    totals=totals,
                    exact=complete and not late,
                    latency_kind=self.kind,
                    threads=self.threads - stopped,
                )
            )
            self.next += 1


def _check_period(progress: ProgressFn | None, config: PhaseConfig) -> PeriodProgress | None:
    if not isinstance(progress, PeriodProgress):
        return None
    per = progress.every_s / config.interval_s
    if round(per) < 1 or abs(per - round(per)) > 1e-9:
        raise SpecError(
            "progress",
            f"a reporting period of {progress.every_s:g} s is not a whole number of the "
            f"{config.interval_s:g} s intervals",
        )
    return progress
