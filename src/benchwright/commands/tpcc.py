"""`benchwright tpcc load|run postgres|mysql --warehouses N -c CLIENTS -T SECONDS [--url URL] [--json PATH]`.

load: create the nine tables and fill them (-c loader threads share the warehouses).
run:  the five transactions at the standard mix; prints per-transaction tps / avg / p90 / p99, tpmC
      and the consistency conditions (Tiny-TPC-C-like: no keying or think time unless --think-time).
"""

from __future__ import annotations

import argparse
from typing import Any

from benchwright.commands import Subparsers
from benchwright.commands.sql import SQL_ENGINES, add_connection_flags, connection_properties, run_and_write
from benchwright.errors import SpecError
from benchwright.runner.engine import PhaseConfig

TRANSACTIONS = ("NewOrder", "Payment", "OrderStatus", "Delivery", "StockLevel")


def register(subparsers: Subparsers) -> None:
    p = subparsers.add_parser(
        "tpcc",
        help="TPC-C: load warehouses, run the five transactions (postgres, mysql)",
        description="TPC-C order-entry benchmark: tpmC, per-transaction latency, consistency checks.",
    )
    p.add_argument("phase", choices=("load", "run"))
    p.add_argument("engine", choices=SQL_ENGINES)
    p.add_argument("-w", "--warehouses", type=int, default=1, help="number of warehouses (default 1)")
    p.add_argument(
        "-c",
        "--clients",
        type=int,
        help="terminals for run (default 10 per warehouse); loader threads for load (default 2)",
    )
    p.add_argument("-j", "--processes", type=int, help="worker processes (default: min(clients, 2 x cores))")
    p.add_argument("-T", "--time", type=float, default=60.0, help="seconds to run (default 60)")
    p.add_argument(
        "--mix", help="percentages NewOrder,Payment,OrderStatus,Delivery,StockLevel (default 45,43,4,4,4)"
    )
    p.add_argument(
        "--think-time",
        type=float,
        default=0.0,
        help="scale of the spec's keying and think times (default 0 = off; 1 = as specified)",
    )
    p.add_argument("--batch", type=int, help="rows per INSERT while loading (default 500)")
    add_connection_flags(p)
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    engine, props = connection_properties(args.engine, args.url, args.overrides)
    if args.warehouses < 1:
        raise SpecError("--warehouses", "needs at least one warehouse")
    props["tpcc.warehouses"] = str(args.warehouses)
    if args.mix:
        props["tpcc.mix"] = args.mix
    if args.think_time:
        props["tpcc.think_time"] = str(args.think_time)
    if args.batch:
        props["tpcc.batch"] = str(args.batch)
    clients = args.clients or (2 if args.phase == "load" else 10 * args.warehouses)
    if clients < 1:
        raise SpecError("--clients", "needs at least one client")
    config = PhaseConfig(
        workload="tpcc",
        phase=args.phase,
        engine=engine,
        properties=props,
        threads=clients,
        processes=args.processes,
        max_seconds=args.time if args.phase == "run" else None,
        seed=args.seed,
    )
    doc = run_and_write(config, args.json)
    if args.phase == "load":
        rows = doc.extra.get("rows", {})
        print(
            f"loaded {args.warehouses} warehouse(s) in {doc.runtime_ms / 1000:.1f} s: "
            + ", ".join(f"{t} {n}" for t, n in rows.items())
        )
        return 0
    print_run(doc.extra, doc.runtime_ms / 1000)
    return 0 if doc.valid else 1


def print_run(extra: dict[str, Any], seconds: float) -> None:
    print(
        f"{'transaction':<12} {'count':>8} {'tps':>9} {'avg ms':>9} {'p90 ms':>9} {'p99 ms':>9} "
        f"{'aborts':>7} {'retries':>7} {'errors':>7}"
    )
    for name in TRANSACTIONS:
        t = extra.get("transactions", {}).get(name)
        if not t:
            continue
        count = t.get("ok", 0) + t.get("user_abort", 0)
        print(
            f"{name:<12} {count:>8} {t['tps']:>9.2f} {t['avg_ms']:>9.3f} {t['p90_ms']:>9.3f} {t['p99_ms']:>9.3f} "
            f"{t.get('user_abort', 0):>7} {t.get('retry', 0):>7} {t.get('error', 0):>7}"
        )
    print(f"tpmC: {extra.get('tpmC', 0):.1f} over {seconds:.1f} s ({extra.get('warehouses')} warehouse(s))")
    checks = extra.get("consistency", {})
    for key in ("1", "2", "3", "4"):
        c = checks.get(key)
        if c:
            print(f"consistency {key}: {'ok' if c['ok'] else 'VIOLATED'} ({c['condition']})")
