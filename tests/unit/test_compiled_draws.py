"""The C request sources (``_fastloop.uniform_ints``, ``choose_labels``, ``int_requests``) give exactly
what the Python they replace gives: the same integers and labels from the same random generator, left
in the same state, and the same request tuples. Threads draw in Python one at a time and the event
loop in C a block at a time, so any difference would send the two client models different operations
from one seed."""

from __future__ import annotations

import random
from bisect import bisect_right
from itertools import islice
from math import floor
from typing import Any

import pytest

from benchwright.runner import compiled
from benchwright.runner.drivers.postgres_wire import PostgresSqlWire
from benchwright.runner.event_loop_my import MySqlWire
from benchwright.runner.workloads.ycsb import generators as g

BUILT = compiled.uniform_ints() is not None


def words(rng: random.Random, n: int) -> bytes:
    return rng.getrandbits(64 * n).to_bytes(8 * n, "little")


@pytest.fixture(autouse=True)
def _built() -> None:
    assert BUILT, "the C part is built here (make ext)"


@pytest.mark.parametrize("count", [1, 2, 7, 100_000, 10**9, 2**53])
@pytest.mark.parametrize("n", [0, 1, 64, 1000])
def test_uniform_ints_are_python_s_draws_and_leave_the_generator_where_python_would(
    count: int, n: int
) -> None:
    ours, python = random.Random(count + n), random.Random(count + n)
    made = compiled.uniform_ints()(words(ours, n), 1, count)
    assert made == [1 + floor(python.random() * count) for _ in range(n)]
    assert ours.getstate() == python.getstate()
    if n >= 64 and count >= 100:
        assert len(set(made)) > n // 2  # drawn, not one value repeated


@pytest.mark.parametrize(("low", "count"), [(0, 0), (1, 2**53 + 1), (5, -1)])
def test_uniform_ints_refuse_a_range_they_cannot_draw_exactly(low: int, count: int) -> None:
    with pytest.raises(ValueError, match="count"):
        compiled.uniform_ints()(bytes(64), low, count)


def test_uniform_ints_refuse_words_that_are_not_whole_draws() -> None:
    with pytest.raises(ValueError, match="8 bytes"):
        compiled.uniform_ints()(bytes(12), 1, 10)


@pytest.mark.parametrize(
    "edges",
    [[0.5, 2.0], [0.95, 2.0], [0.1, 0.35, 0.6, 2.0], [1e-9, 2.0], [0.25, 0.5, 0.75, 0.9, 2.0]],
)
def test_choose_labels_picks_the_first_edge_above_each_draw_as_bisect_does(edges: list[float]) -> None:
    labels = [f"OP{i}" for i in range(len(edges))]
    ours, python = random.Random(len(edges)), random.Random(len(edges))
    made = compiled.choose_labels()(words(ours, 5000), edges, labels)
    assert made == [labels[bisect_right(edges, python.random())] for _ in range(5000)]
    assert ours.getstate() == python.getstate()
    assert all(m is labels[labels.index(m)] for m in made[:100])  # the labels themselves, not copies


