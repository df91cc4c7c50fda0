"""What the rest of Benchwright asks about pgbench-compatible TPC-B (runner/workloads/descriptor.py)."""

from __future__ import annotations

from benchwright.runner.workloads.descriptor import (
    Props,
    SeedView,
    UsageShape,
    WorkloadDescriptor,
    first_number,
)

ROWS_PER_SCALE = 100_000  # pgbench_accounts
ROW_BYTES = 100.0  # pgbench_accounts: aid, bid, abalance, filler char(84)
# the seed's ``pgbench -i --scale=10000``, 1e9 rows, took 5,978 s: 167,000 rows/s with COPY
ROWS_PER_S = 150_000.0


def load_seconds(props: Props) -> float:
    """pgbench_accounts' rows at a bulk-load rate."""
    return first_number(props, "tpcb.scale", "scale", default=1) * ROWS_PER_SCALE / ROWS_PER_S


def usage_shape(props: Props, load: Props) -> UsageShape:
    """Per transaction, pgbench's script: 1 SELECT, 3 UPDATEs, 1 INSERT; the load's rows by scale."""
    try:
        scale = float(load.get("tpcb.scale") or 0) or 1.0
    except ValueError:
        scale = 1.0
    return UsageShape(1.0, 4.0, ROW_BYTES, ROW_BYTES, ROW_BYTES, scale * ROWS_PER_SCALE, per_transaction=True)


DESCRIPTOR = WorkloadDescriptor(
    name="tpcb",
    load_seconds=load_seconds,
    fixed_requests=None,
    dataset_bytes=None,
    usage_shape=usage_shape,
    write_operations=frozenset(),
    size_property="tpcb.scale",
    from_data_size=None,
    field_records=False,
    native_tools=("pgbench",),
    property_namespace="tpcb.",
    known_properties=frozenset({"scale", "fillfactor", "script", "protocol", "batch", "init_steps"}),
    quick_caps={"scale": 1},
    load_share=None,
    run_needs_own_load=lambda props: False,
    report_groups={},
    default_metrics=("tps", "avg", "stddev"),
    seed_views=(SeedView("pgbench", None, ("tps", "avg", "stddev", "errors")),),
    result_aliases=("pgbench",),
)
