"""The measuring side of the runner: per-operation HdrHistograms and a 1-second interval series.

Drivers never time themselves: the engine calls ``Recorder.record`` with the operation's start and
end taken around the driver call. With a target rate the start is the *intended* start of the
operation (its slot in the schedule), so a stalled server shows up in the upper percentiles instead
of silently delaying the next request (coordinated omission). Without a rate the start is the actual
send time and the numbers are closed-loop service time. ``Recorder.latency_kind`` says which.

Each interval bucket also keeps exact integer sums (latency, its square, schedule lag, statuses),
folded with the histograms off the per-operation path: live progress lines (``PeriodTotals``) give a
period's exact mean and standard deviation from them, and its percentiles from the interval
histograms. ``Recorder.sealed_below`` tells another thread which intervals are final.

Histograms (runner/histograms.py) are in microseconds, 1 us .. 1 hour, 3 significant digits, as
YCSB's HdrHistogram measurement type. They are exchanged between processes in HdrHistogram's standard compressed base64
encoding and merged with ``add``: the merged histogram is exactly the one a single process would have
recorded (tests/unit/test_measure.py checks this).
"""

from __future__ import annotations

import enum
import math
from bisect import bisect_left
from collections import Counter
from dataclasses import dataclass, field
from itertools import repeat
from operator import floordiv, sub
from typing import Literal

from hdrh.histogram import HdrHistogram

from benchwright.failures import base_operation, failed_name, is_failed

# The histogram side lives in runner/histograms.py; re-exported here for the modules that read both.
from benchwright.runner.histograms import HIGHEST_US as HIGHEST_US
from benchwright.runner.histograms import LOWEST_US as LOWEST_US
from benchwright.runner.histograms import SIGNIFICANT_FIGURES as SIGNIFICANT_FIGURES
from benchwright.runner.histograms import Histogram as Histogram
from benchwright.runner.histograms import decode_histogram as decode_histogram
from benchwright.runner.histograms import encode_histogram as encode_histogram
from benchwright.runner.histograms import new_histogram as new_histogram
from benchwright.runner.histograms import record_counts as record_counts

LatencyKind = Literal["response_time", "service_time"]
SEALED_ALL = 1 << 62  # Recorder.sealed_below of a thread that has stopped
FOLD_EVERY = 1 << 16  # pending operations folded at the latest after this many (long intervals)


class Status(enum.Enum):
    """Outcome of one operation, a value rather than an exception (YCSB's Status, BenchBase's
    TransactionStatus). ``value`` is the name printed in ``Return=...`` lines."""

    OK = "OK"
    NOT_FOUND = "NOT_FOUND"
    USER_ABORT = "USER_ABORT"  # e.g. TPC-C's 1% New-Order rollbacks: expected, not an error
    RETRY = "RETRY"  # serialization failure / deadlock: retried, counted separately
    ERROR = "ERROR"

    @property
    def is_error(self) -> bool:
        return self in (Status.ERROR,)


_OK = Status.OK  # read once: an Enum class attribute is a slow lookup on Python 3.11 (hot path)
_ERROR = Status.ERROR
_RETRY = Status.RETRY


@dataclass
class IntervalBucket:
    """What happened in one interval (default one second), per operation name. The sums are exact
    integers (us, us squared), filled when buffers are folded, so a live progress line can give the
    exact mean and standard deviation of any run of intervals (``PeriodTotals``)."""

    counts: dict[str, int] = field(default_factory=dict)
    errors: dict[str, int] = field(default_factory=dict)
    latency_sum_us: dict[str, int] = field(default_factory=dict)
    histogram: HdrHistogram = field(default_factory=new_histogram)
    latency_sq_sum_us: dict[str, int] = field(default_factory=dict)  # sum of squared latencies, us^2
    lag_sum_us: dict[str, int] = field(default_factory=dict)  # paced runs: intended -> actual start
    statuses: dict[str, int] = field(default_factory=dict)  # every status but OK, all operations


