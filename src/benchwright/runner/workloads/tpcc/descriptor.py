"""What the rest of Benchwright asks about TPC-C (runner/workloads/descriptor.py)."""

from __future__ import annotations

from benchwright.runner.workloads.descriptor import Props, SeedView, WorkloadDescriptor, first_number

ROWS_PER_S = 20_000.0  # a modest bulk-load rate on a mid-size server (experiments/sizing.py)
ROWS_PER_WAREHOUSE = 500_000  # stock 100k + customer 30k + history 30k + orders 30k + order_line ~300k
ITEM_ROWS = 100_000


def load_seconds(props: Props) -> float:
    """The item table, then each warehouse's rows, at a bulk-load rate."""
    warehouses = first_number(props, "tpcc.warehouses", "warehouses", default=1)
    return (ITEM_ROWS + warehouses * ROWS_PER_WAREHOUSE) / ROWS_PER_S


DESCRIPTOR = WorkloadDescriptor(
    name="tpcc",
    load_seconds=load_seconds,
    fixed_requests=None,
    dataset_bytes=None,
    usage_shape=None,  # no I/O model: a cost dimension that needs one says so
    write_operations=frozenset(),
    size_property="tpcc.warehouses",
    from_data_size=None,
    field_records=False,
    native_tools=(),
    property_namespace="tpcc.",
    known_properties=frozenset({"warehouses", "batch", "mix", "think_time"}),
    quick_caps={"warehouses": 1},
    load_share=None,
    run_needs_own_load=lambda props: False,
    report_groups={},
    default_metrics=("tps", "p90"),
    seed_views=(
        SeedView("TPC-C per transaction", None, ("tps", "p90")),
        SeedView("TPC-C", None, ("tpmC", "retries", "errors")),
    ),
    result_aliases=(),
)
