"""How much data a load phase writes, so a duration estimate (and the budget made from it) grows
with the data rather than assuming a minute: YCSB records, TPC-C warehouses, pgbench scale, sysbench
tables x rows. Rates are deliberately modest bulk-load rates on a mid-size server (the seed's
``pgbench -i --scale=10000``, 1e9 rows, took 5,978 s: 167,000 rows/s with COPY); a real load may be
faster or slower, which is why this is an estimate the validate table labels as one."""

from __future__ import annotations

from collections.abc import Mapping

ROWS_PER_S = {"tpcc": 20_000.0, "tpcb": 150_000.0, "oltp": 50_000.0}
TPCC_ROWS_PER_WAREHOUSE = 500_000  # stock 100k + customer 30k + history 30k + orders 30k + order_line ~300k
TPCB_ROWS_PER_SCALE = 100_000  # pgbench_accounts


def _num(props: Mapping[str, str], *names: str, default: float) -> float:
    for name in names:
        value = props.get(name)
        if value not in (None, ""):
            try:
                return float(value)
            except ValueError:
                return default
    return default


def load_seconds(workload: str, props: Mapping[str, str]) -> float | None:
    """Seconds the load phase of ``workload`` should take by its data size; None when unknown."""
    if workload == "tpcc":
        warehouses = _num(props, "tpcc.warehouses", "warehouses", default=1)
        return (100_000 + warehouses * TPCC_ROWS_PER_WAREHOUSE) / ROWS_PER_S["tpcc"]
    if workload == "tpcb":
        return _num(props, "tpcb.scale", "scale", default=1) * TPCB_ROWS_PER_SCALE / ROWS_PER_S["tpcb"]
    if workload == "oltp":
        tables = _num(props, "oltp.tables", "tables", default=1)
        rows = _num(props, "oltp.table_size", "table_size", default=10_000)
        return tables * rows / ROWS_PER_S["oltp"]
    return None
