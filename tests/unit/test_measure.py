"""runner/measure.py: exact histogram merges, interval buckets, statuses; and the batched Recorder and
the fast Histogram statistics, which must give exactly what the plain ones give.

The reference for the latter is the straightforward recorder (one ``record_value`` per operation into
plain hdrh histograms, counters updated per call): the batched one must produce identical histograms,
statuses, interval buckets and summary statistics, whatever the order of end times.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

import pytest
from hdrh.histogram import HdrHistogram

from benchwright.runner.measure import (
    HIGHEST_US,
    Histogram,
    Recorder,
    Status,
    decode_histogram,
    encode_histogram,
    new_histogram,
    record_counts,
)

NS = 1_000_000_000


def _feed(recorder: Recorder, samples: list[tuple[str, int, int, Status]]) -> None:
    for op, start, end, status in samples:
        recorder.record(op, start, end, status)


def _samples(seed: int, n: int) -> list[tuple[str, int, int, Status]]:
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        start = rng.randrange(0, 5 * NS)
        latency = int(rng.lognormvariate(12, 1.5))  # ns, spans 1 us .. seconds
        status = Status.ERROR if rng.random() < 0.01 else Status.OK
        out.append((rng.choice(["READ", "UPDATE"]), start, start + latency, status))
    return out


def test_merging_worker_exports_equals_recording_in_one_process() -> None:
    samples = _samples(1, 20_000)
    single = Recorder(0, "service_time")
    _feed(single, samples)
    merged = Recorder(0, "service_time")
    for part in (samples[:7000], samples[7000:15000], samples[15000:]):
        worker = Recorder(0, "service_time")
        _feed(worker, part)
        merged.merge(worker.export())

    assert merged.ops.keys() == single.ops.keys()
    for op in single.ops:
        a, b = single.ops[op].histogram, merged.ops[op].histogram
        assert a.get_total_count() == b.get_total_count() > 0
        for q in (50, 90, 99, 99.9, 100):
            assert a.get_value_at_percentile(q) == b.get_value_at_percentile(q)
        assert single.ops[op].statuses == merged.ops[op].statuses
    assert {i: sum(b.counts.values()) for i, b in single.intervals.items()} == {
        i: sum(b.counts.values()) for i, b in merged.intervals.items()
    }


def test_encoded_histogram_round_trips() -> None:
    rec = Recorder(0, "service_time")
    _feed(rec, _samples(2, 1000))
    export = rec.export()
    hist = decode_histogram(export.ops["READ"][0])
    assert hist.get_total_count() == rec.ops["READ"].histogram.get_total_count()


def test_interval_buckets_follow_operation_end_times() -> None:
    rec = Recorder(0, "service_time")
    rec.record("READ", 0, int(0.5 * NS), Status.OK)
    rec.record("READ", int(0.9 * NS), int(1.2 * NS), Status.ERROR)
    rec.record("UPDATE", int(1.5 * NS), int(1.6 * NS), Status.OK)
    assert rec.intervals[0].counts == {"READ": 1}
    assert rec.intervals[1].counts == {"UPDATE": 1}  # the failed READ is no throughput
    assert rec.intervals[1].errors == {"READ": 1}
    assert rec.ops["READ"].statuses == {"OK": 1}
    assert rec.ops["READ-FAILED"].statuses == {"ERROR": 1}
    assert rec.ops["READ-FAILED"].histogram.get_max_value() >= 300_000  # its own latency
    assert rec.ops["READ"].histogram.get_max_value() < 600_000


def test_paced_recorder_keeps_both_response_and_service_time() -> None:
    rec = Recorder(0, "response_time")
    # intended at 0, actually sent at 400 ms (the client was held up), done at 401 ms
    rec.record("READ", 0, int(0.401 * NS), Status.OK, int(0.400 * NS))
    assert rec.ops["READ"].histogram.get_max_value() >= 400_000
    service = rec.ops["READ"].service_histogram
    assert service is not None and service.get_max_value() < 2_000


# ---------------------------------------------------------------- batched recorder, fast statistics
STATUSES = [Status.OK] * 90 + [Status.NOT_FOUND] * 6 + [Status.ERROR] * 3 + [Status.RETRY]
UNSUCCESSFUL = (Status.ERROR, Status.RETRY)  # recorded as <OP>-FAILED: never throughput


def plain() -> HdrHistogram:
    return HdrHistogram(1, HIGHEST_US, 3)


@dataclass
class Reference:
    """One record_value per operation, as the recorder did before batching."""

    t0: int
    interval: int = NS
    ops: dict[str, tuple[HdrHistogram, HdrHistogram, dict[str, int]]] = field(default_factory=dict)
    buckets: dict[int, tuple[dict[str, int], dict[str, int], dict[str, int], HdrHistogram]] = field(
        default_factory=dict
    )

    def record(self, op: str, start: int, end: int, status: Status, actual: int = 0) -> None:
        latency = min(HIGHEST_US, (end - start) // 1000 or 1)
        unsuccessful = status in (Status.ERROR, Status.RETRY)
        name = op + "-FAILED" if unsuccessful else op  # failed and retried attempts: their own entry
        hist, service, statuses = self.ops.setdefault(name, (plain(), plain(), {}))
        hist.record_value(latency)
        if actual:
            service.record_value(max(1, min(HIGHEST_US, (end - actual) // 1000)))
        statuses[status.value] = statuses.get(status.value, 0) + 1
        counts, errors, sums, bucket = self.buckets.setdefault(
            (end - self.t0) // self.interval, ({}, {}, {}, plain())
        )
        if unsuccessful:
            if status is Status.ERROR:
                errors[op] = errors.get(op, 0) + 1
            return  # only counted in the interval: never its throughput or its percentiles
        counts[op] = counts.get(op, 0) + 1
        sums[op] = sums.get(op, 0) + latency
        bucket.record_value(latency)


def same_histogram(a: HdrHistogram, b: HdrHistogram) -> None:
    assert a.get_total_count() == b.get_total_count()
    assert list(a.counts) == list(b.counts)
    assert a.get_min_value() == b.get_min_value() and a.get_max_value() == b.get_max_value()


def samples(seed: int, n: int, paced: bool) -> list[tuple[str, int, int, Status, int]]:
    """Operations whose end times are mostly increasing but jump back now and then (threads)."""
    rng = random.Random(seed)
    out = []
    clock = rng.randrange(-NS, NS)
    for _ in range(n):
        clock += rng.randrange(0, 3_000_000)
        start = clock - (rng.randrange(0, 2 * NS) if rng.random() < 0.05 else 0)
        latency = int(rng.lognormvariate(11, 1.6))
        end = clock + latency if rng.random() > 0.02 else clock - rng.randrange(0, NS)
        actual = start + rng.randrange(0, latency + 1) if paced else 0
        out.append((rng.choice(["READ", "UPDATE", "SCAN"]), start, end, rng.choice(STATUSES), actual))
    return out


@pytest.mark.parametrize("paced", [False, True])
def test_batched_recorder_equals_one_record_value_per_operation(paced: bool) -> None:
    ops = samples(11, 30_000, paced)
    ref = Reference(t0=123)
    rec = Recorder(123, "response_time" if paced else "service_time")
    for op, start, end, status, actual in ops:
        ref.record(op, start, end, status, actual)
        rec.record(op, start, end, status, actual)

    assert rec.total_operations() == sum(1 for o in ops if o[3] not in UNSUCCESSFUL)  # successes
    assert rec.ops.keys() == ref.ops.keys()
    for name, (hist, service, statuses) in ref.ops.items():
        same_histogram(rec.ops[name].histogram, hist)
        assert rec.ops[name].statuses == statuses
        if paced:
            kept = rec.ops[name].service_histogram
            assert kept is not None
            same_histogram(kept, service)
        else:
            assert rec.ops[name].service_histogram is None
    assert rec.intervals.keys() == ref.buckets.keys()
    for index, (counts, errors, sums, hist) in ref.buckets.items():
        bucket = rec.intervals[index]
        assert (bucket.counts, bucket.errors, bucket.latency_sum_us) == (counts, errors, sums)
        same_histogram(bucket.histogram, hist)


def test_recording_after_a_read_keeps_adding_to_the_same_interval() -> None:
    rec = Recorder(0, "service_time")
    rec.record("READ", 0, 100_000, Status.OK)
    assert rec.intervals[0].counts == {"READ": 1}  # reading folds what is pending
    rec.record("READ", 200_000, 300_000, Status.ERROR)
    rec.record("READ", NS, NS + 10, Status.OK)
    assert rec.intervals[0].counts == {"READ": 1} and rec.intervals[0].errors == {"READ": 1}
    assert rec.intervals[1].counts == {"READ": 1}
    assert rec.ops["READ"].statuses == {"OK": 2} and rec.ops["READ-FAILED"].statuses == {"ERROR": 1}
    assert rec.total_operations() == 2  # successes only


def test_absorb_equals_merge_of_exports() -> None:
    parts = [samples(seed, 5_000, True) for seed in (1, 2, 3)]
    recorders = []
    for part in parts:
        r = Recorder(0, "response_time")
        for op, start, end, status, actual in part:
            r.record(op, start, end, status, actual)
        recorders.append(r)
    absorbed = Recorder(0, "response_time")
    merged = Recorder(0, "response_time")
    for r in recorders:
        absorbed.absorb(r)
        merged.merge(r.export())
    succeeded = sum(1 for part in parts for o in part if o[3] not in UNSUCCESSFUL)
    assert absorbed.total_operations() == merged.total_operations() == succeeded < 15_000
    for name, series in merged.ops.items():
        same_histogram(absorbed.ops[name].histogram, series.histogram)
        assert absorbed.ops[name].statuses == series.statuses
        service = absorbed.ops[name].service_histogram
        assert service is not None and series.service_histogram is not None
        same_histogram(service, series.service_histogram)
    assert absorbed.intervals.keys() == merged.intervals.keys()
    for index, bucket in merged.intervals.items():
        other = absorbed.intervals[index]
        assert (other.counts, other.errors, other.latency_sum_us) == (
            bucket.counts,
            bucket.errors,
            bucket.latency_sum_us,
        )
        same_histogram(other.histogram, bucket.histogram)


@pytest.mark.parametrize("seed", range(12))
def test_fast_statistics_equal_hdrh_statistics(seed: int) -> None:
    rng = random.Random(seed)
    fast, ref = new_histogram(), plain()
    assert isinstance(fast, Histogram)
    for _ in range(rng.choice([0, 1, 7, 2_000, 40_000])):
        value = min(HIGHEST_US, max(1, int(rng.lognormvariate(rng.uniform(0, 14), rng.uniform(0.1, 3)))))
        count = rng.choice([1, 1, 1, 4])
        fast.record_value(value, count)
        ref.record_value(value, count)
    decoded = decode_histogram(encode_histogram(fast))
    assert isinstance(decoded, Histogram)
    for hist in (fast, decoded):
        assert hist.get_mean_value() == ref.get_mean_value()
        assert hist.get_stddev() == ref.get_stddev()
        for q in (0, 0.01, 1, 50, 90, 95, 99, 99.9, 99.999, 100):
            assert hist.get_value_at_percentile(q) == ref.get_value_at_percentile(q)


def test_record_counts_equals_record_value_for_every_value_and_edge() -> None:
    """The inline fold gives hdrh's own buckets, totals, min and max, including values it refuses."""
    rng = random.Random(5)
    values = [0, 1, 2, 1023, 1024, 2047, 2048, 2049, HIGHEST_US, HIGHEST_US + 1, 2 * HIGHEST_US, -1]
    values += [int(rng.lognormvariate(6, 3)) for _ in range(20_000)]
    counted: dict[int, int] = {}
    for v in values:
        counted[v] = counted.get(v, 0) + rng.randrange(1, 4)
    expected = new_histogram()
    for value, count in counted.items():
        expected.record_value(value, count)
    a, b = new_histogram(), new_histogram()
    b.record_value(7, 2)  # one already holding counts: the fold adds to them
    expected_b = new_histogram()
    expected_b.record_value(7, 2)
    for value, count in counted.items():
        expected_b.record_value(value, count)
    squares = record_counts((a, b), counted)
    same_histogram(a, expected)
    same_histogram(b, expected_b)
    probe = new_histogram()  # record_value says which values it takes (negative, too high: refused)
    kept = [(v, n) for v, n in counted.items() if probe.record_value(v)]
    assert len(kept) < len(counted)  # the refused edges were exercised
    assert squares == sum(v * v * n for v, n in kept)


