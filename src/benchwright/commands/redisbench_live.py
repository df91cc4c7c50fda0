"""redis-benchmark's live line while a test runs, on stderr:

    SET: rps=41234.0 (overall: 40871.5) avg_msec=1.203 (overall: 1.187)

fed by the engine's reporting periods (``PeriodProgress``, one per second), which count only the
operations that succeeded: a failed request is never throughput, and its latency is not averaged.
On a terminal the line is rewritten in place with ``\\r`` (as redis-benchmark does) and wiped when
the test ends; in a log (no TTY) each second is a line of its own, so CI keeps every figure.
redis-benchmark prints nothing of it with ``--csv``; the command also leaves it out with ``-q``.
"""

from __future__ import annotations

from typing import TextIO

from benchwright.runner.engine import Period, PeriodProgress
from benchwright.runner.workloads.redisbench.commands import TITLES, operation_name

EVERY_S = 1.0  # the engine's interval; redis-benchmark refreshes every 250 ms, a log wants seconds


class RpsLine:
    """The live line of one test: the last second's rate and mean latency, and the test's so far."""

    def __init__(self, title: str, pipeline: int, stream: TextIO, tty: bool) -> None:
        self.title = title
        self.pipeline = pipeline  # one engine operation is one pipeline of this many requests
        self.stream = stream
        self.tty = tty
        self.operations = 0  # successful pipelines so far
        self.latency_sum_us = 0
        self.printed = 0  # characters of the line on screen (TTY), to wipe it

    def progress(self) -> PeriodProgress:
        return PeriodProgress(EVERY_S, self.period)

    def period(self, period: Period) -> None:
        totals = period.totals
        self.operations += totals.operations
        self.latency_sum_us += totals.latency_sum_us
        self.write(self.text(period))

    def text(self, period: Period) -> str:
        """The line for one period; a mean over no successful request is undefined: ``-nan``, as
        redis-benchmark prints it."""
        rps = period.totals.operations * self.pipeline / period.seconds if period.seconds > 0 else 0.0
        overall = self.operations * self.pipeline / period.end_s if period.end_s > 0 else 0.0
        avg = _msec(period.totals.latency_sum_us, period.totals.operations)
        avg_all = _msec(self.latency_sum_us, self.operations)
        return f"{self.title}: rps={rps:.1f} (overall: {overall:.1f}) avg_msec={avg} (overall: {avg_all})"

    def write(self, line: str) -> None:
        if self.tty:
            self.stream.write(f"\r{line:<{self.printed}}")
            self.printed = len(line)
        else:
            self.stream.write(line + "\n")
        self.stream.flush()

    def close(self) -> None:
        """The test is over: on a terminal, wipe the line so the next one starts clean."""
        if self.tty and self.printed:
            self.stream.write("\r" + " " * self.printed + "\r")
            self.stream.flush()
            self.printed = 0


class LiveLines:
    """The live lines of a run of tests, one ``RpsLine`` per test (``run_redis_bench``'s ``live``)."""

    def __init__(self, pipeline: int, stream: TextIO, tty: bool) -> None:
        self.pipeline = pipeline
        self.stream = stream
        self.tty = tty
        self.current: RpsLine | None = None

    def for_test(self, test: str) -> PeriodProgress:
        """The progress callback of ``test`` (``set``, ``lrange_100``), titled as redis-benchmark does."""
        self.close()
        title = TITLES.get(test, operation_name(test))
        self.current = RpsLine(title, self.pipeline, self.stream, self.tty)
        return self.current.progress()

    def close(self) -> None:
        if self.current is not None:
            self.current.close()
            self.current = None


def _msec(sum_us: int, count: int) -> str:
    # latencies are per pipeline round trip; every request of a pipeline carries it, so the
    # per-request mean is the per-pipeline mean
    return f"{sum_us / count / 1000:.3f}" if count else "-nan"
