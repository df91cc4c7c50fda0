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
    with pytest.raises(SpecError, match="more than 64"):
        parse_spec(data)


def test_a_suite_names_the_benchmark_over_the_limit() -> None:
    big = copy.deepcopy(BASE)
    big["name"] = "big"
    big["matrix"] = {"tags.k": list(range(2000))}
    with pytest.raises(SpecError) as err:
        parse_suite({"suite": "s", "benchmarks": [BASE, big]})
    assert err.value.field == "benchmarks[1].matrix"


# ---------------------------------------------------------------- item 12: values checked at validation
def with_props(props: dict[str, Any], workload: str = "ycsb", engine: str = "redis") -> dict[str, Any]:
    data = copy.deepcopy(BASE)
    data["target"]["engine"] = engine
    data["workload"] = {"name": workload, "properties": props}
    if workload == "ycsb":
        data["workload"]["files"] = ["workloada"]
    return data


@pytest.mark.parametrize(
    ("data", "field", "suggestion"),
    [
        (
            with_props({"tpcc.warehouse": 2}, "tpcc", "postgres"),
            "workload.properties.tpcc.warehouse",
            "tpcc.warehouses",
        ),
        (with_props({"tpcb.scal": 2}, "tpcb", "postgres"), "workload.properties.tpcb.scal", "tpcb.scale"),
        (
            with_props({"redisbench.clientz": 2}, "redis-bench"),
            "workload.properties.redisbench.clientz",
            "redisbench.clients",
        ),
        (with_props({"redis.datatyp": "hash"}), "workload.properties.redis.datatyp", "redis.datatype"),
    ],
)
def test_a_typo_in_our_namespaces_is_refused_with_a_suggestion(
    data: Any, field: str, suggestion: str
) -> None:
    with pytest.raises(SpecError) as err:
        parse_spec(data)
    assert err.value.field == field
    assert f"did you mean {suggestion}?" in err.value.detail


def test_a_typo_in_a_phase_override_is_named_too() -> None:
    data = with_props({})
    data["workload"]["phases"] = {"run": {"properties": {"redis.timeot": 3}}}
    with pytest.raises(SpecError) as err:
        parse_spec(data)
    assert err.value.field == "workload.phases.run.properties.redis.timeot"


def test_every_key_the_source_reads_is_known() -> None:
    """The list of known keys must not fall behind the code: every literal "ns.key" in src/ is in it."""
    import re

    from benchwright.runner.workloads.known_keys import KNOWN

    src = Path(__file__).resolve().parents[2] / "src" / "benchwright"
    prefixes = "|".join(re.escape(p) for p in KNOWN)
    missing = set()
    for path in src.rglob("*.py"):
        for key in re.findall(rf'"((?:{prefixes})[a-z_0-9]+)"', path.read_text()):
            prefix = next(p for p in KNOWN if key.startswith(p))
            if key.removeprefix(prefix) not in KNOWN[prefix] and not key.endswith(".py"):
                missing.add(f"{key} ({path.name})")
    assert {m.split(" ")[0] for m in missing} <= {"redis.conf"}, sorted(missing)  # a file name


@pytest.mark.parametrize("value", [True, False])
def test_a_boolean_is_not_a_count(value: bool) -> None:
    data = copy.deepcopy(BASE)
    data["workload"]["phases"] = {"run": {"threads": value}}
    with pytest.raises(SpecError, match="threads: expected a number"):
        parse_spec(data)
    data["workload"]["phases"] = {"run": {"threads": 3}}
    assert parse_spec(data).workload.phases.run is not None


def test_recordcount_zero_is_refused() -> None:
    with pytest.raises(SpecError) as err:
        parse_spec(with_props({"recordcount": 0}))
    assert err.value.field == "workload.properties.recordcount"


def test_a_record_larger_than_the_generator_makes_is_refused_not_truncated() -> None:
    with pytest.raises(SpecError) as err:
        parse_spec(with_props({"fieldlength": 8000, "fieldcount": 10}))
    assert err.value.field == "workload.properties.fieldlength" and "80,000" in err.value.detail
    parse_spec(with_props({"fieldlength": 6000, "fieldcount": 10}))


@pytest.mark.parametrize(
    "argv",
    [
        ["tpcb", "run", "--url", "postgresql://u@127.0.0.1:1/x", "-R", "-10", "-T", "1"],
        ["tpcb", "run", "--url", "postgresql://u@127.0.0.1:1/x", "-T", "-2"],
        ["sql", "postgres", "-f", "/dev/null", "-T", "nan"],
        ["oltp", "run", "point_select", "--url", "postgresql://u@127.0.0.1:1/x", "--threads", "-1"],
        ["redis-bench", "-p", "1", "-n", "-5"],
    ],
)
def test_negative_or_non_finite_numbers_are_refused_before_connecting(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    from benchwright.cli import main

    assert main(argv) == 2
    assert "must be a finite number >= 0" in capsys.readouterr().err


def test_redisbench_datasize_is_not_allocated_at_validation() -> None:
    data = with_props({"redisbench.datasize": 400_000_000}, "redis-bench")
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    parse_spec(data)
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 100_000  # KiB; 400 MB before
    with pytest.raises(SpecError, match="proto-max-bulk-len"):
        parse_spec(with_props({"redisbench.datasize": 2**30}, "redis-bench"))


def test_an_estimate_over_a_day_needs_yes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from benchwright.cli import main

    spec = tmp_path / "long.yaml"
    spec.write_text(
        "name: long\ntarget: {provider: local, engine: redis}\n"
        "workload: {name: redis-bench, phases: {run: {duration_s: 80000}}}\nrepeats: 3\n"
    )
    out = tmp_path / "out"
    assert main(["run", str(spec), "--out", str(out)]) == 2
    assert "--yes" in capsys.readouterr().err and not out.exists()  # nothing was started
    assert main(["validate", str(spec)]) == 0
    assert "over a day" in capsys.readouterr().out
