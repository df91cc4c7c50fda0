"""redis-benchmark's semantics as a Benchwright workload ("redis-bench").

Settings (properties; the CLI maps redis-benchmark's flags onto them):
  redisbench.tests     -t  comma list, run one after another per client in redis-benchmark's order
                           (default set,get)
  redisbench.datasize  -d  value size in bytes (default 3, as redis-benchmark)
  redisbench.keyspace  -r  random keys key:000000000042 in [0, N); 0 = the literal key:__rand_int__
  redisbench.requests  -n  requests per test (default 100000)
  redisbench.pipeline  -P  commands per pipeline (default 1)
Clients (-c) are the phase's threads.

One yielded operation is one pipeline of P commands. redis-benchmark records every request of a
pipeline with the pipeline's round-trip time; so do we: after the phase the per-pipeline figures are
re-expressed per request (counts x P, each histogram value weighted P times), which leaves the
latency distribution unchanged and makes counts and rates per request. Requests are issued in whole
pipelines, so a test runs ceil(n / P) x P requests (n rounded up to a multiple of P).
"""

from __future__ import annotations

import functools
import random
from collections.abc import Callable, Iterator
from functools import partial
from typing import Any, ClassVar

from benchwright.errors import CapabilityError, SpecError
from benchwright.results import ResultDocument
from benchwright.runner import compiled
from benchwright.runner.dataset import DatasetIdentity
from benchwright.runner.drivers.base import Capability, Driver, RedisCommandsDriver
from benchwright.runner.event_loop import Request
from benchwright.runner.measure import Status, decode_histogram, encode_histogram, new_histogram
from benchwright.runner.workloads.base import BLOCK, Operation, ThreadInfo, Workload, register, requests_of
from benchwright.runner.workloads.redisbench.buckets import latency_buckets
from benchwright.runner.workloads.redisbench.commands import (
    DIGIT_TABLE_MAX,
    GROUPS,
    LIST_KEY,
    LRANGE_FILL,
    TESTS,
    KeySource,
    digit_table,
    operation_name,
    resp_blocks,
)
from benchwright.runner.workloads.redisbench.descriptor import DESCRIPTOR

SCALED_MARK = "requests_per_operation"
METHOD_NOTE = (
    "redis-bench: one timed operation is one pipeline of P commands; every request is recorded with its "
    "pipeline's round-trip latency, as redis-benchmark does, so counts and rates are per request"
)


def parse_tests(text: str) -> list[str]:
    """``set,GET, lrange_100`` -> ["set", "get", "lrange_100"] (``ping`` and ``lrange`` stand for
    their tests, as in redis-benchmark), in redis-benchmark's order (``TESTS``); unknown names are a
    SpecError."""
    tests: list[str] = []
    for raw in text.split(","):
        name = raw.strip().lower()
        if not name:
            continue
        if name not in TESTS and name not in GROUPS:
            raise SpecError(
                "redisbench.tests", f"unknown test {name!r} (one of {', '.join([*TESTS, *GROUPS])})"
            )
        tests += [test for test in GROUPS.get(name, (name,)) if test not in tests]
    if not tests:
        raise SpecError("redisbench.tests", "no test given")
    return sorted(tests, key=TESTS.index)  # redis-benchmark's own order, whatever -t's


MAX_PIPELINE = 10_000  # commands per pipeline


def _int_setting(
    props: dict[str, str], key: str, default: int, minimum: int, maximum: int | None = None
) -> int:
    raw = props.get(key, str(default))
    try:
        value = int(raw)
    except ValueError:
        raise SpecError(key, f"expected an integer, got {raw[:40]!r}") from None
    if value < minimum:
        raise SpecError(key, f"must be >= {minimum}, got {value}")
    if maximum is not None and value > maximum:
        raise SpecError(key, f"must be <= {maximum:,}, got {value:,}")
    return value


def _share(total: int, parts: int, index: int) -> int:
    return total // parts + (1 if index < total % parts else 0)


def _send(send: Callable[[bytes, int], Any], data: bytes, count: int) -> Status:
    send(data, count)  # a server error is raised, and the engine counts it
    return Status.OK


MAX_DATASIZE = 512 * 1024 * 1024  # Redis' default proto-max-bulk-len


