"""`validate` and `submit` compare each cloud target group's estimated life with its expires-at and
the execution's timeout, and refuse, naming the group, one that would be cut off mid-run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from benchwright.cli import main
from benchwright.errors import SpecError
from benchwright.group_lifetime import check_group_lifetimes, group_lifetimes
from benchwright.spec import parse_spec
from tests.aws_world import rds_spec


def long_spec(cells: int, run_s: int) -> dict[str, Any]:
    spec = rds_spec("long-grid")
    spec["workload"]["phases"]["run"] = {"threads": 2, "duration_s": run_s}
    if cells > 1:
        spec["matrix"] = {"workload.phases.run.threads": [2 * (i + 1) for i in range(cells)]}
    return spec


def test_a_groups_life_is_the_sum_of_its_cells_and_its_expiry_follows_its_size() -> None:
    (group,) = group_lifetimes(parse_spec(long_spec(3, 7200)), max_run_hours=8)
    assert group.group == "g1" and len(group.cells) == 3
    assert 3 * 7200 < group.seconds < 3 * 7200 + 3600  # three 2-hour runs, one provisioning
    assert group.expiry_h == 12 + 2 * 8 and group.limit_h == 6 * 8
    assert group_lifetimes(parse_spec({**rds_spec(), "target": {"provider": "local", "engine": "postgres"},
                                       "runner": {"platform": "local"}})) == []  # fmt: skip


def test_a_group_past_the_suite_timeout_is_refused_naming_it() -> None:
    with pytest.raises(SpecError) as info:
        check_group_lifetimes(parse_spec(long_spec(3, 7200)), max_run_hours=0.5)
    assert info.value.field == "matrix"
    assert "target group g1" in str(info.value) and "cut off at 3 h" in str(info.value)


def test_one_cell_past_the_benchmark_timeout_is_refused() -> None:
    with pytest.raises(SpecError) as info:
        check_group_lifetimes(parse_spec(long_spec(1, 3 * 3600)), max_run_hours=2)
    assert info.value.field == "workload.phases" and "cut off at 2 h" in str(info.value)


def test_validate_prints_each_group_and_refuses_before_anything_is_created(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "long.yaml"
    path.write_text(yaml.safe_dump(long_spec(3, 7200)))
    assert main(["validate", str(path), "--prices", "tests/data/pricing"]) == 0
    assert "long-grid target group g1 (3 cell(s))" in capsys.readouterr().out.replace("\n", " ")
    assert main(["validate", str(path), "--max-run-hours", "0.5", "--prices", "tests/data/pricing"]) != 0
    err = capsys.readouterr().err
    assert "matrix" in err and "target group g1" in err
