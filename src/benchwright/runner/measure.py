"""The measuring side of the runner: per-operation HdrHistograms and a 1-second interval series.

Drivers never time themselves: the engine calls ``Recorder.record`` with the operation's start and
end taken around the driver call. With a target rate the start is the *intended* start of the
operation (its slot in the schedule), so a stalled server shows up in the upper percentiles instead
of silently delaying the next request (coordinated omission). Without a rate the start is the actual
send time and the numbers are closed-loop service time. ``Recorder.latency_kind`` says which.

Histograms are in microseconds, 1 us .. 1 hour, 3 significant digits, as YCSB's HdrHistogram
measurement type. They are exchanged between processes in HdrHistogram's standard compressed base64
encoding and merged with ``add``: the merged histogram is exactly the one a single process would have
recorded (tests/unit/test_measure.py checks this).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Literal

from hdrh.histogram import HdrHistogram

LOWEST_US = 1
HIGHEST_US = 3_600_000_000
SIGNIFICANT_FIGURES = 3
LatencyKind = Literal["response_time", "service_time"]


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


def new_histogram() -> HdrHistogram:
    return HdrHistogram(LOWEST_US, HIGHEST_US, SIGNIFICANT_FIGURES)


def decode_histogram(encoded: str | bytes) -> HdrHistogram:
    data = encoded.encode() if isinstance(encoded, str) else encoded
    return HdrHistogram.decode(data)


def encode_histogram(hist: HdrHistogram) -> str:
    return bytes(hist.encode()).decode("ascii")


@dataclass
class IntervalBucket:
    """What happened in one interval (default one second), per operation name."""

    counts: dict[str, int] = field(default_factory=dict)
    errors: dict[str, int] = field(default_factory=dict)
    latency_sum_us: dict[str, int] = field(default_factory=dict)
    histogram: HdrHistogram = field(default_factory=new_histogram)


@dataclass
class OpSeries:
    """Cumulative per-operation state."""

    histogram: HdrHistogram = field(default_factory=new_histogram)
    service_histogram: HdrHistogram | None = None  # only kept when latency_kind is response_time
    statuses: dict[str, int] = field(default_factory=dict)


class Recorder:
    """Collects every operation's latency and status for one worker process (any number of threads).

    ``record`` runs on the hot path: it is a handful of dict operations and two histogram updates.
    Threads in one process share the recorder; CPython's GIL makes each ``record`` call's updates
    atomic enough for counters, and histograms are only read after the threads have stopped.
    """

    def __init__(self, t0_ns: int, latency_kind: LatencyKind, interval_ns: int = 1_000_000_000) -> None:
        self.t0_ns = t0_ns
        self.latency_kind: LatencyKind = latency_kind
        self.interval_ns = interval_ns
        self.ops: dict[str, OpSeries] = {}
        self.intervals: dict[int, IntervalBucket] = {}

    def record(self, op: str, start_ns: int, end_ns: int, status: Status, actual_start_ns: int = 0) -> None:
        """Record one operation. ``start_ns`` is the intended start with a target rate, else the actual
        start; ``actual_start_ns`` (paced runs only) lets us also keep the service time."""
        latency_us = (end_ns - start_ns) // 1000 or 1
        series = self.ops.get(op)
        if series is None:
            series = self.ops[op] = OpSeries(
                service_histogram=new_histogram() if self.latency_kind == "response_time" else None
            )
        if latency_us > HIGHEST_US:
            latency_us = HIGHEST_US
        series.histogram.record_value(latency_us)
        if actual_start_ns and series.service_histogram is not None:
            series.service_histogram.record_value(max(1, min(HIGHEST_US, (end_ns - actual_start_ns) // 1000)))
        key = status.value
        series.statuses[key] = series.statuses.get(key, 0) + 1

        index = (end_ns - self.t0_ns) // self.interval_ns
        bucket = self.intervals.get(index)
        if bucket is None:
            bucket = self.intervals[index] = IntervalBucket()
        bucket.counts[op] = bucket.counts.get(op, 0) + 1
        bucket.latency_sum_us[op] = bucket.latency_sum_us.get(op, 0) + latency_us
        if status is Status.ERROR:
            bucket.errors[op] = bucket.errors.get(op, 0) + 1
        bucket.histogram.record_value(latency_us)

    def total_operations(self) -> int:
        return sum(sum(s.statuses.values()) for s in self.ops.values())

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
            intervals={
                i: (dict(b.counts), dict(b.errors), dict(b.latency_sum_us), encode_histogram(b.histogram))
                for i, b in self.intervals.items()
            },
        )

    def merge(self, other: RecorderExport) -> None:
        """Fold another process's export into this recorder; exact (histogram counts add)."""
        for name, (hist, service, statuses) in other.ops.items():
            series = self.ops.get(name)
            if series is None:
                series = self.ops[name] = OpSeries(
                    service_histogram=new_histogram() if service is not None else None
                )
            series.histogram.add(decode_histogram(hist))
            if service is not None:
                if series.service_histogram is None:
                    series.service_histogram = new_histogram()
                series.service_histogram.add(decode_histogram(service))
            for key, n in statuses.items():
                series.statuses[key] = series.statuses.get(key, 0) + n
        for index, (counts, errors, sums, hist) in other.intervals.items():
            bucket = self.intervals.get(index)
            if bucket is None:
                bucket = self.intervals[index] = IntervalBucket()
            for target, source in (
                (bucket.counts, counts),
                (bucket.errors, errors),
                (bucket.latency_sum_us, sums),
            ):
                for op, n in source.items():
                    target[op] = target.get(op, 0) + n
            bucket.histogram.add(decode_histogram(hist))


@dataclass
class RecorderExport:
    latency_kind: LatencyKind
    ops: dict[str, tuple[str, str | None, dict[str, int]]]
    intervals: dict[int, tuple[dict[str, int], dict[str, int], dict[str, int], str]]
