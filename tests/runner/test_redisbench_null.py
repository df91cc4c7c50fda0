"""redis-bench's semantics without a server: test names, key and value shapes, request counts with
and without pipelining, latency buckets, and the capability check before anything runs."""

from __future__ import annotations

import random
import re

import pytest

from benchwright.errors import CapabilityError, SpecError
from benchwright.runner import compiled
from benchwright.runner.drivers.resp import encode_command
from benchwright.runner.engine import PhaseConfig, run_phase
from benchwright.runner.measure import decode_histogram, encode_histogram, new_histogram
from benchwright.runner.workloads.redisbench.buckets import buckets_from_histogram
from benchwright.runner.workloads.redisbench.commands import (
    INLINE,
    TESTS,
    KeySource,
    command_factory,
    resp_blocks,
    resp_factory,
)
from benchwright.runner.workloads.redisbench.sequential import RedisBenchSettings, run_redis_bench
from benchwright.runner.workloads.redisbench.workload import parse_tests, per_request
from benchwright.runner.workloads.registry import check_capability


def test_test_names_are_redis_benchmark_s_and_unknown_ones_name_the_setting() -> None:
    assert parse_tests("SET, get,lrange_100,set") == ["set", "get", "lrange_100"]
    with pytest.raises(SpecError) as err:
        parse_tests("set,hget")
    assert err.value.field == "redisbench.tests" and "'hget'" in str(err.value)


def test_random_keys_look_like_redis_benchmark_s_rand_int() -> None:
    keys = KeySource(1000, random.Random(1))
    command = command_factory("set", b"xxx", keys)()
    assert command[0] == b"SET" and command[2] == b"xxx"
    assert re.fullmatch(rb"key:\d{12}", command[1])
    assert int(command[1][4:]) < 1000
    assert command_factory("get", b"", KeySource(0, random.Random(1)))() == (b"GET", b"key:__rand_int__")
    mset = command_factory("mset", b"v", keys)()
    assert mset[0] == b"MSET" and len(mset) == 21  # 10 key/value pairs, as redis-benchmark's MSET (10 keys)


@pytest.mark.parametrize("keyspace", [0, 1000, 10**12])
@pytest.mark.parametrize("test", [t for t in TESTS if t not in INLINE])
def test_commands_prebuilt_in_resp_are_the_commands_encoded_one_by_one(test: str, keyspace: int) -> None:
    value = b"x%%s" * 5  # a '%' in the value must survive the template
    made = command_factory(test, value, KeySource(keyspace, random.Random(7)))
    prebuilt = resp_factory(test, value, KeySource(keyspace, random.Random(7)))
    for _ in range(50):
        assert prebuilt() == encode_command(made())
    pipelined = resp_factory(test, value, KeySource(keyspace, random.Random(8)), repeat=3)
    made = command_factory(test, value, KeySource(keyspace, random.Random(8)))
    for _ in range(20):
        assert pipelined() == b"".join(encode_command(made()) or b"" for _ in range(3))