@dataclass
class PeriodTotals:
    """Totals over the operations that ended in a run of intervals: what one live progress line says.

    The sums are exact integers (latencies in us, squares in us^2), so ``mean_us`` and ``stddev_us``
    are the exact population mean and standard deviation of those latencies (pgbench's progress
    formulas: sqrt(E[x^2] - E[x]^2)); percentiles come from ``histogram`` (3 significant digits).
    ``counts`` and the latencies cover the operations that did not fail, as the result's histograms
    do; failed ones are only counted, in ``statuses["ERROR"]`` (``failed``)."""

    counts: dict[str, int] = field(default_factory=dict)  # per operation name, failures excluded
    statuses: dict[str, int] = field(default_factory=dict)  # every status but OK, by name
    latency_sum_us: int = 0
    latency_sq_sum_us: int = 0
    lag_sum_us: int = 0  # paced runs only: scheduled start -> actual start
    histogram: HdrHistogram = field(default_factory=new_histogram)

    @property
    def operations(self) -> int:
        return sum(self.counts.values())

    @property
    def failed(self) -> int:
        """Operations that ended in an error (pgbench's "failed", what the result calls errors)."""
        return self.statuses.get(Status.ERROR.value, 0)

    @property
    def retried(self) -> int:
        """Attempts that hit a deadlock or serialization failure and were re-run (sysbench's
        "ignored errors"): not in ``counts`` either."""
        return self.statuses.get(Status.RETRY.value, 0)

    @property
    def ok(self) -> int:
        """Operations that ended OK (not NOT_FOUND, USER_ABORT; failed and retried attempts are not
        in ``counts``)."""
        unsuccessful = (Status.ERROR.value, Status.RETRY.value)
        return self.operations - sum(n for k, n in self.statuses.items() if k not in unsuccessful)

    @property
    def mean_us(self) -> float:
        n = self.operations
        return self.latency_sum_us / n if n else 0.0

    @property
    def stddev_us(self) -> float:
        """Population standard deviation, from integers until the last step: no cancellation."""
        n = self.operations
        if not n:
            return 0.0
        return math.sqrt(max(0, n * self.latency_sq_sum_us - self.latency_sum_us**2)) / n

    @property
    def lag_avg_us(self) -> float:
        n = self.operations
        return self.lag_sum_us / n if n else 0.0

    def percentile_us(self, percentile: float) -> float:
        return float(self.histogram.get_value_at_percentile(percentile))

    def add_bucket(self, bucket: IntervalBucket) -> None:
        """Add one interval's bucket (read only: the bucket may belong to another thread's recorder)."""
        _add_into(self.counts, bucket.counts)
        _add_into(self.statuses, bucket.statuses)
        self.latency_sum_us += sum(bucket.latency_sum_us.values())
        self.latency_sq_sum_us += sum(bucket.latency_sq_sum_us.values())
        self.lag_sum_us += sum(bucket.lag_sum_us.values())
        if bucket.histogram.get_total_count():
            self.histogram.add(bucket.histogram)

    def add(self, other: PeriodTotals) -> None:
        _add_into(self.counts, other.counts)
        _add_into(self.statuses, other.statuses)
        self.latency_sum_us += other.latency_sum_us
        self.latency_sq_sum_us += other.latency_sq_sum_us
        self.lag_sum_us += other.lag_sum_us
        if other.histogram.get_total_count():
            self.histogram.add(other.histogram)

    def to_wire(self) -> tuple[dict[str, int], dict[str, int], int, int, int, str]:
        """A picklable form for a multiprocessing queue (the histogram in its compressed encoding)."""
        return (
            dict(self.counts),
            dict(self.statuses),
            self.latency_sum_us,
            self.latency_sq_sum_us,
            self.lag_sum_us,
            encode_histogram(self.histogram),
        )

    @classmethod
    def from_wire(cls, wire: tuple[dict[str, int], dict[str, int], int, int, int, str]) -> PeriodTotals:
        counts, statuses, total, squares, lag, encoded = wire
        histogram = new_histogram()  # full-size counts: a decoded one may be truncated, unfit to add into
        histogram.add(decode_histogram(encoded))
        return cls(dict(counts), dict(statuses), total, squares, lag, histogram)


def _clamped(counted: Counter[int]) -> Counter[int]:
    """Latencies as ``record`` used to clamp each one: 0 us counts as 1 us, anything above the
    histograms' range as its highest value; negative ones (an end before its start, seen across
    threads) stay, and the histograms skip them as ``record_value`` would."""
    zero = counted.pop(0, 0)
    if zero:
        counted[1] += zero
    if counted and max(counted) > HIGHEST_US:
        for value in [v for v in counted if v > HIGHEST_US]:
            counted[HIGHEST_US] += counted.pop(value)
    return counted


