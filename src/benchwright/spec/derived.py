"""Derived properties: values a workload's other settings already decide, filled in per matrix cell.

What a YCSB user would otherwise compute by hand for every cell (and get wrong in one of them):

- ``fieldcount`` from ``redis.datatype``: a ``string`` value holds one field, so a string cell with no
  ``fieldcount`` written gets 1 (a written fieldcount other than 1 is still refused, by the driver's
  check). A ``zip`` of datatype with fieldcount is then only needed for the other datatypes.
- ``recordcount`` from ``workload.data_size`` (``8GiB``, ``500MB``, bytes): the records whose fields
  make that much data, ``ceil(data_size / (fieldcount x fieldlength))`` with the cell's own fieldcount
  and fieldlength (spec, then property files, then YCSB's defaults 10 and 100). Keys and per-record
  overhead are not counted, as YCSB does not count them. A matrix over data sizes and field lengths
  keeps every cell at the size asked for. A written ``recordcount`` that disagrees is an error.

Derivation runs whenever a workload section is validated, so every concrete matrix cell gets its own
values in ``properties``. A dump of the spec (the base a matrix expands, a stored run, a cell's state
on AWS) leaves the derived values out, so each re-validation derives them again from what was written.
"""

from __future__ import annotations

import math
from typing import Any

YCSB_DEFAULT_FIELDCOUNT = 10
YCSB_DEFAULT_FIELDLENGTH = 100


def _number(props: dict[str, Any], key: str, default: int) -> int:
    try:
        return int(float(props.get(key, default)))
    except (TypeError, ValueError):
        return default


def derive(name: str, files: list[str], properties: dict[str, Any], data_size: int | None) -> set[str]:
    """Fill in ``properties`` (in place) with what the other settings decide; the keys it added.
    ValueError on a conflict."""
    added: set[str] = set()
    if str(properties.get("redis.datatype", "")).lower() == "string" and "fieldcount" not in properties:
        properties["fieldcount"] = 1
        added.add("fieldcount")
    if data_size is None:
        return added
    if name != "ycsb":
        raise ValueError(
            f"data_size sizes YCSB records; workload {name!r} is sized by its own properties "
            "(tpcc.warehouses, tpcb.scale, oltp.table_size, redisbench.keyspace)"
        )
    known: dict[str, Any] = dict(properties)
    if files:
        from benchwright.runner.workloads.ycsb.properties import load_properties

        known = load_properties(list(files), {k: str(v) for k, v in properties.items()})
    fieldcount = _number(known, "fieldcount", YCSB_DEFAULT_FIELDCOUNT)
    fieldlength = _number(known, "fieldlength", YCSB_DEFAULT_FIELDLENGTH)
    records = max(1, math.ceil(data_size / max(1, fieldcount * fieldlength)))
    written = properties.get("recordcount")
    if written is not None and _number(properties, "recordcount", -1) != records:
        raise ValueError(
            f"properties.recordcount {written} disagrees with data_size {data_size} bytes, which makes "
            f"{records} records of {fieldcount} x {fieldlength} bytes: give one of them"
        )
    if written is None:
        properties["recordcount"] = records
        added.add("recordcount")
    return added
