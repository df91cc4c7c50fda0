"""The five TPC-C transactions (clauses 2.4-2.8), written once for both client models.

Each ``*_steps`` function takes its inputs already drawn (outside the timed region) and is a
generator: it yields each statement as ``(kind, sql, params)`` and receives its answer, what
``SqlDriver`` would return for it (``ONE``, fetchone: the first row or None; ``ALL``, fetchall:
every row; ``EXEC``, execute: the row count). The run stream hands them to ``make.dialogue``: on
a thread ``SqlCalls.dialogue`` answers them with the driver (``run_steps``) inside
``sqlkit.transaction``; on the event loop the PostgreSQL wire sends them one round trip each on one
connection (``PostgresSqlWire.dialogue``), so a transaction's later statements can depend on its
earlier answers, as New-Order's order number does. Rows that are updated are read with FOR
UPDATE first, so the default isolation level of both engines keeps the consistency conditions.
"""

from __future__ import annotations

from collections.abc import Generator, Sequence
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any

from benchwright.runner.drivers.base import SqlDriver
from benchwright.runner.workloads.sqlscript.sql_calls import run_steps
from benchwright.runner.workloads.sqlscript.sqlkit import UserAbort

DISTRICTS = 10
# a statement's kind is the SqlDriver method that answers it on a thread
ONE, ALL, EXEC = "fetchone", "fetchall", "execute"
Statement = tuple[str, str, Sequence[Any]]  # (kind, sql, params)
Steps = Generator[Statement, Any, Any]


@dataclass(frozen=True)
class NewOrderInput:
    w_id: int
    d_id: int
    c_id: int
    lines: tuple[tuple[int, int, int], ...]  # (item id, supply warehouse, quantity)


@dataclass(frozen=True)
class PaymentInput:
    w_id: int
    d_id: int
    c_w_id: int
    c_d_id: int
    c_id: int | None  # None: select the customer by last name
    c_last: str
    amount: Decimal


@dataclass(frozen=True)
class OrderStatusInput:
    w_id: int
    d_id: int
    c_id: int | None
    c_last: str


def new_order_steps(x: NewOrderInput) -> Steps:
    (
        yield (
            ONE,
            "SELECT c_discount, c_last, c_credit FROM customer WHERE c_w_id = %s AND c_d_id = %s AND c_id = %s",
            (x.w_id, x.d_id, x.c_id),
        )
    )
    (yield ONE, "SELECT w_tax FROM warehouse WHERE w_id = %s", (x.w_id,))
    row = yield (
        ONE,
        "SELECT d_next_o_id, d_tax FROM district WHERE d_w_id = %s AND d_id = %s FOR UPDATE",
        (x.w_id, x.d_id),
    )
    if row is None:
        raise LookupError(f"district {x.w_id}/{x.d_id} missing")
    o_id = int(row[0])
    (
        yield (
            EXEC,
            "UPDATE district SET d_next_o_id = %s WHERE d_w_id = %s AND d_id = %s",
            (o_id + 1, x.w_id, x.d_id),
        )
    )
    all_local = int(all(s == x.w_id for _, s, _ in x.lines))
    (
        yield (
            EXEC,
            "INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, o_all_local)"
            " VALUES (%s, %s, %s, %s, %s, NULL, %s, %s)",
            (o_id, x.d_id, x.w_id, x.c_id, datetime.now(), len(x.lines), all_local),
        )
    )
    (
        yield (
            EXEC,
            "INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES (%s, %s, %s)",
            (o_id, x.d_id, x.w_id),
        )
    )
    ids = sorted({i for i, _, _ in x.lines})
    marks = ", ".join(["%s"] * len(ids))
    prices = {
        int(r[0]): r[1] for r in (yield ALL, f"SELECT i_id, i_price FROM item WHERE i_id IN ({marks})", ids)
    }
    if len(prices) < len(ids):
        raise UserAbort("item number is not valid")  # the 1% of New-Orders with an unused item (2.4.2.3)
    dist_col = f"s_dist_{x.d_id:02d}"
    lines = []
    # Stock rows are locked in a fixed order (warehouse, item) so two New-Orders rarely deadlock.
    for number, (i_id, supply_w, qty) in sorted(enumerate(x.lines, 1), key=lambda e: (e[1][1], e[1][0])):
        stock = yield (
            ONE,
            f"SELECT s_quantity, {dist_col} FROM stock WHERE s_i_id = %s AND s_w_id = %s FOR UPDATE",
            (i_id, supply_w),
        )
        if stock is None:
            raise LookupError(f"stock {supply_w}/{i_id} missing")
        quantity = int(stock[0])
        quantity = quantity - qty if quantity - qty >= 10 else quantity - qty + 91
        (
            yield (
                EXEC,
                "UPDATE stock SET s_quantity = %s, s_ytd = s_ytd + %s, s_order_cnt = s_order_cnt + 1,"
                " s_remote_cnt = s_remote_cnt + %s WHERE s_i_id = %s AND s_w_id = %s",
                (quantity, qty, int(supply_w != x.w_id), i_id, supply_w),
            )
        )
        lines.append((o_id, x.d_id, x.w_id, number, i_id, supply_w, None, qty, prices[i_id] * qty, stock[1]))
    one = "(%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
    (
        yield (
            EXEC,
            "INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id, ol_delivery_d,"
            " ol_quantity, ol_amount, ol_dist_info) VALUES " + ", ".join([one] * len(lines)),
            [v for line in lines for v in line],
        )
    )


