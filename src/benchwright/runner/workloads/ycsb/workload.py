"""YCSB's core workload: the load phase inserts records, the run phase mixes read / update / insert /
scan / read-modify-write with the configured key distribution.

Keys are formed as YCSB forms them (``user`` + FNV-1 64-bit hash of the record number, or the
zero-padded number with ``insertorder=ordered``), so a dataset loaded by YCSB and one loaded here
hold the same keys and results are comparable.

Across processes there is no shared insert counter: each thread inserts its own slice of new record
numbers (``recordcount + thread + k * threads``) and the 'latest' and 'exponential' choosers advance
from the newest number this thread knows to exist, which keeps every read on an inserted key.
"""

from __future__ import annotations

import random
import string
from collections.abc import Callable, Iterator, Mapping
from functools import partial
from typing import Any

from benchwright.errors import SchemaMissing, SpecError
from benchwright.runner import compiled
from benchwright.runner.dataset import DatasetIdentity
from benchwright.runner.drivers.base import Capability, Driver, KeyValueDriver
from benchwright.runner.event_loop import Request
from benchwright.runner.workloads.base import Operation, ThreadInfo, Workload, register, requests_of, split
from benchwright.runner.workloads.ycsb import dataset as ycsb_dataset
from benchwright.runner.workloads.ycsb import generators as g
from benchwright.runner.workloads.ycsb.descriptor import DESCRIPTOR
from benchwright.runner.workloads.ycsb.properties import (
    MAX_RECORD_BYTES,
    CoreSettings,
    core_settings,
    unknown_key_warning,
    unknown_keys,
)
from benchwright.runner.workloads.ycsb.stream import RunStream, Values

VALUE_POOL = MAX_RECORD_BYTES  # random printable characters values are sliced from
KEY_CACHE = 1 << 16  # hashed keys remembered per process (see key_function)


