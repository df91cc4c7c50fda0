"""Linked matrix axes (``matrix.zip``): entries vary together and combine with the other axes."""

from __future__ import annotations

import pytest

from benchwright.errors import SpecError
from benchwright.local import scale_down
from benchwright.spec import expand_matrix, parse_spec

BASE = {
    "name": "exp2",
    "target": {"provider": "local", "engine": "redis"},
    "workload": {"name": "ycsb", "files": ["workloadc"], "properties": {"recordcount": 100000}},
}


def spec_with(matrix: dict) -> dict:
    return {**BASE, "matrix": matrix}


def test_zip_links_datatype_with_fieldcount_and_crosses_the_other_axes() -> None:
    spec = parse_spec(spec_with({
        "zip": [
            {"workload.properties.redis.datatype": "string", "workload.properties.fieldcount": 1},
            {"workload.properties.redis.datatype": "hash", "workload.properties.fieldcount": 10},
        ],
        "workload.properties.fieldlength": [128, 1024],
    }))  # fmt: skip
    cells = expand_matrix(spec)
    assert [c.cell_id for c in cells] == [
        "redis.datatype=string,fieldcount=1,fieldlength=128",
        "redis.datatype=string,fieldcount=1,fieldlength=1024",
        "redis.datatype=hash,fieldcount=10,fieldlength=128",
        "redis.datatype=hash,fieldcount=10,fieldlength=1024",
    ]
    props = cells[1].spec.workload.properties
    assert (props["redis.datatype"], props["fieldcount"], props["fieldlength"]) == ("string", 1, 1024)
    assert cells[1].parameters["workload.properties.fieldcount"] == 1


def test_zip_entries_must_name_the_same_paths() -> None:
    bad = spec_with({"zip": [{"workload.properties.fieldcount": 1}, {"workload.properties.fieldlength": 9}]})
    with pytest.raises(SpecError, match=r"zip\[1\]: every entry names the same paths"):
        parse_spec(bad)
    with pytest.raises(SpecError, match=r"zip\[0\]: a mapping"):
        parse_spec(spec_with({"zip": ["fieldcount=1"]}))


def test_quick_caps_properties_inside_zip_entries() -> None:
    spec = parse_spec(spec_with({"zip": [
        {"workload.properties.fieldlength": 4096, "workload.properties.recordcount": 200000},
        {"workload.properties.fieldlength": 128, "workload.properties.recordcount": 6000000},
    ]}))  # fmt: skip
    small = scale_down(spec)
    cells = expand_matrix(small)
    counts = [c.spec.workload.properties["recordcount"] for c in cells]
    # capped at 500, but scaled rather than merged: the entries keep their proportion (200k : 6M)
    assert counts == [16, 500]
    assert [c.spec.workload.properties["fieldlength"] for c in cells] == [1000, 128]