def _add_into(target: dict[str, int], source: dict[str, int]) -> None:
    for key, n in source.items():
        target[key] = target.get(key, 0) + n


@dataclass
class OpSeries:
    """Cumulative per-operation state."""

    histogram: HdrHistogram = field(default_factory=new_histogram)
    service_histogram: HdrHistogram | None = None  # only kept when latency_kind is response_time
    statuses: dict[str, int] = field(default_factory=dict)


class Recorder:
    """Collects every operation's latency and status for one thread (the engine gives each thread its
    own recorder and folds them together with ``absorb`` once the threads have stopped).

    ``record`` runs on the hot path, so it only appends the latency to a per-operation buffer of the
    current interval (a list: an ``array('q')`` append parses its argument, ten times the cost;
    memory is bounded by ``FOLD_EVERY`` operations, folded earlier in a long interval). The
    buffers are folded into the histograms, counters and interval buckets when an operation ends in
    another interval and whenever ``ops`` / ``intervals`` are read: a value recorded ``n`` times is
    added once with count ``n``, which gives exactly the histogram one ``record_value`` per operation
    would (tests/unit/test_measure.py checks this).

    An event loop does not even call ``record`` for an operation that ended OK: it appends the
    operation's start and end instants to ``completed`` (two ``list.append``, no Python call) and
    ``settle`` assigns them to intervals, many at a time, before anything else is recorded or read.
    """

    def __init__(self, t0_ns: int, latency_kind: LatencyKind, interval_ns: int = 1_000_000_000) -> None:
        self.t0_ns = t0_ns
        self.latency_kind: LatencyKind = latency_kind
        self.interval_ns = interval_ns
        self._ops: dict[str, OpSeries] = {}
        self._intervals: dict[int, IntervalBucket] = {}
        self._keep_service = latency_kind == "response_time"
        # Operations of the current interval [_lo, _hi) not folded yet. Empty window: the first
        # record opens one.
        self._index = 0
        self._lo = self._hi = 0
        self._pending: dict[str, list[int]] = {}
        self._pending_service: dict[str, list[int]] = {}
        self._pending_status: dict[tuple[str, Status], int] = {}  # every status but OK
        self._folded = 0
        # Operations that ended OK, by their start and end instants (ns), appended by an event loop
        # in the order they ended; ``settle`` folds them into the pending buffers above.
        self.completed: dict[str, tuple[list[int], list[int]]] = {}
        # Intervals below this index are final: nothing this recorder's thread records can land in
        # them any more (read by the worker's publisher thread for live progress, never written there).
        self.sealed_below = 0

    @property
    def ops(self) -> dict[str, OpSeries]:
        """Cumulative per-operation state (folds what is pending first)."""
        self.flush()
        return self._ops

    @property
    def intervals(self) -> dict[int, IntervalBucket]:
        """Per-interval state keyed by interval number (folds what is pending first)."""
        self.flush()
        return self._intervals

    def record(self, op: str, start_ns: int, end_ns: int, status: Status, actual_start_ns: int = 0) -> None:
        """Record one operation. ``start_ns`` is the intended start with a target rate, else the actual
        start; ``actual_start_ns`` (paced runs only) lets us also keep the service time.
        Latencies are clamped to the histograms' range when they are folded (``_clamped``)."""
        if self.completed:
            self.settle()  # what an event loop completed before this operation comes first
        if not self._lo <= end_ns < self._hi:
            self._open_interval(end_ns)
        if status is _ERROR or status is _RETRY:  # failed, or re-run after a deadlock: never throughput
            op = failed_name(op)  # its own entry, histogram and count (YCSB's READ-FAILED)
        buffer = self._pending.get(op)
        if buffer is None:
            buffer = self._pending[op] = []
        buffer.append((end_ns - start_ns) // 1000)
        if status is not _OK:
            key = (op, status)
            self._pending_status[key] = self._pending_status.get(key, 0) + 1
        if actual_start_ns and self._keep_service:
            service = self._pending_service.get(op)
            if service is None:
                service = self._pending_service[op] = []
            service.append(max(1, min(HIGHEST_US, (end_ns - actual_start_ns) // 1000)))

    def completed_buffers(self, op: str) -> tuple[list[int], list[int]]:
        """The (starts, ends) lists of ``completed`` for ``op``, made on first use."""
        buffers = self.completed.get(op)
        if buffers is None:
            buffers = self.completed[op] = ([], [])
        return buffers

    def settle(self) -> None:
        """Fold ``completed`` (operations that ended OK, each operation's ends in ascending order)
        into the pending buffers, interval by interval: what ``record`` does for each, computed with
        C-level ``map`` over the lists. Called by ``record`` and ``flush`` first, and by the event
        loop on its tick, so live progress lags by at most a tick."""
        completed = self.completed
        cursors = dict.fromkeys(completed, 0)
        while True:
            first = min(
                (ends[cursors[op]] for op, (_, ends) in completed.items() if cursors[op] < len(ends)),
                default=None,
            )
            if first is None:
                break
            if not self._lo <= first < self._hi:
                self._open_interval(first)
            bound = self._hi
            for op, (starts, ends) in completed.items():
                i = cursors[op]
                j = bisect_left(ends, bound, i)
                if j > i:
                    buffer = self._pending.get(op)
                    if buffer is None:
                        buffer = self._pending[op] = []
                    buffer.extend(map(floordiv, map(sub, ends[i:j], starts[i:j]), repeat(1000)))
                    cursors[op] = j
        completed.clear()
        if sum(map(len, self._pending.values())) >= FOLD_EVERY:
            self._fold()  # keeps the pending buffers small when intervals are long

    def _open_interval(self, end_ns: int) -> None:
        self._fold()
        self._index = (end_ns - self.t0_ns) // self.interval_ns
        self._lo = self.t0_ns + self._index * self.interval_ns
        self._hi = self._lo + self.interval_ns
        self.sealed_below = self._index  # after the flush: what another thread reads is complete

    def idle_until(self, ns: int) -> None:
        """The thread will complete nothing before ``ns`` (a paced thread about to sleep): when that
        is past the current interval, fold and seal it now rather than at the next operation, so a
        slow schedule does not hold live progress back. Results are unchanged (folding is exact)."""
        if ns >= self._hi:
            self._open_interval(ns)

    def seal(self) -> None:
        """The thread has stopped: fold what is pending and mark every interval final."""
        self.flush()
        self.sealed_below = SEALED_ALL

    def sealed_bucket(self, index: int) -> IntervalBucket | None:
        """Interval ``index``'s bucket without folding anything, so another thread may call it; its
        contents are final only when ``index < sealed_below``."""
        return self._intervals.get(index)

    def last_interval(self) -> int:
        """The highest interval index with a bucket (-1: none), without folding anything."""
        return max(list(self._intervals), default=-1)

    def flush(self) -> None:
        """Fold the pending operations of the current interval into histograms and counters."""
        if self.completed:
            self.settle()
        self._fold()

    def _fold(self) -> None:
        if not self._pending and not self._pending_service:
            return
        pending, self._pending = self._pending, {}
        pending_service, self._pending_service = self._pending_service, {}
        other_statuses, self._pending_status = self._pending_status, {}
        bucket = self._intervals.get(self._index)
        if bucket is None:
            bucket = self._intervals[self._index] = IntervalBucket()
        sums: dict[str, int] = {}
        for op, latencies in pending.items():
            n = len(latencies)
            series = self._series(op)
            counted = _clamped(Counter(latencies))
            if is_failed(op):  # own histogram and statuses; the interval counts errors, nothing else
                record_counts((series.histogram,), counted)
                for (name, status), count in other_statuses.items():
                    if name == op:
                        series.statuses[status.value] = series.statuses.get(status.value, 0) + count
                        if status is _ERROR:
                            base = base_operation(op)
                            bucket.errors[base] = bucket.errors.get(base, 0) + count
                continue
            squares = record_counts((series.histogram, bucket.histogram), counted)
            not_ok = 0
            for (name, status), count in other_statuses.items():
                if name == op:
                    not_ok += count
                    series.statuses[status.value] = series.statuses.get(status.value, 0) + count
            if n > not_ok:
                series.statuses["OK"] = series.statuses.get("OK", 0) + n - not_ok
            bucket.counts[op] = bucket.counts.get(op, 0) + n
            sums[op] = total = sum(value * count for value, count in counted.items())
            bucket.latency_sum_us[op] = bucket.latency_sum_us.get(op, 0) + total
            bucket.latency_sq_sum_us[op] = bucket.latency_sq_sum_us.get(op, 0) + squares
            self._folded += n
        for (_, status), count in other_statuses.items():
            bucket.statuses[status.value] = bucket.statuses.get(status.value, 0) + count
        for op, services in pending_service.items():
            hist = self._series(op).service_histogram
            if hist is not None:
                record_counts((hist,), Counter(services))
                if is_failed(op):
                    continue  # a failure's lag is not in the interval's sums either
                # response time = lag + service time, per operation (to the us each was rounded to)
                lag = sums.get(op, 0) - sum(services)
                bucket.lag_sum_us[op] = bucket.lag_sum_us.get(op, 0) + lag

    def _series(self, op: str) -> OpSeries:
        series = self._ops.get(op)
        if series is None:
            series = self._ops[op] = OpSeries(
                service_histogram=new_histogram() if self._keep_service else None
            )
        return series

    def total_operations(self) -> int:
        """Operations recorded so far. Safe to call from another thread while ``record`` runs (the
        figure may lag by the operations being folded at that instant: it is for progress only)."""
        completed = sum(len(ends) for _, ends in list(self.completed.values()))
        pending = sum(len(b) for op, b in list(self._pending.items()) if not is_failed(op))
        return self._folded + completed + pending

    def absorb(self, other: Recorder) -> None:
        """Fold another recorder of the same process into this one (exact, no encoding round trip)."""
        for name, source in other.ops.items():
            series = self._series(name)
            series.histogram.add(source.histogram)
            if source.service_histogram is not None:
                if series.service_histogram is None:
                    series.service_histogram = new_histogram()
                series.service_histogram.add(source.service_histogram)
            for key, n in source.statuses.items():
                series.statuses[key] = series.statuses.get(key, 0) + n
        intervals = self.intervals
        for index, theirs in other.intervals.items():
            bucket = intervals.get(index)
            if bucket is None:
                bucket = intervals[index] = IntervalBucket()
            _add_counts(bucket, _sums_of(theirs))
            bucket.histogram.add(theirs.histogram)
        self._folded += other.total_operations()

    # -------------------------------------------------------------- exchange between processes
    def export(self) -> RecorderExport:
        """A picklable, process-independent snapshot (histograms encoded)."""
        return RecorderExport(
            latency_kind=self.latency_kind,
            ops={
                name: (
                    encode_histogram(s.histogram),
                    encode_histogram(s.service_histogram) if s.service_histogram is not None else None,
                    dict(s.statuses),
                )
                for name, s in self.ops.items()
            },
            intervals={i: (_sums_of(b), encode_histogram(b.histogram)) for i, b in self.intervals.items()},
        )

    def merge(self, other: RecorderExport) -> None:
        """Fold another process's export into this recorder; exact (histogram counts add)."""
        ops = self.ops
        for name, (hist, service, statuses) in other.ops.items():
            series = ops.get(name)
            if series is None:
                series = ops[name] = OpSeries(
                    service_histogram=new_histogram() if service is not None else None
                )
            series.histogram.add(decode_histogram(hist))
            if service is not None:
                if series.service_histogram is None:
                    series.service_histogram = new_histogram()
                series.service_histogram.add(decode_histogram(service))
            for key, n in statuses.items():
                series.statuses[key] = series.statuses.get(key, 0) + n
                if not is_failed(name):
                    self._folded += n
        intervals = self.intervals
        for index, (sums, encoded) in other.intervals.items():
            bucket = intervals.get(index)
            if bucket is None:
                bucket = intervals[index] = IntervalBucket()
            _add_counts(bucket, sums)
            bucket.histogram.add(decode_histogram(encoded))


# the counters of an IntervalBucket, in the order _sums_of and _add_counts exchange them
_BUCKET_SUMS = ("counts", "errors", "latency_sum_us", "latency_sq_sum_us", "lag_sum_us", "statuses")
BucketSums = tuple[dict[str, int], ...]


def _sums_of(bucket: IntervalBucket) -> BucketSums:
    return tuple(dict(getattr(bucket, name)) for name in _BUCKET_SUMS)


def _add_counts(bucket: IntervalBucket, sums: BucketSums) -> None:
    for name, source in zip(_BUCKET_SUMS, sums, strict=True):
        _add_into(getattr(bucket, name), source)


@dataclass
class RecorderExport:
    latency_kind: LatencyKind
    ops: dict[str, tuple[str, str | None, dict[str, int]]]
    intervals: dict[int, tuple[BucketSums, str]]
