"""TPC-C's random inputs and mix without a database: NURand ranges, last names, the 45/43/4/4/4
mix, the 1% rollbacks, the loader's share-out of work, and property validation."""

from __future__ import annotations

from collections import Counter

import pytest

from benchwright.errors import SpecError
from benchwright.runner.drivers.null import NullDriver
from benchwright.runner.measure import Status
from benchwright.runner.workloads.base import ThreadInfo
from benchwright.runner.workloads.registry import workload_class
from benchwright.runner.workloads.sqlscript.sqlkit import UserAbort, retrying, transaction
from benchwright.runner.workloads.tpcc import loader
from benchwright.runner.workloads.tpcc.rand import TpccRandom, last_name
from benchwright.runner.workloads.tpcc.workload import TpccWorkload


def test_last_names_are_built_from_three_syllables() -> None:
    assert last_name(0) == "BARBARBAR"
    assert last_name(371) == "PRICALLYOUGHT"
    assert last_name(999) == "EINGEINGEING"


def test_nurand_stays_in_range_and_is_skewed() -> None:
    rnd = TpccRandom(1)
    items = [rnd.item_id() for _ in range(20_000)]
    customers = [rnd.customer_id() for _ in range(20_000)]
    assert min(items) >= 1 and max(items) <= 100_000
    assert min(customers) >= 1 and max(customers) <= 3_000
    # Non-uniform: the most frequent customer ids appear far more often than a uniform draw would.
    top = Counter(customers).most_common(1)[0][1]
    assert top > 3 * 20_000 / 3_000


def test_random_strings_have_the_asked_lengths() -> None:
    rnd = TpccRandom(2)
    for _ in range(200):
        assert 8 <= len(rnd.astring(8, 16)) <= 16
        assert rnd.zip_code().endswith("11111") and len(rnd.zip_code()) == 9
        assert 26 <= len(rnd.data_with_original()) <= 50


def test_mix_follows_45_43_4_4_4_and_one_percent_of_new_orders_roll_back() -> None:
    workload = TpccWorkload({"tpcc.warehouses": "1"})
    driver = NullDriver({})
    ops = workload.operations("run", driver, ThreadInfo(index=0, count=1, seed=11))
    names = Counter(next(ops)[0] for _ in range(20_000))
    share = {n: c / 20_000 for n, c in names.items()}
    assert share["NewOrder"] == pytest.approx(0.45, abs=0.015)
    assert share["Payment"] == pytest.approx(0.43, abs=0.015)
    for name in ("OrderStatus", "Delivery", "StockLevel"):
        assert share[name] == pytest.approx(0.04, abs=0.006)

    two_warehouses = TpccWorkload({"tpcc.warehouses": "2"})
    rnd = TpccRandom(5)
    unused = remote = total_lines = 0
    for _ in range(5_000):
        x = two_warehouses.draw_new_order(rnd, 1)
        assert 5 <= len(x.lines) <= 15 and 1 <= x.c_id <= 3_000 and 1 <= x.d_id <= 10
        unused += any(i > loader.ITEMS for i, _, _ in x.lines)
        assert all(i <= loader.ITEMS for i, _, _ in x.lines[:-1])  # only the last item can be unused
        remote += sum(1 for _, s, _ in x.lines if s != 1)
        total_lines += len(x.lines)
    assert 0.005 <= remote / total_lines <= 0.015
    assert 20 <= unused <= 90  # 1% of 5000


def test_a_user_abort_rolls_back_and_a_deadlock_is_retried_with_the_same_inputs() -> None:
    driver = NullDriver({})

    def abort() -> None:
        raise UserAbort("unused item")

    assert transaction(driver, abort) is Status.USER_ABORT
    assert transaction(driver, lambda: None) is Status.OK

    outcomes = iter([Status.RETRY, Status.RETRY, Status.OK])
    attempts = [call() for name, call in retrying(lambda: next(outcomes), "NewOrder")]
    assert attempts == [Status.RETRY, Status.RETRY, Status.OK]


def test_loader_tasks_cover_every_warehouse_and_district_once_across_threads() -> None:
    tasks = loader.tasks(3)
    assert sum(1 for t in tasks if t[0] == "warehouse") == 3
    assert sum(1 for t in tasks if t[0] == "district") == 30
    items = sorted((lo, hi) for kind, lo, hi in tasks if kind == "items")
    assert items[0][0] == 1 and items[-1][1] == loader.ITEMS
    assert sum(hi - lo + 1 for lo, hi in items) == loader.ITEMS
    workload = TpccWorkload({"tpcc.warehouses": "3"})
    shares = [list(workload._load_ops(NullDriver({}), ThreadInfo(i, 4, 1))) for i in range(4)]
    assert sum(len(s) for s in shares) == len(tasks)


@pytest.mark.parametrize(
    ("props", "field"),
    [
        ({"tpcc.warehouses": "0"}, "tpcc.warehouses"),
        ({"tpcc.warehouses": "x"}, "tpcc.warehouses"),
        ({"tpcc.mix": "50,50"}, "tpcc.mix"),
        ({"tpcc.mix": "45,43,4,4,5"}, "tpcc.mix"),
    ],
    ids=["zero-warehouses", "not-a-number", "too-few-weights", "not-100-percent"],
)
def test_bad_properties_name_the_field(props: dict[str, str], field: str) -> None:
    with pytest.raises(SpecError) as err:
        workload_class("tpcc")(props)
    assert err.value.field == field
