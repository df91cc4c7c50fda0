"""TPC-C initial population (clause 4.3.3), as row generators streamed into the tables in batches.

The load is cut into independent tasks (a chunk of items, one warehouse with its stock, one district
with its customers, history and orders) that the engine's threads share out: memory stays one batch
per thread whatever the number of warehouses.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from decimal import Decimal
from typing import Any

from benchwright.runner.drivers.base import SqlDriver
from benchwright.runner.workloads.sqlscript.sqlkit import insert_rows
from benchwright.runner.workloads.tpcc.rand import C_LAST_LOAD, TpccRandom, last_name
from benchwright.runner.workloads.tpcc.schema import COLUMNS

ITEMS = 100_000
DISTRICTS = 10
CUSTOMERS = 3_000  # per district
ORDERS = 3_000  # per district
NEW_ORDER_FROM = 2_101  # orders 2101..3000 are undelivered (new_order rows)
ITEM_CHUNK = 20_000

Task = tuple[str, int, int]  # (kind, warehouse or first item, district or last item)


def tasks(warehouses: int) -> list[Task]:
    """Every unit of loading work, items first so they spread over threads."""
    out: list[Task] = [
        ("items", lo, min(ITEMS, lo + ITEM_CHUNK - 1)) for lo in range(1, ITEMS + 1, ITEM_CHUNK)
    ]
    for w in range(1, warehouses + 1):
        out.append(("warehouse", w, 0))
        out.extend(("district", w, d) for d in range(1, DISTRICTS + 1))
    return out


def run_task(driver: SqlDriver, task: Task, seed: int, batch: int) -> None:
    kind, a, b = task
    rnd = TpccRandom(seed * 1_000_003 + a * 101 + b, c_last=C_LAST_LOAD)
    if kind == "items":
        insert_rows(driver, "item", COLUMNS["item"], item_rows(rnd, a, b), batch)
    elif kind == "warehouse":
        insert_rows(driver, "warehouse", COLUMNS["warehouse"], [warehouse_row(rnd, a)], batch)
        insert_rows(driver, "stock", COLUMNS["stock"], stock_rows(rnd, a), batch)
    else:
        load_district(driver, rnd, a, b, batch)


def item_rows(rnd: TpccRandom, first: int, last: int) -> Iterator[tuple[Any, ...]]:
    for i in range(first, last + 1):
        yield (
            i,
            rnd.uniform(1, 10_000),
            rnd.astring(14, 24),
            rnd.money(100, 10_000),
            rnd.data_with_original(),
        )


def warehouse_row(rnd: TpccRandom, w: int) -> tuple[Any, ...]:
    return (
        w,
        rnd.astring(6, 10),
        rnd.astring(10, 20),
        rnd.astring(10, 20),
        rnd.astring(10, 20),
        rnd.astring(2, 2),
        rnd.zip_code(),
        Decimal(rnd.uniform(0, 2000)) / 10_000,
        Decimal("300000.00"),
    )


def stock_rows(rnd: TpccRandom, w: int) -> Iterator[tuple[Any, ...]]:
    for i in range(1, ITEMS + 1):
        yield (
            i,
            w,
            rnd.uniform(10, 100),
            *(rnd.astring(24, 24) for _ in range(10)),
            0,
            0,
            0,
            rnd.data_with_original(),
        )


def load_district(driver: SqlDriver, rnd: TpccRandom, w: int, d: int, batch: int) -> None:
    now = datetime.now().replace(microsecond=0)
    district = (
        d,
        w,
        rnd.astring(6, 10),
        rnd.astring(10, 20),
        rnd.astring(10, 20),
        rnd.astring(10, 20),
        rnd.astring(2, 2),
        rnd.zip_code(),
        Decimal(rnd.uniform(0, 2000)) / 10_000,
        Decimal("30000.00"),
        ORDERS + 1,
    )
    insert_rows(driver, "district", COLUMNS["district"], [district], batch)
    insert_rows(driver, "customer", COLUMNS["customer"], customer_rows(rnd, w, d, now), batch)
    insert_rows(driver, "history", COLUMNS["history"], history_rows(rnd, w, d, now), batch)
    # o_c_id is a random permutation of the customers (4.3.3.1); o_ol_cnt is needed for order lines.
    customers = list(range(1, CUSTOMERS + 1))
    rnd.r.shuffle(customers)
    counts = [rnd.uniform(5, 15) for _ in range(ORDERS)]
    insert_rows(driver, "orders", COLUMNS["orders"], order_rows(rnd, w, d, now, customers, counts), batch)
    insert_rows(driver, "order_line", COLUMNS["order_line"], order_line_rows(rnd, w, d, now, counts), batch)
    insert_rows(
        driver,
        "new_order",
        COLUMNS["new_order"],
        ((o, d, w) for o in range(NEW_ORDER_FROM, ORDERS + 1)),
        batch,
    )


def customer_rows(rnd: TpccRandom, w: int, d: int, now: datetime) -> Iterator[tuple[Any, ...]]:
    for c in range(1, CUSTOMERS + 1):
        last = last_name(c - 1 if c <= 1000 else rnd.nurand(255, 0, 999))
        yield (
            c,
            d,
            w,
            rnd.astring(8, 16),
            "OE",
            last,
            rnd.astring(10, 20),
            rnd.astring(10, 20),
            rnd.astring(10, 20),
            rnd.astring(2, 2),
            rnd.zip_code(),
            rnd.nstring(16, 16),
            now,
            "BC" if rnd.uniform(1, 10) == 1 else "GC",
            Decimal("50000.00"),
            Decimal(rnd.uniform(0, 5000)) / 10_000,
            Decimal("-10.00"),
            Decimal("10.00"),
            1,
            0,
            rnd.astring(300, 500),
        )


def history_rows(rnd: TpccRandom, w: int, d: int, now: datetime) -> Iterator[tuple[Any, ...]]:
    for c in range(1, CUSTOMERS + 1):
        yield (c, d, w, d, w, now, Decimal("10.00"), rnd.astring(12, 24))


def order_rows(
    rnd: TpccRandom, w: int, d: int, now: datetime, customers: list[int], counts: list[int]
) -> Iterator[tuple[Any, ...]]:
    for o in range(1, ORDERS + 1):
        carrier = rnd.uniform(1, 10) if o < NEW_ORDER_FROM else None
        yield (o, d, w, customers[o - 1], now, carrier, counts[o - 1], 1)


def order_line_rows(
    rnd: TpccRandom, w: int, d: int, now: datetime, counts: list[int]
) -> Iterator[tuple[Any, ...]]:
    zero = Decimal("0.00")
    for o in range(1, ORDERS + 1):
        delivered = o < NEW_ORDER_FROM
        for n in range(1, counts[o - 1] + 1):
            yield (
                o,
                d,
                w,
                n,
                rnd.uniform(1, ITEMS),
                w,
                now if delivered else None,
                5,
                zero if delivered else rnd.money(1, 999_999),
                rnd.astring(24, 24),
            )
