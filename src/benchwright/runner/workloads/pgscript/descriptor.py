"""What the rest of Benchwright asks about pgbench's scripts (runner/workloads/descriptor.py)."""

from __future__ import annotations

from benchwright.runner.workloads.descriptor import WorkloadDescriptor

DESCRIPTOR = WorkloadDescriptor(
    name="pgbench-script",
    load_seconds=None,  # a run phase only
    fixed_requests=None,
    dataset_bytes=None,
    usage_shape=None,  # no I/O model: a script's statements are its own
    write_operations=frozenset(),
    size_property=None,
    from_data_size=None,
    field_records=False,
    native_tools=(),
    property_namespace=None,  # pgscript.* is written by the pgbench command, not by hand
    known_properties=frozenset(),
    quick_caps={},
    load_share=None,
    run_needs_own_load=lambda props: False,
    report_groups={},
    default_metrics=None,  # the report's fallback columns
    seed_views=(),
    result_aliases=(),
)
