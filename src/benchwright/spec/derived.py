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

from typing import Any


def derive(name: str, files: list[str], properties: dict[str, Any], data_size: int | None) -> set[str]:
    """Fill in ``properties`` (in place) with what the other settings decide; the keys it added.
    ValueError on a conflict."""
    added: set[str] = set()
    if str(properties.get("redis.datatype", "")).lower() == "string" and "fieldcount" not in properties:
        properties["fieldcount"] = 1
        added.add("fieldcount")
    if data_size is None:
        return added
    from benchwright.runner.workloads.registry import descriptors

    found = descriptors()
    own = found.get(name)
    if own is None or own.from_data_size is None:
        sizes = [d.size_property for d in found.values() if d.from_data_size is None and d.size_property]
        raise ValueError(
            f"data_size sizes YCSB records; workload {name!r} is sized by its own properties "
            f"({', '.join(sizes)})"
        )
    return added | own.from_data_size(files, properties, data_size)
