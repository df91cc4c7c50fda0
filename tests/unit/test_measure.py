"""The measuring core: exact histogram merges, interval buckets, statuses."""

from __future__ import annotations

import random

from benchwright.runner.measure import Recorder, Status, decode_histogram

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
    assert rec.intervals[1].counts == {"READ": 1, "UPDATE": 1}
    assert rec.intervals[1].errors == {"READ": 1}
    assert rec.ops["READ"].statuses == {"OK": 1, "ERROR": 1}


def test_paced_recorder_keeps_both_response_and_service_time() -> None:
    rec = Recorder(0, "response_time")
    # intended at 0, actually sent at 400 ms (the client was held up), done at 401 ms
    rec.record("READ", 0, int(0.401 * NS), Status.OK, int(0.400 * NS))
    assert rec.ops["READ"].histogram.get_max_value() >= 400_000
    service = rec.ops["READ"].service_histogram
    assert service is not None and service.get_max_value() < 2_000
