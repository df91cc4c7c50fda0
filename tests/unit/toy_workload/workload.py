"""The toy ``kv-scan`` workload: a load of ``kvscan.keys_loaded`` keys, then scans of
``kvscan.length`` keys from a random start (a latency probe of range reads)."""

from __future__ import annotations

import random
from collections.abc import Iterator
from functools import partial
from typing import ClassVar

from benchwright.runner.drivers.base import Capability, Driver
from benchwright.runner.workloads.base import Operation, ThreadInfo, Workload, split
from tests.unit.toy_workload.descriptor import DESCRIPTOR, KEY_BYTES

TABLE = "kvscan"


class KvScanWorkload(Workload):
    name: ClassVar[str] = "kv-scan"
    descriptor = DESCRIPTOR
    requires: ClassVar[Capability] = Capability.KEY_VALUE
    description: ClassVar[str] = "toy: load keys, then scan ranges of them"

    def __init__(self, properties: dict[str, str]) -> None:
        super().__init__(properties)
        self.keys = int(self.properties.get("kvscan.keys_loaded", "1000"))
        self.length = int(self.properties.get("kvscan.length", "10"))

    def setup(self, driver: Driver, phase: str) -> None:
        driver.create_table(TABLE, 1, drop=phase == "load")

    def operations(self, phase: str, driver: Driver, thread: ThreadInfo) -> Iterator[Operation]:
        if phase == "load":
            first = sum(split(self.keys, thread.count, i) for i in range(thread.index))
            for k in range(first, first + split(self.keys, thread.count, thread.index)):
                yield "INSERT", partial(driver.insert, TABLE, f"k{k}", {"v": "x" * KEY_BYTES})
            return
        rng = random.Random(thread.seed)
        while True:
            yield "SCAN", partial(driver.scan, TABLE, f"k{rng.randrange(self.keys)}", self.length, None)

    def operation_limit(self, phase: str) -> int | None:
        return self.keys if phase == "load" else None