@register
class RedisBench(Workload):
    name: ClassVar[str] = "redis-bench"
    descriptor = DESCRIPTOR
    requires: ClassVar[Capability] = Capability.REDIS
    phases: ClassVar[tuple[str, ...]] = ("run",)
    # a written load phase runs its own tests (phase properties: redisbench.tests: set), as the
    # article ran `-t set` to fill the keyspace and then `-t get` over it
    optional_phases: ClassVar[tuple[str, ...]] = ("load",)
    dataset_in_run: ClassVar[bool] = True  # without a load phase, the run writes the keys
    description: ClassVar[str] = "redis-benchmark's tests (SET, GET, INCR, LPUSH ...) with -d/-r/-n/-P"

    def __init__(self, properties: dict[str, str]) -> None:
        super().__init__(properties)
        props = self.properties
        self.tests = parse_tests(props.get("redisbench.tests", "set,get"))
        self.datasize = _int_setting(props, "redisbench.datasize", 3, 1)
        self.keyspace = _int_setting(props, "redisbench.keyspace", 0, 0)
        self.requests = _int_setting(props, "redisbench.requests", 100_000, 1)
        # a pipeline is built in memory before it is sent: bounded (redis-benchmark's -P is in the tens)
        self.pipeline = _int_setting(props, "redisbench.pipeline", 1, 1, MAX_PIPELINE)
        if self.datasize > MAX_DATASIZE:
            raise SpecError(
                "redisbench.datasize",
                f"{self.datasize:,} bytes exceeds {MAX_DATASIZE:,}, Redis' largest value (proto-max-bulk-len)",
            )
        self._server_run_id: str | None = None

    @functools.cached_property
    def value(self) -> bytes:
        """The SET value, made when the run needs it (validation builds the workload too)."""
        return b"x" * self.datasize

    @property
    def pipelines_per_test(self) -> int:
        return -(-self.requests // self.pipeline)

    def dataset(self, engine: str, phase: str) -> DatasetIdentity:
        """redis-benchmark's keys: how many random keys (-r) and the value size (-d) they hold."""
        shape = {
            "keyspace": self.keyspace,
            "datasize": self.datasize,
            "redis_db": self.properties.get("redis.db", "0"),
        }
        return DatasetIdentity("redis-bench", ("redis-bench keys",), {}, shape)

    def setup(self, driver: Driver, phase: str) -> None:
        if not isinstance(driver, RedisCommandsDriver):
            raise CapabilityError(
                "engine", f"workload 'redis-bench' needs redis commands; {driver.engine!r} has none"
            )
        self._server_run_id = _server_run_id(driver)
        if any(t.startswith("lrange") for t in self.tests):  # 600 elements: enough for LRANGE_600
            # redis-benchmark fills the list with an LPUSH pass before LRANGE; ours is untimed.
            driver.command(b"DEL", LIST_KEY)
            for start in range(0, LRANGE_FILL, 100):
                driver.pipeline([(b"LPUSH", LIST_KEY, self.value)] * min(100, LRANGE_FILL - start))

    def operations(self, phase: str, driver: Driver, thread: ThreadInfo) -> Iterator[Operation]:
        assert isinstance(driver, RedisCommandsDriver)
        send = driver.send_encoded
        return ((name, partial(_send, send, data, count)) for name, data, count, _ in self._requests(thread))

    def wire_requests(self, phase: str, driver: Driver, thread: ThreadInfo) -> Iterator[Request] | None:
        return self._requests(thread) if isinstance(driver, RedisCommandsDriver) else None

    def _requests(self, thread: ThreadInfo) -> Iterator[Request]:
        """One pipeline of P commands per request, in RESP, each test's share for this client. Where
        the keys are made in Python (the compiled part off), their digit table is made now, when the
        worker prepares its clients, not by the first request inside the measured window."""
        if 0 < self.keyspace <= DIGIT_TABLE_MAX and compiled.key_pipelines() is None:
            digit_table(self.keyspace)
        return requests_of(self._request_blocks(thread), thread)

    def _request_blocks(self, thread: ThreadInfo) -> Iterator[list[Request]]:
        """The requests, ``BLOCK`` at a time (one comprehension each: no Python call per request)."""
        keys = KeySource(self.keyspace, random.Random(thread.seed))
        mine = _share(self.pipelines_per_test, thread.count, thread.index)
        size = self.pipeline
        for test in self.tests:
            make = resp_blocks(test, self.value, keys, repeat=size)
            name = operation_name(test)
            for first in range(0, mine, BLOCK):
                yield [(name, payload, size, None) for payload in make(min(BLOCK, mine - first))]

    def finish(self, driver: Driver, phase: str, result: Any) -> None:
        doc: ResultDocument = result
        per_request(doc, self.pipeline)
        if isinstance(driver, RedisCommandsDriver):
            after = _server_run_id(driver)
            if self._server_run_id and after and after != self._server_run_id:
                doc.flag(
                    "server_restarted",
                    "invalid",
                    "the Redis server restarted during the run (its run_id changed): its data and caches "
                    "were lost mid-measurement",
                )
        if len(self.tests) > 1:
            # One phase, several tests: clients move from test to test on their own, so a test's
            # rate over the whole phase understates it. Add the rate over the intervals it was active in.
            doc.extra["requests_per_second_active"] = active_rates(doc)
            doc.flag(
                "tests_share_a_phase",
                "info",
                "the tests ran in one phase without a barrier between them: per-test requests/s over the "
                "phase understate each test (see extra.requests_per_second_active, 1-interval resolution); "
                "`benchwright redis-bench` runs each test as its own phase",
            )
        doc.extra["redis_bench"] = {
            "tests": [operation_name(t) for t in self.tests],
            "datasize": self.datasize,
            "keyspace": self.keyspace,
            "requests_per_test": self.pipelines_per_test * self.pipeline,
            "pipeline": self.pipeline,
        }


def _server_run_id(driver: RedisCommandsDriver) -> str | None:
    """The server's run_id from INFO (changes on every restart); None if it cannot be read."""
    try:
        info = driver.command(b"INFO", b"server")
    except Exception:
        return None
    if isinstance(info, dict):
        value = info.get("run_id") or info.get(b"run_id")
        return value.decode() if isinstance(value, bytes) else (str(value) if value else None)
    text = info.decode(errors="replace") if isinstance(info, bytes) else str(info)
    for line in text.splitlines():
        if line.startswith("run_id:"):
            return line.split(":", 1)[1].strip()
    return None


def per_request(doc: ResultDocument, pipeline: int) -> None:
    """Re-express a per-pipeline document per request (idempotent) and add rates and buckets."""
    if pipeline > 1 and SCALED_MARK not in doc.extra:
        for summary in doc.operations.values():
            summary.operations *= pipeline
            summary.statuses = {k: n * pipeline for k, n in summary.statuses.items()}
            summary.throughput *= pipeline
            if summary.histogram:
                summary.histogram = _weighted(summary.histogram, pipeline)
        for sample in doc.intervals:
            sample.operations = {k: n * pipeline for k, n in sample.operations.items()}
            sample.errors *= pipeline
            sample.throughput *= pipeline
        doc.operations_total *= pipeline
        doc.failed_total *= pipeline
        doc.throughput *= pipeline
        doc.client.cpu_us_per_op = round(doc.client.cpu_us_per_op / pipeline, 3)
    doc.extra[SCALED_MARK] = pipeline
    if METHOD_NOTE not in doc.measurement.method:
        doc.measurement.method = f"{doc.measurement.method}; {METHOD_NOTE} (P={pipeline})"
    doc.extra["requests_per_second"] = {name: round(s.throughput, 2) for name, s in doc.succeeded().items()}
    doc.extra["latency_buckets"] = latency_buckets(doc)


def active_rates(doc: ResultDocument) -> dict[str, float]:
    """Requests per second of each operation over the intervals in which it ran (first to last)."""
    out: dict[str, float] = {}
    width = doc.measurement.interval_s
    for name, summary in doc.operations.items():
        times = [s.t for s in doc.intervals if s.operations.get(name)]
        if times:
            span = min(times[-1], doc.runtime_ms / 1000) - (times[0] - width)
            out[name] = round(summary.operations / span, 2) if span > 0 else 0.0
    return out


def _weighted(encoded: str, weight: int) -> str:
    source = decode_histogram(encoded)
    out = new_histogram()
    for item in source.get_recorded_iterator():
        out.record_value(item.value_iterated_to, item.count_at_value_iterated_to * weight)
    return encode_histogram(out)