@pytest.mark.parametrize(
    ("edges", "labels", "message"),
    [
        ([0.5, 0.9], ["A", "B"], "above 1"),
        ([0.5, 2.0], ["A"], "one label each"),
        ([], [], "one label each"),
        ([i / 20 for i in range(1, 17)] + [2.0], [str(i) for i in range(17)], "one label each"),
    ],
)
def test_choose_labels_refuse_a_table_bisect_would_not_read_the_same_way(
    edges: list[float], labels: list[str], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        compiled.choose_labels()(bytes(64), edges, labels)


def test_ycsb_block_draws_are_the_same_with_the_c_part_and_without(monkeypatch: pytest.MonkeyPatch) -> None:
    def draws() -> tuple[list[int], list[str], object]:
        rng = random.Random(3)
        uniform = g.UniformGenerator(rng, 10, 20_009)
        chooser = g.DiscreteChooser(rng, [("READ", 0.5), ("UPDATE", 0.3), ("SCAN", 0.2)])
        numbers = uniform.block(64) + uniform.block(1) + uniform.block(300)
        labels = chooser.block(64) + chooser.block(7)
        return numbers, labels, rng.getstate()

    with_c = draws()
    monkeypatch.setenv("BENCHWRIGHT_COMPILED_LOOP", "0")  # Python alone (measurement.method says so)
    assert compiled.uniform_ints() is None and compiled.choose_labels() is None
    assert draws() == with_c
    assert min(with_c[0]) >= 10 and max(with_c[0]) <= 20_009
    assert set(with_c[1]) == {"READ", "UPDATE", "SCAN"}


SQL = "SELECT c FROM sbtest1 WHERE id = %s"
VALUES = [1, 0, 99_999, 12_345_678_901, -3, (1 << 63) - 1, -(1 << 63)]


def test_int_requests_are_the_comprehension_s_requests_on_both_wires(monkeypatch: pytest.MonkeyPatch) -> None:
    made = [
        wire.int_statements("oltp_point_select", SQL, VALUES) for wire in (PostgresSqlWire(), MySqlWire(None))
    ]
    monkeypatch.setenv("BENCHWRIGHT_COMPILED_LOOP", "0")
    assert compiled.int_requests() is None
    python = [
        wire.int_statements("oltp_point_select", SQL, VALUES) for wire in (PostgresSqlWire(), MySqlWire(None))
    ]
    assert made == python
    assert made[0][-2] == (
        "oltp_point_select",
        (b"SELECT c FROM sbtest1 WHERE id = $1", [b"9223372036854775807"]),
        1,
        None,
    )
    assert made[1][4] == ("oltp_point_select", b"SELECT c FROM sbtest1 WHERE id = -3", 1, None)


def test_an_id_past_64_bits_falls_back_to_the_comprehension_with_the_same_request() -> None:
    big = [7, 1 << 70]
    for wire in (PostgresSqlWire(), MySqlWire(None)):
        assert wire.int_statements("q", SQL, big) == [wire.statement("q", SQL, (v,)) for v in big]


def test_a_mysql_template_with_another_percent_is_left_to_python_s_formatting() -> None:
    sql = "SELECT c FROM sbtest1 WHERE pad LIKE '%%x' AND id = %s"
    made = MySqlWire(None).int_statements("q", sql, [5])
    assert made == [("q", b"SELECT c FROM sbtest1 WHERE pad LIKE '%x' AND id = 5", 1, None)]


SELECT = "SELECT abalance FROM pgbench_accounts WHERE aid = %s"


@pytest.mark.parametrize("wire", [PostgresSqlWire(), MySqlWire(None)], ids=["libpq", "mysql"])
@pytest.mark.parametrize(("low", "count"), [(1, 100_000), (0, 1), (-50, 7), (1, 2**53)])
def test_uniform_selects_are_the_statements_of_python_s_draws_one_at_a_time(
    wire: Any, low: int, count: int
) -> None:
    made = wire.uniform_selects("select-only", SELECT, random.Random(count), low, count)
    python = random.Random(count)
    expected = [
        wire.statement("select-only", SELECT, (low + floor(python.random() * count),)) for _ in range(300)
    ]
    assert list(islice(made, 300)) == expected  # across four refills of 64 draws, ending inside one
    if count > 300:
        assert len({str(r) for r in expected}) > 250  # drawn, not one request repeated


def test_uniform_selects_are_left_to_python_where_c_cannot_draw_them_exactly(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rng = random.Random(1)
    assert PostgresSqlWire().uniform_selects("q", SELECT, rng, 1, 2**53 + 1) is None
    assert MySqlWire(None).uniform_selects("q", "SELECT 1 WHERE a LIKE '%%x' AND id = %s", rng, 1, 10) is None
    monkeypatch.setenv("BENCHWRIGHT_COMPILED_LOOP", "0")
    assert PostgresSqlWire().uniform_selects("q", SELECT, rng, 1, 10) is None


def test_uniform_selects_refuse_bad_arguments_and_pass_the_generator_s_errors_on() -> None:
    make = compiled.uniform_selects()
    with pytest.raises(ValueError, match="count"):
        make("q", b"S $1", b"", random.Random(1).getrandbits, 1, 0, True)

    def broken(bits: int) -> int:
        raise RuntimeError("no entropy")

    with pytest.raises(RuntimeError, match="no entropy"):
        next(make("q", b"S $1", b"", broken, 1, 10, True))
    with pytest.raises(OverflowError):
        next(make("q", b"S $1", b"", lambda bits: 1 << 5000, 1, 10, True))  # wider than asked for


def test_select_only_on_the_loop_sends_the_threads_accounts_in_their_order() -> None:
    from benchwright.runner.drivers.null import NullDriver
    from benchwright.runner.workloads.base import ThreadInfo
    from benchwright.runner.workloads.tpcb.workload import TpcbWorkload

    sent: list[int] = []

    class Driver(NullDriver):
        def fetch_count(self, sql: str, params: Any = ()) -> int:
            sent.append(params[0])
            return 1

        def sql_wire(self) -> Any:
            return PostgresSqlWire()

    workload = TpcbWorkload({"tpcb.scale": "2", "tpcb.script": "select-only"})
    thread = ThreadInfo(index=0, count=1, seed=77)
    requests = workload.wire_requests("run", Driver({}), thread)
    assert type(requests).__name__ == "UniformSelects"
    on_the_loop = [int(params[0]) for _, (_, params), _, _ in islice(requests, 1000)]
    for _, call in islice(workload.operations("run", Driver({}), thread), 1000):
        call()
    assert on_the_loop == sent
    assert min(sent) >= 1 and max(sent) <= 200_000 and len(set(sent)) > 990


@pytest.mark.parametrize("kind", ["special", "uniform", "gaussian", "pareto", "zipfian"])
@pytest.mark.parametrize("size", [1, 2, 100, 10_000, 10_000_000])
@pytest.mark.parametrize(("iters", "pct", "res"), [(12, 1, 75), (1, 5, 50), (3, 100, 0), (12, 0, 100)])
def test_a_block_of_oltp_ids_is_the_drawer_s_ids_and_leaves_the_generator_where_it_would(
    kind: str, size: int, iters: int, pct: int, res: int
) -> None:
    from benchwright.runner.workloads.oltp.rand import RandSpec

    spec = RandSpec(type=kind, spec_iter=iters, spec_pct=pct, spec_res=res)
    ours, python = random.Random(size + iters), random.Random(size + iters)
    block = spec.block_drawer(1, size, ours)
    one = spec.drawer(1, size, python)
    made = block(64) + block(0) + block(1) + block(700)
    assert made == [one() for _ in range(765)]
    assert ours.getstate() == python.getstate()
    assert min(made) >= 1 and max(made) <= size
    if size >= 10_000 and res < 100:
        assert len(set(made)) > 100  # drawn, not one value repeated


def test_special_ids_are_drawn_in_c_and_refuse_what_they_cannot_draw() -> None:
    from benchwright.runner.workloads.oltp.rand import RandSpec

    special = compiled.special_ids()
    assert special is not None
    calls = []

    def counted() -> float:
        calls.append(1)
        return 0.5

    # a hot draw takes one random(), a cold one 1 + iters: cold share 1.0 here
    assert special(counted, 3, (1, 100, 1.0, 49.5, 1.0, 99 / 12, 12)) == [1 + int(6.0 * 99 / 12)] * 3
    assert len(calls) == 3 * 13
    with pytest.raises(ValueError, match="iters"):
        special(random.random, 1, (1, 10, 0.25, 4.5, 0.1, 0.75, 0))
    with pytest.raises(OverflowError, match="64 bits"):
        special(lambda: 0.9, 1, (1, 2**62, 0.0, 1e19, 1.0, 1.0, 12))
    with pytest.raises(TypeError):
        special(lambda: "x", 1, (1, 10, 0.25, 4.5, 0.1, 0.75, 12))
    assert RandSpec(type="special").block_drawer(1, 10, random.Random(1))(0) == []