@pytest.mark.parametrize("keyspace", [1, 7, 100_000, 10**12])
@pytest.mark.parametrize(("test", "size"), [("get", 16), ("set", 1), ("incr", 3)])
def test_pipelines_made_in_c_are_python_s_own_and_leave_the_generator_where_python_would(
    test: str, size: int, keyspace: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert compiled.key_pipelines() is not None, "the C part is built here (make ext)"
    c_rng, py_rng = random.Random(11), random.Random(11)
    in_c = resp_blocks(test, b"v%", KeySource(keyspace, c_rng), repeat=size)
    monkeypatch.setenv("BENCHWRIGHT_COMPILED_LOOP", "0")  # the Python draws
    in_python = resp_blocks(test, b"v%", KeySource(keyspace, py_rng), repeat=size)
    for n in (64, 1, 0, 5):
        made = in_c(n)
        assert len(made) == n
        assert made == in_python(n)
        assert c_rng.getstate() == py_rng.getstate()
    keys = re.findall(rb"key:(\d+)|counter:(\d+)", b"".join(in_c(64)))
    assert len(keys) == 64 * size
    assert all(len(k[0] or k[1]) == 12 and int(k[0] or k[1]) < keyspace for k in keys)


@pytest.mark.parametrize(
    ("pipeline", "requests", "expected"),
    [(1, 10, 10), (4, 10, 12), (16, 320, 320)],
    ids=["no-pipeline", "P4-rounds-up-to-whole-pipelines", "P16"],
)
def test_every_test_runs_its_requests_across_all_clients(pipeline: int, requests: int, expected: int) -> None:
    props = {
        "redisbench.tests": "set,get,incr",
        "redisbench.requests": str(requests),
        "redisbench.pipeline": str(pipeline),
    }
    doc = run_phase(
        PhaseConfig(
            workload="redis-bench", phase="run", engine="null", properties=props, threads=3, processes=1
        )
    )
    assert {n: o.operations for n, o in doc.operations.items()} == {
        "SET": expected,
        "GET": expected,
        "INCR": expected,
    }
    assert doc.operations_total == 3 * expected
    for op in doc.operations.values():
        assert decode_histogram(op.histogram or "").get_total_count() == expected  # per request, P-weighted
    assert doc.extra["requests_per_operation"] == pipeline
    assert "pipeline's round-trip latency" in doc.measurement.method
    assert set(doc.extra["latency_buckets"]) == {"SET", "GET", "INCR"}


def test_sequential_runs_give_each_test_its_own_rate() -> None:
    settings = RedisBenchSettings(tests="set,get", requests=200, clients=2, pipeline=2, processes=1)
    doc = run_redis_bench(settings, "null", {})
    assert list(doc.operations) == ["SET", "GET"]
    assert doc.operations_total == 400
    assert doc.extra["requests_per_second"]["SET"] == pytest.approx(
        doc.operations["SET"].throughput, rel=1e-3
    )
    assert doc.runtime_ms > 0 and doc.intervals[-1].t >= doc.intervals[0].t


def test_per_request_scaling_is_idempotent() -> None:
    doc = run_phase(
        PhaseConfig(
            workload="redis-bench",
            phase="run",
            engine="null",
            properties={"redisbench.tests": "get", "redisbench.requests": "40", "redisbench.pipeline": "4"},
            threads=1,
            processes=1,
        )
    )
    before = doc.operations["GET"].operations
    per_request(doc, 4)
    assert doc.operations["GET"].operations == before == 40


def test_latency_buckets_are_shares_within_each_bound_and_the_max() -> None:
    hist = new_histogram()
    hist.record_value(500, 90)  # 0.5 ms
    hist.record_value(3_000, 5)  # 3 ms
    hist.record_value(60_000, 4)  # 60 ms
    hist.record_value(400_000, 1)  # 400 ms
    buckets = buckets_from_histogram(encode_histogram(hist))
    assert [buckets[k] for k in ("1", "5", "50", "100", "300", "500")] == [0.9, 0.95, 0.95, 0.99, 0.99, 1.0]
    assert buckets["max_ms"] == pytest.approx(400, rel=0.001)


@pytest.mark.parametrize("engine", ["postgres", "mysql"])
def test_redis_bench_on_a_sql_engine_is_refused_before_anything_connects(engine: str) -> None:
    with pytest.raises(CapabilityError) as err:
        check_capability("redis-bench", engine)
    assert err.value.field == "engine" and "redis-commands" in str(err.value)
    # nothing listens on port 1: a connection attempt would raise TargetUnreachable instead
    with pytest.raises(CapabilityError):
        run_redis_bench(
            RedisBenchSettings(requests=10, clients=1),
            engine,
            {"postgres.url": "postgresql://x@127.0.0.1:1/x", "mysql.url": "mysql://x@127.0.0.1:1/x"},
        )


def test_bad_numbers_name_their_setting() -> None:
    with pytest.raises(SpecError) as err:
        run_phase(
            PhaseConfig(
                workload="redis-bench", phase="run", engine="null", properties={"redisbench.pipeline": "0"}
            )
        )
    assert err.value.field == "redisbench.pipeline"


def test_several_tests_in_one_phase_are_noted_with_their_active_rates() -> None:
    doc = run_phase(
        PhaseConfig(
            workload="redis-bench",
            phase="run",
            engine="null",
            properties={"redisbench.tests": "set,get", "redisbench.requests": "100"},
            threads=2,
            processes=1,
        )
    )
    assert set(doc.extra["requests_per_second_active"]) == {"SET", "GET"}
    active = doc.extra["requests_per_second_active"]
    # a sub-second phase on the null driver: each test was active in at least one interval
    assert all(rate > 0 for rate in active.values())
    assert [f.severity for f in doc.validity if f.code == "tests_share_a_phase"] == ["info"]


def test_ping_inline_goes_out_inline_as_redis_benchmark_sends_it() -> None:
    made = resp_factory("ping_inline", b"v", KeySource(0, random.Random(1)), repeat=3)
    assert made() == b"PING\r\n" * 3
    assert resp_factory("ping_mbulk", b"v", KeySource(0, random.Random(1)))() == b"*1\r\n$4\r\nPING\r\n"


def test_tests_run_in_redis_benchmark_s_order_and_groups_expand() -> None:
    assert parse_tests("get,set,ping") == ["ping_inline", "ping_mbulk", "set", "get"]
    assert parse_tests("xadd,lrange") == ["lrange_100", "lrange_300", "lrange_500", "lrange_600", "xadd"]
