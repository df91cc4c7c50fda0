"""Derived properties (benchwright.spec.derived): fieldcount from a string datatype, recordcount from a
data size, per matrix cell; conflicts named; dumps keep only what was written; --quick keeps the shape."""

from __future__ import annotations

from typing import Any

import pytest

from benchwright.errors import SpecError
from benchwright.quick import scale_down
from benchwright.sharing import plan
from benchwright.spec import expand_matrix, parse_spec, spec_dict, workload_properties

BASE: dict[str, Any] = {
    "name": "derived",
    "target": {"provider": "local", "engine": "redis"},
    "workload": {"name": "ycsb", "files": ["workloadc"], "data_size": "1MiB"},
    "matrix": {
        "workload.properties.redis.datatype": ["string", "hash"],
        "workload.properties.fieldlength": [100, 1000],
    },
}


def test_each_cell_derives_its_fieldcount_and_recordcount_from_what_was_written() -> None:
    cells = {c.cell_id: workload_properties(c.spec) for c in expand_matrix(parse_spec(BASE))}
    got = {cell: (int(p.get("fieldcount", 10)), int(p["recordcount"])) for cell, p in cells.items()}
    assert got == {  # ceil(1 MiB / (fieldcount x fieldlength)); YCSB's default fieldcount is 10
        "redis.datatype=string,fieldlength=100": (1, 10486),
        "redis.datatype=string,fieldlength=1000": (1, 1049),
        "redis.datatype=hash,fieldlength=100": (10, 1049),
        "redis.datatype=hash,fieldlength=1000": (10, 105),
    }
    # every cell is its own dataset: the derived recordcount shapes the data
    assert len(plan([(c, 0) for c in expand_matrix(parse_spec(BASE))])[0].datasets) == 4


def test_a_dump_keeps_what_was_written_and_re_validates_to_the_same_cell() -> None:
    cell = expand_matrix(parse_spec(BASE))[0]
    dumped = spec_dict(cell.spec)
    assert (
        "recordcount" not in dumped["workload"]["properties"] and dumped["workload"]["data_size"] == 1048576
    )
    again = parse_spec(dumped)
    assert workload_properties(again) == workload_properties(cell.spec)


@pytest.mark.parametrize(
    ("workload", "message"),
    [
        ({"properties": {"recordcount": 5}}, "recordcount 5 disagrees with data_size 1048576"),
        ({"name": "tpcc", "files": []}, "data_size sizes YCSB records"),
    ],
)
def test_conflicts_are_refused_naming_both_settings(workload: dict[str, Any], message: str) -> None:
    data = {**BASE, "target": {"provider": "local", "engine": "postgres"}, "matrix": {}}
    data["workload"] = {**BASE["workload"], **workload}
    with pytest.raises(SpecError, match=message):
        parse_spec(data)


def test_a_written_string_fieldcount_other_than_one_is_still_refused() -> None:
    data = {**BASE, "matrix": {}}
    data["workload"] = {**BASE["workload"], "properties": {"redis.datatype": "string", "fieldcount": 4}}
    with pytest.raises(SpecError, match="fieldcount"):
        parse_spec(data)


def test_quick_turns_data_sizes_into_small_record_counts_with_the_same_proportions() -> None:
    data = {**BASE, "matrix": {"workload.data_size": ["1GiB", "4GiB"]}}
    small = scale_down(parse_spec(data))
    assert small.workload.data_size is None
    assert small.matrix == {"workload.properties.recordcount": [125, 500]}


def test_a_ycsb_run_that_inserts_gets_a_load_of_its_own() -> None:
    """Workloads A, B, C share one load; D and E (inserts past recordcount) each load again."""
    spec = {
        "name": "mixes",
        "target": {"provider": "local", "engine": "redis"},
        "workload": {"name": "ycsb", "properties": {"recordcount": 1000}},
        "matrix": {
            "workload.files": [["workloada"], ["workloadb"], ["workloadd"], ["workloadc"], ["workloade"]]
        },
    }
    cells = expand_matrix(parse_spec(spec))
    datasets = plan([(c, 0) for c in cells])[0].datasets
    members = sorted(sorted(item.cell.cell_id for item in d.items) for d in datasets)
    assert len(datasets) == 3, members
    assert [len(d.items) for d in datasets].count(3) == 1  # a, b and c on one load
