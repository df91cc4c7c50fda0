"""What the rest of Benchwright asks about the YCSB core workload (runner/workloads/descriptor.py)."""

from __future__ import annotations

import math
from typing import Any

from benchwright.runner.workloads.descriptor import Props, SeedView, UsageShape, WorkloadDescriptor
from benchwright.runner.workloads.ycsb.properties import core_settings, load_properties

DEFAULT_FIELDCOUNT = 10
DEFAULT_FIELDLENGTH = 100
COLUMNS = ("operations", "throughput", "avg", "min", "max", "p95", "p99")


def _number(props: dict[str, Any], key: str, default: int) -> int:
    try:
        return int(float(props.get(key, default)))
    except (TypeError, ValueError):
        return default


def from_data_size(files: list[str], properties: dict[str, Any], data_size: int) -> set[str]:
    """``recordcount`` from ``workload.data_size``: the records whose fields make that much data
    (spec/derived.py); ValueError when a written recordcount disagrees."""
    known: dict[str, Any] = dict(properties)
    if files:
        known = load_properties(list(files), {k: str(v) for k, v in properties.items()})
    fieldcount = _number(known, "fieldcount", DEFAULT_FIELDCOUNT)
    fieldlength = _number(known, "fieldlength", DEFAULT_FIELDLENGTH)
    records = max(1, math.ceil(data_size / max(1, fieldcount * fieldlength)))
    written = properties.get("recordcount")
    if written is not None and _number(properties, "recordcount", -1) != records:
        raise ValueError(
            f"properties.recordcount {written} disagrees with data_size {data_size} bytes, which makes "
            f"{records} records of {fieldcount} x {fieldlength} bytes: give one of them"
        )
    if written is None:
        properties["recordcount"] = records
        return {"recordcount"}
    return set()


def dataset_bytes(props: Props) -> tuple[int, int]:
    """Keys and bytes of each key's value in a Redis hash (field names and values, plus its header)."""
    records = int(float(props.get("recordcount", "1000")))
    fields = int(props.get("fieldcount", "10"))
    length = int(props.get("fieldlength", "100"))
    per_field = length + len(props.get("fieldnameprefix", "field")) + 2
    return records, fields * per_field + 24


def usage_shape(props: Props, load: Props) -> UsageShape:
    """Its proportions, record and field sizes (a scan reads its average length of records)."""
    s = core_settings(dict(props))
    record = float(s.fieldcount * s.fieldlength)
    field = float(s.fieldlength)
    scan = (s.minscanlength + s.maxscanlength) / 2.0
    reads = s.readproportion + s.readmodifywriteproportion + s.scanproportion * scan
    update_bytes = record if s.writeallfields else field
    writes = s.updateproportion + s.insertproportion + s.readmodifywriteproportion
    written = s.updateproportion * update_bytes + s.insertproportion * record
    written += s.readmodifywriteproportion * update_bytes
    return UsageShape(reads, writes, record, written / writes if writes else 0.0, record)


def load_share(props: dict[str, str], count: int, index: int) -> dict[str, str]:
    """Fan-out YCSB load: each runner inserts its own contiguous slice of the key range
    (insertstart / insertcount), so N runners load the table once, not N times over the same keys."""
    if count == 1:
        return {}
    start = int(props.get("insertstart") or 0)
    total = int(props.get("insertcount") or max(0, int(props.get("recordcount") or 0) - start))
    offset = start + sum(_part(total, count, i) for i in range(index))
    return {"insertstart": str(offset), "insertcount": str(_part(total, count, index))}


def _part(total: int, parts: int, index: int) -> int:
    return total // parts + (1 if index < total % parts else 0)


def run_inserts(props: Props) -> bool:
    """A run that inserts grows the table: the next cell would not find the data as loaded."""
    try:
        return float(props.get("insertproportion", "0")) > 0
    except ValueError:  # validation names the field; here it only must not share
        return True


DESCRIPTOR = WorkloadDescriptor(
    name="ycsb",
    load_seconds=None,
    fixed_requests=None,
    dataset_bytes=dataset_bytes,
    usage_shape=usage_shape,
    write_operations=frozenset({"UPDATE", "INSERT", "READ-MODIFY-WRITE", "DELETE"}),
    size_property="recordcount",
    from_data_size=from_data_size,
    field_records=True,
    native_tools=(),
    property_namespace=None,  # YCSB's own keys are checked by ycsb/properties.py
    known_properties=frozenset(),
    quick_caps={"recordcount": 500, "insertcount": 500, "fieldlength": 1000},
    load_share=load_share,
    run_needs_own_load=run_inserts,
    report_groups={"ycsb": COLUMNS},
    default_metrics=("ycsb",),
    seed_views=(
        SeedView("YCSB load", "load", ("ycsb", "runtime")),
        SeedView("YCSB run", None, ("ycsb", "runtime")),
    ),
    result_aliases=(),
)
