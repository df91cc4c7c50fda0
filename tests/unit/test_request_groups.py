"""A client alone in its worker process makes its blocks of requests ``GROUP`` at a time
(``workloads.base.requests_of``): the requests and their order stay the same, only when they are
made changes; a client sharing its process keeps one block at a time (a short pause each)."""

from __future__ import annotations

import random
from collections.abc import Iterator
from itertools import islice
from typing import Any

import pytest

from benchwright.runner.engine.client_model import _event_loop_connections, alone_in_process
from benchwright.runner.plan import PhaseConfig
from benchwright.runner.workloads.base import BLOCK, GROUP, ThreadInfo, requests_of
from benchwright.runner.workloads.ycsb.workload import YcsbWorkload


class Blocks:
    """Numbered blocks of BLOCK requests, counting how many have been made."""

    def __init__(self, count: int | None = None) -> None:
        self.made = 0
        self.count = count

    def __iter__(self) -> Iterator[list[int]]:
        while self.count is None or self.made < self.count:
            first = self.made * BLOCK
            self.made += 1
            yield list(range(first, first + BLOCK))


@pytest.mark.parametrize("alone", [True, False])
def test_the_requests_and_their_order_are_the_blocks_whether_grouped_or_not(alone: bool) -> None:
    made = list(islice(requests_of(iter(Blocks()), ThreadInfo(0, 1, 1, alone=alone)), 5 * GROUP * BLOCK + 3))
    assert made == list(range(5 * GROUP * BLOCK + 3))


def test_alone_a_client_makes_group_blocks_at_once_and_sharing_one_at_a_time() -> None:
    for alone, made_after_first in ((True, GROUP), (False, 1)):
        blocks = Blocks()
        requests = requests_of(iter(blocks), ThreadInfo(0, 2, 1, alone=alone))
        next(requests)
        assert blocks.made == made_after_first
        list(islice(requests, made_after_first * BLOCK - 1))  # the rest of what was made
        assert blocks.made == made_after_first
        next(requests)
        assert blocks.made == 2 * made_after_first


@pytest.mark.parametrize("count", [0, 1, GROUP - 1, GROUP, GROUP + 1, 3 * GROUP + 2])
def test_finite_blocks_end_with_a_partial_group_and_nothing_lost(count: int) -> None:
    made = list(requests_of(iter(Blocks(count)), ThreadInfo(0, 1, 1, alone=True)))
    assert made == list(range(count * BLOCK))


def test_ycsb_operations_are_the_same_for_a_client_alone_or_sharing_its_process() -> None:
    workload = YcsbWorkload(
        {"recordcount": "1000", "readproportion": "0.5", "updateproportion": "0.3", "insertproportion": "0.2"}
    )
    made = []
    for alone in (True, False):
        wire: Any = Wire()
        requests = workload._run(wire, ThreadInfo(1, 4, 99, alone=alone), random.Random(99))
        made.append(list(islice(requests, 3 * GROUP * BLOCK + 7)))
    assert made[0] == made[1]
    assert {kind for kind, *_ in made[0]} == {"READ", "UPDATE", "INSERT"}


class Wire:
    """A YCSB request maker whose requests show what they would do."""

    def read(self, table: str, key: str, fields: Any) -> tuple[Any, ...]:
        return ("READ", key, fields)

    def update(self, table: str, key: str, values: Any) -> tuple[Any, ...]:
        return ("UPDATE", key, sorted(values.items()))

    def insert(self, table: str, key: str, values: Any) -> tuple[Any, ...]:
        return ("INSERT", key, sorted(values.items()))


class Driver:
    """A driver that lends a channel and makes wire requests (the null driver does neither)."""

    def event_loop_channel(self) -> object:
        return object()

    def drop_channel(self) -> None:
        pass

    def kv_wire(self) -> Wire:
        return Wire()


@pytest.mark.parametrize(("indexes", "alone"), [([3], True), ([0, 1], False)])
def test_the_engine_tells_a_client_whether_it_is_alone_in_its_process(
    indexes: list[int], alone: bool
) -> None:
    seen: list[ThreadInfo] = []

    class Probe(YcsbWorkload):
        def wire_requests(self, phase: str, driver: Any, thread: ThreadInfo) -> Iterator[Any] | None:
            seen.append(thread)
            return iter(())

    config = PhaseConfig(workload="ycsb", phase="run", engine="null", threads=4)
    connections = _event_loop_connections(
        Probe({}), config, [Driver() for _ in indexes], indexes, [None] * len(indexes), seed=7
    )
    assert connections is not None and len(connections) == len(indexes)
    assert [t.alone for t in seen] == [alone] * len(indexes)
    assert [t.index for t in seen] == indexes


@pytest.mark.parametrize(
    ("indexes", "target", "expected"), [([3], None, True), ([0, 1], None, False), ([3], 500.0, False)]
)
def test_a_client_is_alone_when_its_process_has_no_other_and_it_is_not_paced(
    indexes: list[int], target: float | None, expected: bool
) -> None:
    config = PhaseConfig(workload="ycsb", phase="run", engine="null", threads=4, target=target)
    assert alone_in_process(config, indexes) is expected
