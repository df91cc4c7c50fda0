"""What the rest of Benchwright asks about sysbench-style OLTP (runner/workloads/descriptor.py)."""

from __future__ import annotations

from benchwright.runner.workloads.descriptor import (
    Props,
    SeedView,
    UsageShape,
    WorkloadDescriptor,
    first_number,
)

DEFAULTS = {
    "tables": 1,
    "table_size": 10_000,
    "range_size": 100,
    "point_selects": 10,
    "simple_ranges": 1,
    "sum_ranges": 1,
    "order_ranges": 1,
    "distinct_ranges": 1,
    "index_updates": 1,
    "non_index_updates": 1,
    "delete_inserts": 1,
}
RAND = {"rand_type", "rand_spec_iter", "rand_spec_pct", "rand_spec_res", "rand_pareto_h", "rand_zipfian_exp"}
ROW_BYTES = 190.0  # sbtest: id, k, c char(120), pad char(60)
ROWS_PER_S = 50_000.0  # a modest bulk-load rate (experiments/sizing.py)
TABLE_COLUMNS = ("tps", "avg", "p95", "reads/s", "writes/s", "ignored_errors")


def _number(value: str | None) -> float | None:
    try:
        return float(value) if value else None
    except ValueError:
        return None


def load_seconds(props: Props) -> float:
    """sysbench tables x rows at a bulk-load rate."""
    tables = first_number(props, "oltp.tables", "tables", default=1)
    rows = first_number(props, "oltp.table_size", "table_size", default=10_000)
    return tables * rows / ROWS_PER_S


def usage_shape(props: Props, load: Props) -> UsageShape:
    """Per transaction, its statement counts (a range is counted as one read)."""

    def n(key: str) -> float:
        return _number(props.get(f"oltp.{key}")) or float(DEFAULTS.get(key, 1))

    test = props.get("oltp.test", "read_write")
    ranges = sum(n(k) for k in ("simple_ranges", "sum_ranges", "order_ranges", "distinct_ranges"))
    reads = 1.0 if test == "point_select" else (0.0 if test == "write_only" else n("point_selects") + ranges)
    writes = (
        0.0
        if test in ("read_only", "point_select")
        else (n("index_updates") + n("non_index_updates") + 2 * n("delete_inserts"))
    )
    returned = (n("point_selects") + ranges * n("range_size")) * ROW_BYTES / max(reads, 1.0)
    rows = n("tables") * n("table_size")
    return UsageShape(reads, writes, returned, ROW_BYTES, ROW_BYTES, rows, per_transaction=True)


DESCRIPTOR = WorkloadDescriptor(
    name="oltp",
    load_seconds=load_seconds,
    fixed_requests=None,
    dataset_bytes=None,
    usage_shape=usage_shape,
    write_operations=frozenset(),
    size_property="oltp.table_size",
    from_data_size=None,
    field_records=False,
    native_tools=("sysbench",),
    property_namespace="oltp.",
    known_properties=frozenset({"test", "batch", "skip_trx", *DEFAULTS, *RAND}),
    quick_caps={"tables": 2, "table_size": 200},
    load_share=None,
    run_needs_own_load=lambda props: False,
    report_groups={},
    default_metrics=TABLE_COLUMNS,
    seed_views=(
        SeedView("sysbench", None, ("tps", "qps", "reads/s", "writes/s", "other/s", "ignored_errors")),
    ),
    result_aliases=("sysbench",),
)