@pytest.mark.parametrize("interval", [NS, NS // 20])
def test_completed_lists_settled_in_blocks_equal_one_record_per_operation(interval: int) -> None:
    """The event loop's path: OK operations appended to ``completed`` (ends ascending, as a loop ends
    them), settled now and then, other statuses through ``record`` in between: the same histograms,
    statuses and interval buckets as one ``record`` per operation."""
    rng = random.Random(5)
    ref = Reference(t0=77, interval=interval)
    rec = Recorder(77, "service_time", interval)
    clock = done = 0
    for n in range(40_000):
        clock += rng.randrange(0, 200_000)
        start = clock - int(rng.lognormvariate(11, 1.2))
        op = rng.choice(["READ", "UPDATE"])
        status = rng.choice(STATUSES)
        ref.record(op, start, clock, status)
        if status is Status.OK:
            starts, ends = rec.completed.get(op) or rec.completed_buffers(op)
            starts.append(start)
            ends.append(clock)
        else:
            rec.record(op, start, clock, status)
        if n % 997 == 0:
            rec.settle()  # the loop's tick
        done += status not in UNSUCCESSFUL
        if n % 4999 == 0:
            assert rec.total_operations() == done
    assert rec.ops.keys() == ref.ops.keys()
    for name, (hist, _, statuses) in ref.ops.items():
        same_histogram(rec.ops[name].histogram, hist)
        assert rec.ops[name].statuses == statuses
    assert rec.intervals.keys() == ref.buckets.keys()
    for index, (counts, errors, sums, hist) in ref.buckets.items():
        bucket = rec.intervals[index]
        assert (bucket.counts, bucket.errors, bucket.latency_sum_us) == (counts, errors, sums)
        same_histogram(bucket.histogram, hist)
    assert not rec.completed and rec.total_operations() == done < 40_000
