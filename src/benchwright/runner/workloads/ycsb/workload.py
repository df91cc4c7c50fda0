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
from benchwright.runner.drivers.base import Capability, Driver, KeyValueDriver
from benchwright.runner.event_loop import Request
from benchwright.runner.workloads.base import Operation, ThreadInfo, Workload, register, split
from benchwright.runner.workloads.ycsb import generators as g
from benchwright.runner.workloads.ycsb.properties import (
    MAX_RECORD_BYTES,
    CoreSettings,
    core_settings,
    unknown_keys,
)

VALUE_POOL = MAX_RECORD_BYTES  # random printable characters values are sliced from
KEY_CACHE = 1 << 16  # hashed keys remembered per process (see key_function)


@register
class YcsbWorkload(Workload):
    name = "ycsb"
    requires = Capability.KEY_VALUE
    description = "YCSB core workloads A-F (and any property file): key-value CRUD with YCSB's distributions"

    def __init__(self, properties: Mapping[str, str]) -> None:
        super().__init__(properties)
        self.settings: CoreSettings = core_settings(self.properties)
        self._key_cache: dict[int, str] = {}
        self.warnings = [f"unknown property {k!r} is ignored" for k in unknown_keys(self.properties)]

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

    def _values(self, rng: random.Random) -> Iterator[dict[str, str]]:
        """Endless record values: random printable text sliced from a pool at random offsets."""
        s = self.settings
        pool = "".join(rng.choices(string.ascii_letters + string.digits + string.punctuation, k=VALUE_POOL))
        pool += pool[: s.fieldlength * s.fieldcount]
        names = self.field_names()
        lengths = g.LengthGenerator(rng, s.fieldlengthdistribution, s.minfieldlength, s.fieldlength)
        constant = s.fieldlengthdistribution == "constant"
        randbelow = rng.randrange
        while True:
            offset = randbelow(VALUE_POOL)
            if constant:
                n = s.fieldlength
                yield {name: pool[offset + i * n : offset + (i + 1) * n] for i, name in enumerate(names)}
            else:
                values = {}
                for name in names:
                    n = lengths.next()
                    values[name] = pool[offset : offset + n]
                    offset = (offset + n) % VALUE_POOL
                yield values

    def _load(self, make: Any, thread: ThreadInfo, rng: random.Random) -> Iterator[Any]:
        """``make`` builds each operation: ``_Calls`` (threads) or a driver's ``KeyValueWire``."""
        s = self.settings
        mine = split(s.insertcount, thread.count, thread.index)
        first = s.insertstart + sum(split(s.insertcount, thread.count, t) for t in range(thread.index))
        values = self._values(rng)
        insert = make.insert
        key = self.key_function()
        table = s.table
        for number in range(first, first + mine):
            yield insert(table, key(number), next(values))

    def _run(self, make: Any, thread: ThreadInfo, rng: random.Random) -> Iterator[Any]:  # pylint: disable=too-many-locals  # hot loop: locals on purpose
        s = self.settings
        table = s.table
        names = self.field_names()
        values = self._values(rng)
        ops = g.DiscreteChooser(
            rng,
            [
                ("READ", s.readproportion),
                ("UPDATE", s.updateproportion),
                ("INSERT", s.insertproportion),
                ("SCAN", s.scanproportion),
                ("READ-MODIFY-WRITE", s.readmodifywriteproportion),
            ],
        )
        low = s.insertstart
        high = s.insertstart + s.insertcount - 1
        recordcount = s.recordcount
        newest = recordcount - 1  # newest record number this thread knows exists
        thread_index, thread_count = thread.index, thread.count
        next_insert = recordcount + thread_index
        chooser = self._key_chooser(rng, low, high, newest)
        draw = chooser.next
        key = self.key_function()
        scan_lengths = g.LengthGenerator(rng, s.scanlengthdistribution, s.minscanlength, s.maxscanlength)
        read_fields = None if s.readallfields else names
        choose_field = rng.choice
        read, update, insert, scan = make.read, make.update, make.insert, make.scan
        read_modify_write = make.read_modify_write
        exponential = s.requestdistribution == "exponential"
        latest = exponential or s.requestdistribution == "latest"
        write_values = _value_writer(values, s.writeallfields, choose_field, names)
        read_one_field = _field_chooser(read_fields, choose_field, names)

        def next_key() -> str:
            if latest:
                number = newest - draw() if exponential else draw()
                if number < low:
                    number = low
            else:
                number = draw()
                if number > newest:
                    for _ in range(100):  # not inserted yet: draw again, as YCSB does
                        number = draw()
                        if number <= newest:
                            break
                    else:
                        number %= newest + 1
            if number >= recordcount:  # a run-phase insert: keep to this thread's own, already inserted ones
                number -= (number - recordcount - thread_index) % thread_count
                if number < recordcount:
                    number = min(high, recordcount - 1)
            return key(number)

        next_op = ops.next
        while True:
            op = next_op()
            if op == "READ":
                yield read(table, next_key(), None if read_fields is None else [choose_field(names)])
            elif op == "UPDATE":
                yield update(table, next_key(), write_values())
            elif op == "INSERT":
                yield insert(table, key(next_insert), next(values))
                newest = max(newest, next_insert)
                next_insert += thread_count
                if isinstance(chooser, g.SkewedLatestGenerator):
                    chooser.advance(newest)
            elif op == "SCAN":
                yield scan(table, next_key(), scan_lengths.next(), read_one_field())
            else:
                rmw_key = next_key()
                yield read_modify_write(table, rmw_key, read_one_field(), write_values())

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


def _value_writer(
    values: Iterator[dict[str, str]],
    writeallfields: bool,
    choose_field: Callable[[list[str]], str],
    names: list[str],
) -> Callable[[], dict[str, str]]:
    """The values of an update or read-modify-write: the whole next record (``writeallfields``) or
    one field of it chosen at random. Chosen once per thread, so the per-operation call tests
    nothing."""
    if writeallfields:
        return values.__next__

    def one_field() -> dict[str, str]:
        record = next(values)
        name = choose_field(names)
        return {name: record[name]}

    return one_field


def _field_chooser(
    read_fields: list[str] | None, choose_field: Callable[[list[str]], str], names: list[str]
) -> Callable[[], list[str] | None]:
    """The fields a scan or read-modify-write reads: all (None, ``readallfields``) or one at random."""
    if read_fields is None:
        return lambda: None
    return lambda: [choose_field(names)]


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
