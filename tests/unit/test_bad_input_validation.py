"""Issue 14, items 6 and 12: bounded validation and the YAML traps, refused before anything expands."""

from __future__ import annotations

import copy
import resource
import time
from pathlib import Path
from typing import Any

import pytest

from benchwright.errors import SpecError
from benchwright.spec import load_suite, parse_spec, parse_suite
from benchwright.yamlload import loads

BASE: dict[str, Any] = {
    "name": "t",
    "target": {"provider": "local", "engine": "redis"},
    "workload": {"name": "ycsb", "files": ["workloada"], "properties": {"recordcount": 100}},
}
RDS: dict[str, Any] = {
    "provider": "rds",
    "engine": "postgres",
    "engine_version": "16.4",
    "instance_class": "db.m6i.large",
    "storage": {"type": "gp3", "size_gb": 100},
}


# ---------------------------------------------------------------- YAML
def test_duplicate_keys_are_refused_naming_the_line() -> None:
    with pytest.raises(SpecError) as err:
        loads("name: a\nrepeats: 1\nrepeats: 3\n", "s.yaml")
    assert err.value.field == "s.yaml:3" and "duplicate key 'repeats'" in err.value.detail


def test_on_yes_no_stay_strings_and_only_true_false_are_booleans() -> None:
    data = loads("notify: {on: failure}\nx: yes\ny: no\nz: true\nw: off\n")
    assert data == {"notify": {"on": "failure"}, "x": "yes", "y": "no", "z": True, "w": "off"}


def test_a_non_string_key_is_refused() -> None:
    with pytest.raises(SpecError, match="not a string"):
        loads("1: a\n")


def test_an_alias_bomb_is_refused_quickly_and_small() -> None:
    levels = ["a0: &a0 [x, x, x, x, x, x, x, x, x]"]
    for i in range(1, 9):
        prev = f"*a{i - 1}"
        levels.append(f"a{i}: &a{i} [{', '.join([prev] * 9)}]")
    bomb = "\n".join(levels) + "\n"
    assert len(bomb) < 700
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.monotonic()
    with pytest.raises(SpecError, match="aliases"):
        loads(bomb)
    assert time.monotonic() - start < 2
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 50_000  # KiB


@pytest.mark.parametrize(
    "text", ["[" * 5000 + "]" * 5000, "a:\n" + "".join(f"{' ' * i}b{i}:\n" for i in range(1, 60))]
)
def test_deep_nesting_is_a_clear_error(text: str) -> None:
    with pytest.raises(SpecError, match="nested"):
        loads(text)


def test_a_non_utf8_spec_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_bytes(b"name: \xff\xfe\n")
    with pytest.raises(SpecError, match="not UTF-8"):
        load_suite(path)


def test_a_spec_file_that_is_a_directory_or_fifo_is_refused(tmp_path: Path) -> None:
    import os

    os.mkfifo(tmp_path / "fifo.yaml")
    with pytest.raises(SpecError, match="regular file"):
        load_suite(tmp_path / "fifo.yaml")


# ---------------------------------------------------------------- cells
def test_a_million_cell_matrix_is_refused_before_expansion() -> None:
    data = copy.deepcopy(BASE)
    data["matrix"] = {f"tags.k{i}": list(range(10)) for i in range(6)}
    start = time.monotonic()
    with pytest.raises(SpecError) as err:
        parse_spec(data)
    assert time.monotonic() - start < 2
    assert err.value.field == "matrix" and "1,000,000 cells" in err.value.detail


def test_a_cloud_spec_over_the_workflows_64_cells_is_refused_at_validate() -> None:
    data = copy.deepcopy(BASE)
    data["target"] = RDS
    data["runner"] = {"platform": "fargate"}
    data["matrix"] = {"workload.phases.run.threads": list(range(1, 66))}
    with pytest.raises(SpecError, match="at most 64"):
        parse_spec(data)


def test_a_suite_names_the_benchmark_over_the_limit() -> None:
    big = copy.deepcopy(BASE)
    big["name"] = "big"
    big["matrix"] = {"tags.k": list(range(2000))}
    with pytest.raises(SpecError) as err:
        parse_suite({"suite": "s", "benchmarks": [BASE, big]})
    assert err.value.field == "benchmarks[1].matrix"
