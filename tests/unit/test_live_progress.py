"""Live progress: exact per-period aggregates from the workers, and the pgbench / sysbench lines made
from them (no database: recorders fed by hand, the null driver, captured real tool output)."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest

from benchwright.commands.oltp import interval_line
from benchwright.errors import SpecError
from benchwright.results import ResultDocument
from benchwright.runner.engine import (
    Period,
    PeriodProgress,
    PhaseConfig,
    _PeriodTracker,
    _PeriodUpdate,
    run_phase,
)
from benchwright.runner.measure import SEALED_ALL, PeriodTotals, Recorder, Status
from benchwright.runner.workloads.tpcb.pgbench_format import format_progress, progress_line

NS = 1_000_000_000
US = 1_000
DATA = Path(__file__).resolve().parents[1] / "data"


def _period(totals: PeriodTotals, *, end_s: float = 2.0, seconds: float = 2.0, paced: bool = False) -> Period:
    return Period(
        index=0,
        start_s=end_s - seconds,
        end_s=end_s,
        totals=totals,
        exact=True,
        latency_kind="response_time" if paced else "service_time",
        threads=4,
    )


def _totals_of(recorder: Recorder, index: int = 0) -> PeriodTotals:
    totals = PeriodTotals()
    recorder.flush()
    bucket = recorder.sealed_bucket(index)
    assert bucket is not None
    totals.add_bucket(bucket)
    return totals


# ---------------------------------------------------------------- the formulas
def test_mean_and_stddev_of_a_hand_computed_period() -> None:
    # given latencies of 100, 200, 300 and 400 us, one of them failed
    rec = Recorder(0, "service_time")
    for i, latency_us in enumerate((100, 200, 300, 400)):
        start = i * 1000 * US
        rec.record("txn", start, start + latency_us * US, Status.ERROR if i == 3 else Status.OK)
    totals = _totals_of(rec)

    # then the failure is only counted: mean = 200 us and the population stddev is
    # sqrt((100^2 + 0 + 100^2) / 3) us over the three successes (pgbench's latencies are successes')
    assert (totals.operations, totals.ok, totals.failed) == (3, 3, 1)
    assert totals.latency_sum_us == 600 and totals.latency_sq_sum_us == 140_000
    assert totals.mean_us == 200.0
    assert totals.stddev_us == pytest.approx(math.sqrt(20_000 / 3), abs=1e-9)
    # and pgbench's line: tps counts successes over the period's 2 s; ms with 3 decimals
    assert progress_line(_period(totals)) == "progress: 2.0 s, 1.5 tps, lat 0.200 ms stddev 0.082, 1 failed"


def test_schedule_lag_is_response_time_minus_service_time() -> None:
    # given a paced recorder: intended start, actual start 30 us and 50 us late, 100 us of service
    rec = Recorder(0, "response_time")
    rec.record("txn", 0, 130 * US, Status.OK, actual_start_ns=30 * US)
    rec.record("txn", 1000 * US, 1150 * US, Status.OK, actual_start_ns=1050 * US)
    totals = _totals_of(rec)

    assert totals.lag_sum_us == 80 and totals.lag_avg_us == 40.0
    assert totals.mean_us == 140.0 and totals.stddev_us == 10.0  # latencies 130 and 150 us
    line = progress_line(_period(totals, end_s=1.0, seconds=1.0, paced=True))
    assert line == "progress: 1.0 s, 2.0 tps, lat 0.140 ms stddev 0.010, 0 failed, lag 0.040 ms"


def test_stddev_stays_exact_where_the_textbook_formula_cancels() -> None:
    # one hour of latencies around 1 s with a spread of 1 us: E[x^2] - E[x]^2 in floats loses it all
    totals = PeriodTotals(
        counts={"txn": 2}, latency_sum_us=2 * 1_000_000 + 1, latency_sq_sum_us=1_000_000**2 + 1_000_001**2
    )
    assert totals.stddev_us == 0.5


def test_new_bucket_sums_survive_export_merge_and_absorb() -> None:
    a, b = Recorder(0, "response_time"), Recorder(0, "response_time")
    a.record("txn", 0, 300 * US, Status.OK, actual_start_ns=100 * US)
    b.record("txn", 0, 500 * US, Status.NOT_FOUND, actual_start_ns=50 * US)
    b.record("txn", 0, 900 * US, Status.RETRY, actual_start_ns=50 * US)  # a retried attempt: not in the sums
    merged = Recorder(0, "response_time")
    merged.merge(a.export())
    merged.merge(b.export())
    a.absorb(b)
    for rec in (merged, a):
        bucket = rec.intervals[0]
        assert bucket.latency_sq_sum_us == {"txn": 300**2 + 500**2}
        assert bucket.lag_sum_us == {"txn": 100 + 50}
        assert bucket.statuses == {"NOT_FOUND": 1, "RETRY": 1}
        assert rec.ops["txn-FAILED"].statuses == {"RETRY": 1}


def test_wire_form_round_trips() -> None:
    rec = Recorder(0, "service_time")
    for i in range(50):
        rec.record("txn", i * US, (i + 200 + i * i) * US, Status.OK)
    totals = _totals_of(rec)
    back = PeriodTotals.from_wire(totals.to_wire())
    assert back.to_wire() == totals.to_wire()
    assert back.percentile_us(95) == totals.percentile_us(95) > 0


# ---------------------------------------------------------------- the lines against the real tools'
def _shape(line: str) -> str:
    """A line with every number replaced by its shape (digits before the point do not matter)."""
    return re.sub(
        r"\d+(?:\.(\d+))?", lambda m: "N" + ("." + "d" * len(m.group(1)) if m.group(1) else ""), line
    )


def test_pgbench_progress_lines_match_the_captured_ones_number_for_number() -> None:
    real = [
        line
        for path in sorted(DATA.glob("pgbench_*.txt"))
        for line in path.read_text().splitlines()
        if line.startswith("progress: ")
    ]
    assert len(real) >= 4
    pattern = re.compile(
        r"progress: ([\d.]+) s, ([\d.]+) tps, lat ([\d.]+) ms stddev ([\d.]+), (\d+) failed(?:, lag ([\d.]+) ms)?"
    )
    for line in real:
        m = pattern.fullmatch(line)
        assert m, line
        t, tps, lat, sd, failed, lag = m.groups()
        rebuilt = format_progress(
            float(t), float(tps), float(lat), float(sd), int(failed), float(lag) if lag else None
        )
        assert rebuilt == line


def test_sysbench_interval_lines_have_the_captured_shape() -> None:
    real = {
        _shape(line)
        for path in sorted(DATA.glob("sysbench_*.txt"))
        for line in path.read_text().splitlines()
        if line.startswith("[ ") and "thds:" in line and "95%" in line
    }
    assert len(real) == 1  # every captured 95% line has the same shape
    rec = Recorder(0, "service_time")
    for i in range(30):
        rec.record("read_write", i * 10_000 * US, (i * 10_000 + 5_000 + i * 100) * US, Status.OK)
    rec.record("read_write", 400_000 * US, 401_000 * US, Status.RETRY)
    line = interval_line(
        _period(_totals_of(rec), end_s=10.0, seconds=10.0), {"read": 14, "write": 4, "other": 2}
    )
    assert _shape(line) in real
    # 30 events in 10 s, 20 queries each; the p95 of the 30 successes' latencies (5.0 .. 7.9 ms;
    # the retried attempt's 1.0 ms is not one of them) is the 29th, 7.8 ms; one ignored error in 10 s
    assert line == (
        "[ 10s ] thds: 4 tps: 3.00 qps: 60.00 (r/w/o: 42.00/12.00/6.00) lat (ms,95%): 7.80 "
        "err/s: 0.10 reconn/s: 0.00"
    )


# ---------------------------------------------------------------- the engine, end to end on null
def _run(target: float | None, every_s: float, seconds: float = 2.4) -> tuple[list[Period], ResultDocument]:
    periods: list[Period] = []
    doc = run_phase(
        PhaseConfig(
            workload="tpcb",
            phase="run",
            engine="null",
            properties={"tpcb.scale": "1", "tpcb.script": "select-only", "null.fail_every": "97"},
            threads=3,
            processes=2,
            max_seconds=seconds,
            target=target,
            seed=5,
        ),
        PeriodProgress(every_s, on_period=periods.append),
    )
    return periods, doc


@pytest.mark.parametrize("target", [None, 600.0], ids=["closed-loop", "paced"])
def test_live_periods_equal_the_result_intervals_of_the_same_seconds(target: float | None) -> None:
    periods, doc = _run(target, 1.0)
    assert [p.index for p in periods] == [0, 1] and [p.end_s for p in periods] == [1.0, 2.0]
    by_t = {s.t: s for s in doc.intervals}
    for period in periods:
        if not period.exact:  # a worker stalled past the grace: this one is legitimately shifted
            continue
        sample = by_t[period.end_s]
        totals = period.totals
        assert totals.counts == sample.operations
        assert totals.failed == sample.errors > 0
        average = sum(a * sample.operations[op] for op, a in sample.average_us.items()) / totals.operations
        assert totals.mean_us == pytest.approx(average, abs=0.05)  # the document rounds to 0.1 us
        assert totals.percentile_us(50) == sample.p50_us
        assert totals.percentile_us(99) == sample.p99_us
        assert totals.histogram.get_max_value() == sample.max_us
        # the histogram's stddev is within its precision of the exact one (a value moves at most
        # 1/2048 of itself to its bucket's middle; below 2048 us not at all)
        slack = totals.histogram.get_max_value() / 2048 + 1e-6
        assert totals.stddev_us == pytest.approx(totals.histogram.get_stddev(), abs=slack)
        assert period.latency_kind == ("response_time" if target else "service_time")
        assert period.threads == 3
        if target:
            assert totals.lag_sum_us >= 0
    # whatever was late, the periods of a timed run together hold exactly the operations of their
    # seconds (the last one waits for every worker)
    seen = sum(p.totals.operations for p in periods)
    assert seen == sum(sum(s.operations.values()) for s in doc.intervals if s.t <= 2.0)
    assert seen <= doc.operations_total


def test_two_second_periods_sum_two_intervals() -> None:
    periods, doc = _run(None, 2.0, seconds=2.2)
    assert [p.end_s for p in periods] == [2.0]
    counts = sum(sum(s.operations.values()) for s in doc.intervals if s.t <= 2.0)
    assert periods[0].totals.operations == counts and periods[0].seconds == 2.0


# ---------------------------------------------------------------- the parent's bookkeeping
def _config(max_seconds: float = 10.0) -> PhaseConfig:
    return PhaseConfig(
        workload="tpcb", phase="run", engine="null", properties={}, threads=4, max_seconds=max_seconds
    )


def _update(
    process: int, sealed: int, counts: dict[int, int], stopped: list[float] | None = None
) -> _PeriodUpdate:
    wire = {i: PeriodTotals(counts={"txn": n}, latency_sum_us=100 * n).to_wire() for i, n in counts.items()}
    return _PeriodUpdate(process, sealed, wire, stopped or [])


def test_a_period_waits_for_every_worker_then_a_late_one_moves_to_the_next() -> None:
    got: list[Period] = []
    tracker = _PeriodTracker(PeriodProgress(1.0, got.append), _config(), 2)
    tracker.receive(_update(0, 2, {0: 10, 1: 11}))
    tracker.emit(0.9)
    assert got == []  # second 0 has not ended
    tracker.emit(1.05)
    assert got == []  # worker 1 has not sealed second 0 yet
    tracker.receive(_update(1, 1, {0: 5}))
    tracker.emit(1.1)
    assert [(p.end_s, p.totals.operations, p.exact) for p in got] == [(1.0, 15, True)]
    tracker.emit(2.5)
    assert len(got) == 1  # second 1: still waiting for worker 1, within the grace
    tracker.emit(3.2)  # grace over: reported as it stands
    assert [(p.end_s, p.totals.operations, p.exact) for p in got][1] == (2.0, 11, False)
    tracker.receive(_update(1, 3, {1: 7, 2: 3}))  # worker 1's second 1 arrives late
    tracker.receive(_update(0, 3, {2: 4}))
    tracker.emit(3.3)
    assert [(p.end_s, p.totals.operations, p.exact) for p in got][2] == (3.0, 14, False)


def test_the_last_period_of_a_timed_run_waits_past_the_grace() -> None:
    got: list[Period] = []
    tracker = _PeriodTracker(PeriodProgress(1.0, got.append), _config(max_seconds=1.0), 2)
    tracker.receive(_update(0, SEALED_ALL, {0: 10}))
    tracker.emit(5.0)
    assert got == []  # worker 1 is stuck in an operation past the deadline: no line yet
    tracker.receive(_update(1, SEALED_ALL, {0: 2, 1: 1}))
    tracker.emit(5.1, runtime_s=5.1)
    assert [(p.end_s, p.totals.operations, p.exact) for p in got] == [(1.0, 12, True)]


def test_the_end_of_the_run_reports_only_whole_periods_and_counts_stopped_threads() -> None:
    got: list[Period] = []
    tracker = _PeriodTracker(PeriodProgress(1.0, got.append), _config(), 1)
    tracker.receive(_update(0, SEALED_ALL, {0: 3, 1: 4, 2: 1}, stopped=[1.5, 2.0004, 2.0004, 2.0004]))
    tracker.emit(2.6)
    assert got == []  # every thread stopped: the run's end decides
    tracker.emit(2.0004, runtime_s=2.0004)
    assert [(p.end_s, p.totals.operations, p.threads) for p in got] == [(1.0, 3, 4), (2.0, 4, 3)]


# ---------------------------------------------------------------- the callback's contract
def test_period_progress_is_still_a_progress_callback() -> None:
    calls: list[tuple[float, int, float]] = []
    progress = PeriodProgress(1.0, lambda p: None, on_progress=lambda *a: calls.append(a))
    progress(0.5, 10, 20.0)
    PeriodProgress(1.0, lambda p: None)(0.5, 10, 20.0)  # no on_progress: nothing to forward
    assert calls == [(0.5, 10, 20.0)]


@pytest.mark.parametrize("every", [0.0, -1.0], ids=["zero", "negative"])
def test_a_period_must_be_positive(every: float) -> None:
    with pytest.raises(SpecError) as err:
        PeriodProgress(every, lambda p: None)
    assert err.value.field == "progress"


def test_a_period_must_be_whole_intervals() -> None:
    config = PhaseConfig(workload="tpcb", phase="run", engine="null", properties={}, max_seconds=1)
    with pytest.raises(SpecError) as err:
        run_phase(config, PeriodProgress(1.5, lambda p: None))
    assert err.value.field == "progress" and "1.5 s" in str(err.value)