def _customer_by_name(w_id: int, d_id: int, c_last: str) -> Generator[Statement, Any, int | None]:
    """The customer at position ceil(n/2) among those with this last name, by first name (2.5.2.2)."""
    rows = yield (
        ALL,
        "SELECT c_id FROM customer WHERE c_w_id = %s AND c_d_id = %s AND c_last = %s ORDER BY c_first",
        (w_id, d_id, c_last),
    )
    if not rows:
        return None
    return int(rows[(len(rows) - 1) // 2][0])


def payment_steps(x: PaymentInput) -> Steps:
    (yield EXEC, "UPDATE warehouse SET w_ytd = w_ytd + %s WHERE w_id = %s", (x.amount, x.w_id))
    w = yield ONE, "SELECT w_name FROM warehouse WHERE w_id = %s", (x.w_id,)
    (
        yield (
            EXEC,
            "UPDATE district SET d_ytd = d_ytd + %s WHERE d_w_id = %s AND d_id = %s",
            (x.amount, x.w_id, x.d_id),
        )
    )
    d = yield ONE, "SELECT d_name FROM district WHERE d_w_id = %s AND d_id = %s", (x.w_id, x.d_id)
    c_id = x.c_id if x.c_id is not None else (yield from _customer_by_name(x.c_w_id, x.c_d_id, x.c_last))
    if c_id is None:
        # No customer has this name in the district (possible with few customers); use one by id.
        c_id = 1
    c = yield (
        ONE,
        "SELECT c_credit, c_data FROM customer WHERE c_w_id = %s AND c_d_id = %s AND c_id = %s FOR UPDATE",
        (x.c_w_id, x.c_d_id, c_id),
    )
    if c is None:
        raise LookupError(f"customer {x.c_w_id}/{x.c_d_id}/{c_id} missing")
    key = (x.c_w_id, x.c_d_id, c_id)
    if c[0] == "BC":
        data = f"{c_id} {x.c_d_id} {x.c_w_id} {x.d_id} {x.w_id} {x.amount} | {c[1]}"[:500]
        (
            yield (
                EXEC,
                "UPDATE customer SET c_balance = c_balance - %s, c_ytd_payment = c_ytd_payment + %s,"
                " c_payment_cnt = c_payment_cnt + 1, c_data = %s WHERE c_w_id = %s AND c_d_id = %s AND c_id = %s",
                (x.amount, x.amount, data, *key),
            )
        )
    else:
        (
            yield (
                EXEC,
                "UPDATE customer SET c_balance = c_balance - %s, c_ytd_payment = c_ytd_payment + %s,"
                " c_payment_cnt = c_payment_cnt + 1 WHERE c_w_id = %s AND c_d_id = %s AND c_id = %s",
                (x.amount, x.amount, *key),
            )
        )
    h_data = f"{w[0] if w else ''}    {d[0] if d else ''}"[:24]
    (
        yield (
            EXEC,
            "INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data)"
            " VALUES (%s, %s, %s, %s, %s, %s, %s, %s)",
            (c_id, x.c_d_id, x.c_w_id, x.d_id, x.w_id, datetime.now(), x.amount, h_data),
        )
    )


def order_status_steps(x: OrderStatusInput) -> Steps:
    c_id = x.c_id if x.c_id is not None else (yield from _customer_by_name(x.w_id, x.d_id, x.c_last))
    if c_id is None:
        c_id = 1
    (
        yield (
            ONE,
            "SELECT c_balance, c_first, c_middle, c_last FROM customer WHERE c_w_id = %s AND c_d_id = %s AND c_id = %s",
            (x.w_id, x.d_id, c_id),
        )
    )
    order = yield (
        ONE,
        "SELECT o_id, o_entry_d, o_carrier_id FROM orders WHERE o_w_id = %s AND o_d_id = %s AND o_c_id = %s"
        " ORDER BY o_id DESC LIMIT 1",
        (x.w_id, x.d_id, c_id),
    )
    if order is not None:
        (
            yield (
                ALL,
                "SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d FROM order_line"
                " WHERE ol_w_id = %s AND ol_d_id = %s AND ol_o_id = %s",
                (x.w_id, x.d_id, order[0]),
            )
        )


def delivery_steps(w_id: int, carrier: int) -> Steps:
    """Deliver the oldest undelivered order of each district; returns how many were delivered."""
    delivered = 0
    now = datetime.now()
    for d_id in range(1, DISTRICTS + 1):
        row = yield (
            ONE,
            "SELECT no_o_id FROM new_order WHERE no_w_id = %s AND no_d_id = %s ORDER BY no_o_id LIMIT 1 FOR UPDATE",
            (w_id, d_id),
        )
        if row is None:
            continue  # nothing to deliver in this district (allowed, 2.7.4.2)
        o_id = int(row[0])
        if not (
            yield (
                EXEC,
                "DELETE FROM new_order WHERE no_w_id = %s AND no_d_id = %s AND no_o_id = %s",
                (w_id, d_id, o_id),
            )
        ):
            continue
        order = yield (
            ONE,
            "SELECT o_c_id FROM orders WHERE o_w_id = %s AND o_d_id = %s AND o_id = %s",
            (w_id, d_id, o_id),
        )
        (
            yield (
                EXEC,
                "UPDATE orders SET o_carrier_id = %s WHERE o_w_id = %s AND o_d_id = %s AND o_id = %s",
                (carrier, w_id, d_id, o_id),
            )
        )
        (
            yield (
                EXEC,
                "UPDATE order_line SET ol_delivery_d = %s WHERE ol_w_id = %s AND ol_d_id = %s AND ol_o_id = %s",
                (now, w_id, d_id, o_id),
            )
        )
        total = yield (
            ONE,
            "SELECT SUM(ol_amount) FROM order_line WHERE ol_w_id = %s AND ol_d_id = %s AND ol_o_id = %s",
            (w_id, d_id, o_id),
        )
        amount = total[0] if total and total[0] is not None else Decimal(0)
        if order is not None:
            (
                yield (
                    EXEC,
                    "UPDATE customer SET c_balance = c_balance + %s, c_delivery_cnt = c_delivery_cnt + 1"
                    " WHERE c_w_id = %s AND c_d_id = %s AND c_id = %s",
                    (amount, w_id, d_id, order[0]),
                )
            )
        delivered += 1
    return delivered


def stock_level_steps(w_id: int, d_id: int, threshold: int) -> Steps:
    row = yield ONE, "SELECT d_next_o_id FROM district WHERE d_w_id = %s AND d_id = %s", (w_id, d_id)
    next_o = int(row[0]) if row else 0
    count = yield (
        ONE,
        "SELECT COUNT(DISTINCT s_i_id) FROM order_line JOIN stock ON s_i_id = ol_i_id AND s_w_id = ol_w_id"
        " WHERE ol_w_id = %s AND ol_d_id = %s AND ol_o_id < %s AND ol_o_id >= %s AND s_quantity < %s",
        (w_id, d_id, next_o, next_o - 20, threshold),
    )
    return int(count[0]) if count else 0


# ---------------------------------------------------------------- the thread model's entry points
def new_order(db: SqlDriver, x: NewOrderInput) -> None:
    run_steps(db, new_order_steps(x))


def payment(db: SqlDriver, x: PaymentInput) -> None:
    run_steps(db, payment_steps(x))


def order_status(db: SqlDriver, x: OrderStatusInput) -> None:
    run_steps(db, order_status_steps(x))


def delivery(db: SqlDriver, w_id: int, carrier: int) -> int:
    """Deliver the oldest undelivered order of each district; returns how many were delivered."""
    return int(run_steps(db, delivery_steps(w_id, carrier)))


def stock_level(db: SqlDriver, w_id: int, d_id: int, threshold: int) -> int:
    return int(run_steps(db, stock_level_steps(w_id, d_id, threshold)))
