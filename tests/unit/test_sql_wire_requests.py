"""The event loop's SQL requests are the threads' statements: OLTP and TPC-B draw their event-loop
requests in blocks (``workloads.base.BLOCK``), and a block must change when a request is drawn,
never what it is or in which order it comes."""

from __future__ import annotations

import random
from collections.abc import Sequence
from itertools import islice
from typing import Any

import pytest

from benchwright.runner.drivers.null import NullDriver
from benchwright.runner.workloads.base import BLOCK, ThreadInfo, Workload
from benchwright.runner.workloads.oltp.workload import OltpWorkload
from benchwright.runner.workloads.tpcb.workload import TpcbWorkload

Statement = tuple[str, tuple[Any, ...]]


class StatementWire:
    """A wire whose requests are the statements they would send, in order."""

    def statement(self, name: str, sql: str, params: tuple[Any, ...]) -> list[Statement]:
        return [(sql, tuple(params))]

    def int_statements(self, name: str, sql: str, values: list[int]) -> list[list[Statement]]:
        return [[(sql, (v,))] for v in values]

    def transaction(self, name: str, statements: list[Statement], **options: Any) -> list[Statement]:
        return [(sql, tuple(params)) for sql, params in statements]


class RecordingDriver(NullDriver):
    """The null driver, keeping each statement the threads' operations send."""

    def __init__(self) -> None:
        super().__init__({})
        self.sent: list[Statement] = []

    def execute(self, sql: str, params: Sequence[Any] = ()) -> int:
        self.sent.append((sql, tuple(params)))
        return 1

    def fetch_count(self, sql: str, params: Sequence[Any] = ()) -> int:
        self.sent.append((sql, tuple(params)))
        return 1

    def sql_wire(self) -> Any:
        return StatementWire()


REQUESTS = 3 * BLOCK + 5  # across block boundaries, ending inside a block


@pytest.mark.parametrize(
    "workload",
    [
        OltpWorkload({"oltp.test": "point_select", "oltp.table_size": "1000"}),
        OltpWorkload({"oltp.test": "point_select", "oltp.tables": "3", "oltp.rand_type": "special"}),
        OltpWorkload({"oltp.test": "read_write", "oltp.tables": "2", "oltp.table_size": "500"}),
        TpcbWorkload({"tpcb.scale": "2", "tpcb.script": "select-only"}),
        TpcbWorkload({"tpcb.scale": "2", "tpcb.script": "tpcb-like"}),
        TpcbWorkload({"tpcb.scale": "2", "tpcb.script": "simple-update"}),
    ],
    ids=[
        "oltp-point-1-table",
        "oltp-point-3-tables",
        "oltp-read-write",
        "select-only",
        "tpcb-like",
        "simple-update",
    ],
)
def test_event_loop_requests_are_the_threads_statements_in_their_order(workload: Workload) -> None:
    thread = ThreadInfo(index=1, count=4, seed=random.Random(11).randrange(1 << 30))
    requests = workload.wire_requests("run", RecordingDriver(), thread)
    assert requests is not None
    on_the_loop = [statement for request in islice(requests, REQUESTS) for statement in request]

    driver = RecordingDriver()
    for _, call in islice(workload.operations("run", driver, thread), REQUESTS):
        call()
    assert len(on_the_loop) >= REQUESTS
    assert driver.sent == on_the_loop
    assert len({params for _, params in on_the_loop}) > 20  # drawn, not one request repeated


def test_a_block_of_int_statements_is_the_statements_one_at_a_time_on_both_wires() -> None:
    from benchwright.runner.drivers.postgres_wire import PostgresSqlWire
    from benchwright.runner.event_loop_my import MySqlWire

    sql = "SELECT c FROM sbtest1 WHERE id = %s"
    values = [1, 0, 99_999, 12_345_678_901, -3]
    for wire in (PostgresSqlWire(), MySqlWire(driver=None)):
        assert wire.int_statements("oltp_point_select", sql, values) == [
            wire.statement("oltp_point_select", sql, (v,)) for v in values
        ]
    assert PostgresSqlWire().int_statements("q", sql, [7]) == [
        ("q", (b"SELECT c FROM sbtest1 WHERE id = $1", [b"7"]), 1, None)
    ]
    assert MySqlWire(driver=None).int_statements("q", sql, [7]) == [
        ("q", b"SELECT c FROM sbtest1 WHERE id = 7", 1, None)
    ]


def test_select_only_draws_every_account_of_the_scale_and_no_other() -> None:
    workload = TpcbWorkload({"tpcb.scale": "1", "tpcb.script": "select-only"})
    driver = RecordingDriver()
    for _, call in islice(workload.operations("run", driver, ThreadInfo(index=0, count=1, seed=5)), 400_000):
        call()
    aids = [params[0] for _, params in driver.sent]
    assert min(aids) == 1 and max(aids) == 100_000
    assert len(set(aids)) > 98_000  # 400k uniform draws over 100k accounts miss about 1.8%
