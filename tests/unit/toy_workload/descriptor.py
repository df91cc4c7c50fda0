"""What the rest of Benchwright asks about the toy ``kv-scan`` workload."""

from __future__ import annotations

from benchwright.runner.workloads.descriptor import (
    Props,
    SeedView,
    UsageShape,
    WorkloadDescriptor,
    first_number,
)

KEY_BYTES = 100  # one value per key
ROWS_PER_S = 10_000.0


def load_seconds(props: Props) -> float:
    return first_number(props, "kvscan.keys_loaded", default=1000) / ROWS_PER_S


def dataset_bytes(props: Props) -> tuple[int, int]:
    return int(first_number(props, "kvscan.keys_loaded", default=1000)), KEY_BYTES


def usage_shape(props: Props, load: Props) -> UsageShape:
    """A scan reads ``kvscan.length`` values; the load writes one value a key."""
    length = first_number(props, "kvscan.length", default=10)
    return UsageShape(
        1.0, 0.0, length * KEY_BYTES, 0.0, KEY_BYTES, first_number(load, "kvscan.keys_loaded", default=1000)
    )


DESCRIPTOR = WorkloadDescriptor(
    name="kv-scan",
    load_seconds=load_seconds,
    fixed_requests=None,
    dataset_bytes=dataset_bytes,
    usage_shape=usage_shape,
    write_operations=frozenset({"INSERT"}),
    size_property="kvscan.keys_loaded",
    from_data_size=None,
    field_records=False,
    native_tools=(),
    property_namespace="kvscan.",
    known_properties=frozenset({"keys_loaded", "length"}),
    quick_caps={"keys_loaded": 300},
    load_share=None,
    run_needs_own_load=lambda props: False,
    report_groups={"kvscan": ("throughput", "avg", "p99")},
    default_metrics=("kvscan",),
    seed_views=(SeedView("kv-scan scans", None, ("kvscan", "runtime")),),
    result_aliases=(),
)