@register
class YcsbWorkload(Workload):
    name = "ycsb"
    descriptor = DESCRIPTOR
    requires = Capability.KEY_VALUE
    description = "YCSB core workloads A-F (and any property file): key-value CRUD with YCSB's distributions"

    def __init__(self, properties: Mapping[str, str]) -> None:
        super().__init__(properties)
        self.settings: CoreSettings = core_settings(self.properties)
        self._key_cache: dict[int, str] = {}
        self.warnings = [unknown_key_warning(k) for k in unknown_keys(self.properties)]

    @classmethod
    def validate_properties(cls, properties: Mapping[str, str]) -> list[str]:
        """Raise SpecError for a bad value; return warnings (unknown keys) for the caller to show."""
        return cls(properties).warnings

    # -------------------------------------------------------------- phase bounds
    def operation_limit(self, phase: str) -> int | None:
        return None if phase == "load" else self.settings.operationcount

    def time_limit(self, phase: str) -> float | None:
        return self.settings.maxexecutiontime

    # -------------------------------------------------------------- keys and values
    def key(self, number: int) -> str:
        return self.key_function()(number)

    def warm_up(self) -> None:
        """Hashed keys need FNV's 65,536-entry table (about 0.1 s to build): built before the start."""
        if not self.settings.ordered_inserts:
            g.fnv_hash64(0)

    def key_function(self) -> Callable[[int], str]:
        """``key`` as a plain function with the settings bound (it runs once per operation).

        Hashed keys are remembered, up to ``KEY_CACHE`` of them per process: a skewed distribution
        draws its popular records again and again, and forming a key (a 64-bit FNV hash in Python)
        costs more than a dictionary lookup. The cache is bounded (about 7 MB), whatever the
        record count."""
        pad = self.settings.zeropadding
        if self.settings.ordered_inserts:
            return lambda number: "user" + str(number).zfill(pad)
        fnv = g.fnv_hash64
        cache = self._key_cache
        get = cache.get

        def key(number: int) -> str:
            text = get(number)
            if text is None:
                text = "user" + str(fnv(number)).zfill(pad) if pad > 1 else "user" + str(fnv(number))
                if len(cache) < KEY_CACHE:
                    cache[number] = text
            return text

        return key

    def field_names(self) -> list[str]:
        return [f"{self.settings.fieldnameprefix}{i}" for i in range(self.settings.fieldcount)]

    # -------------------------------------------------------------- hooks
    def setup(self, driver: Driver, phase: str) -> None:
        assert isinstance(driver, KeyValueDriver)
        s = self.settings
        datatype = getattr(driver, "datatype", None)
        if s.scanproportion > 0 and datatype in ("list", "set", "zset"):
            raise SpecError(
                "scanproportion",
                f"scans are not possible with redis.datatype={datatype} (use hash or string)",
            )
        if phase == "load":
            driver.create_table(s.table, s.fieldcount)
        elif not _has_table(driver, s.table) or driver.count(s.table) == 0:
            raise SchemaMissing(f"table {s.table!r} is missing or empty: run the load phase first")

    def finish(self, driver: Driver, phase: str, result: Any) -> None:
        assert isinstance(driver, KeyValueDriver)
        for warning in self.warnings:
            result.flag("unknown_property", "info", warning)
        if phase == "load":
            records = driver.count(self.settings.table)
            result.extra["records_after_load"] = records
            inserted = result.operations.get("INSERT")
            ok = inserted.statuses.get("OK", 0) if inserted else 0
            if ok < self.settings.insertcount:
                result.flag(
                    "incomplete_load",
                    "invalid",
                    f"{ok} of {self.settings.insertcount} inserts succeeded; {records} records in {self.settings.table}",
                )

    # -------------------------------------------------------------- the dataset
    def dataset(self, engine: str, phase: str) -> DatasetIdentity | None:
        return ycsb_dataset.identity(self.settings, self.properties, engine)

    def sample_problems(self, driver: Driver, identity: DatasetIdentity) -> list[str]:
        datatype = identity.shape.get("datatype")
        key = self.key(self.settings.insertstart)
        return ycsb_dataset.sample_problems(self.settings, driver, key, datatype)

    # -------------------------------------------------------------- the operations
    def operations(self, phase: str, driver: Driver, thread: ThreadInfo) -> Iterator[Operation]:
        assert isinstance(driver, KeyValueDriver)
        rng = random.Random(thread.seed)
        calls = _Calls(driver)
        if phase == "load":
            return self._load(calls, thread, rng)
        return self._run(calls, thread, rng)

    def wire_requests(self, phase: str, driver: Driver, thread: ThreadInfo) -> Iterator[Request] | None:
        """The same operations, from the same random draws, as event-loop requests."""
        wire = driver.kv_wire() if isinstance(driver, KeyValueDriver) else None
        if wire is None:
            return None
        rng = random.Random(thread.seed)
        if phase == "load":
            return self._load(wire, thread, rng)
        return self._run(wire, thread, rng)

    def _values(self, rng: random.Random) -> Values:
        """Record values: random printable text sliced from a pool at random offsets."""
        alphabet = string.ascii_letters + string.digits + string.punctuation
        return Values(
            rng,
            self.settings,
            self.field_names(),
            VALUE_POOL,
            lambda: "".join(rng.choices(alphabet, k=VALUE_POOL)),
        )

    def key_block(self) -> Callable[[list[int]], list[str]]:
        """``key_function`` over a list of record numbers (a block of operations): a remembered key
        costs a dictionary lookup inside the comprehension, not a Python call."""
        key = self.key_function()
        if self.settings.ordered_inserts:
            return lambda numbers: [key(number) for number in numbers]
        hashed, pad = compiled.ycsb_keys(), self.settings.zeropadding
        if hashed is not None and pad <= 64:  # in C: no cache to miss (_fastloop.ycsb_keys)
            return lambda numbers: hashed(numbers, pad)
        get = self._key_cache.get
        return lambda numbers: [get(number) or key(number) for number in numbers]

    def _load(self, make: Any, thread: ThreadInfo, rng: random.Random) -> Iterator[Any]:
        """``make`` builds each operation: ``_Calls`` (threads) or a driver's ``KeyValueWire``."""
        s = self.settings
        mine = split(s.insertcount, thread.count, thread.index)
        first = s.insertstart + sum(split(s.insertcount, thread.count, t) for t in range(thread.index))
        record = self._values(rng).record
        insert = make.insert
        key = self.key_function()
        table = s.table
        for number in range(first, first + mine):
            yield insert(table, key(number), record())

    def _run(self, make: Any, thread: ThreadInfo, rng: random.Random) -> Iterator[Any]:
        """The run phase's endless operations, drawn in blocks (``stream.RunStream``)."""
        s = self.settings
        values = self._values(rng)
        chooser = self._key_chooser(rng, s.insertstart, s.insertstart + s.insertcount - 1, s.recordcount - 1)
        stream = RunStream(s, make, thread.index, thread.count, rng, chooser, self.key_block(), values)
        return requests_of(stream.blocks(), thread)

    def _key_chooser(self, rng: random.Random, low: int, high: int, newest: int) -> Any:
        s = self.settings
        d = s.requestdistribution
        if d == "uniform":
            return g.UniformGenerator(rng, low, high)
        if d == "zipfian":
            # Leave room for the keys this run will insert, as YCSB does (twice the expected count).
            expected_new = int(s.operationcount * s.insertproportion * 2)
            return g.ScrambledZipfianGenerator(rng, low, high + expected_new, s.zipfianconstant)
        if d == "latest":
            return g.SkewedLatestGenerator(rng, newest, s.zipfianconstant)
        if d == "hotspot":
            return g.HotspotGenerator(rng, low, high, s.hotspotdatafraction, s.hotspotopnfraction)
        if d == "sequential":
            return g.SequentialGenerator(low, high)
        return g.ExponentialGenerator(rng, s.exponential_percentile, s.recordcount * s.exponential_frac)


class _Calls:
    """The thread model's operations: the driver calls the engine times, bound to their arguments."""

    def __init__(self, driver: KeyValueDriver) -> None:
        self.driver = driver

    def read(self, table: str, key: str, fields: list[str] | None) -> Operation:
        return "READ", partial(self.driver.read, table, key, fields)

    def scan(self, table: str, key: str, count: int, fields: list[str] | None) -> Operation:
        return "SCAN", partial(self.driver.scan, table, key, count, fields)

    def update(self, table: str, key: str, values: dict[str, str]) -> Operation:
        return "UPDATE", partial(self.driver.update, table, key, values)

    def insert(self, table: str, key: str, values: dict[str, str]) -> Operation:
        return "INSERT", partial(self.driver.insert, table, key, values)

    def read_modify_write(
        self, table: str, key: str, fields: list[str] | None, values: dict[str, str]
    ) -> Operation:
        d = self.driver
        return "READ-MODIFY-WRITE", partial(_read_modify_write, d.read, d.update, table, key, fields, values)


def _read_modify_write(
    read: Any, update: Any, table: str, key: str, fields: Any, values: dict[str, str]
) -> Any:
    status = read(table, key, fields)
    if status.name != "OK":
        return status
    return update(table, key, values)


def _has_table(driver: KeyValueDriver, table: str) -> bool:
    try:
        return driver.table_exists(table) if hasattr(driver, "table_exists") else True
    except NotImplementedError:
        return True
