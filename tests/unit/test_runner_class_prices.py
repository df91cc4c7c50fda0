"""Issue 27 part 1: `validate` prices both runner classes and marks the chosen one; the other class
is the same spec with its runner on the nearest size of the other platform. Prices come from the
saved GetProducts responses (tests/data/pricing): Pricing has no moto backend."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from benchwright.cli import main
from benchwright.experiments.budget import estimate_spec
from benchwright.experiments.runner_classes import class_costs, other_class
from benchwright.providers.aws.pricing import ExcerptPriceList
from benchwright.spec import load_spec, parse_spec
from benchwright.spec.runners import DEFAULT_RUNNER_INSTANCE_TYPE

ROOT = Path(__file__).resolve().parents[2]
PRICES = ROOT / "tests" / "data" / "pricing"
RDS = {
    "provider": "rds",
    "engine": "postgres",
    "engine_version": "16.4",
    "instance_class": "db.m6i.large",
    "storage": {"type": "gp3", "size_gb": 100},
}


def spec(runner: dict[str, Any] | None, **extra: Any) -> Any:
    data: dict[str, Any] = {
        "name": "classes",
        "target": RDS,
        "workload": {"name": "ycsb", "files": ["workloada"], "phases": {"run": {"duration_s": 600}}},
        **extra,
    }
    if runner is not None:
        data["runner"] = runner
    return parse_spec(data)


def test_a_default_spec_is_priced_as_measured_with_smoke_beside_it() -> None:
    prices = ExcerptPriceList.from_directory(str(PRICES), "us-east-1")
    default = spec(None)
    budget = estimate_spec(default, prices)
    assert budget.missing == []
    assert any(name == f"ec2 runner 1 x {DEFAULT_RUNNER_INSTANCE_TYPE}" for name, _, _ in budget.line_items())
    measured, smoke = class_costs(default, budget, prices)
    assert (measured.runner_class, measured.chosen, measured.runs_on) == ("measured", True, "ec2 c6i.large")
    assert (smoke.runner_class, smoke.chosen, smoke.runs_on) == ("smoke", False, "fargate 2 vCPU / 4 GB")
    assert measured.missing == [] and smoke.missing == []
    # c6i.large $0.085/h against Fargate 2 x $0.04048 + 4 x $0.004445 = $0.09874/h: the runner's line
    # is the only difference between the two totals
    assert smoke.runner_usd > measured.runner_usd > 0
    assert smoke.total_usd - measured.total_usd == pytest.approx(
        smoke.runner_usd - measured.runner_usd, abs=2e-3
    )
    assert measured.total_usd == budget.total_usd


@pytest.mark.parametrize(
    ("runner", "other"),
    [
        ({"class": "smoke", "size": {"cpu": 4}}, ("measured", "ec2", "c6i.xlarge")),
        ({"class": "smoke", "size": {"cpu": 0.5}}, ("measured", "ec2", "c6i.large")),  # the smallest c6i
        ({"instance_type": "c6i.8xlarge"}, ("smoke", "fargate", 16.0)),  # Fargate's largest
        ({"instance_type": "m6i.xlarge"}, ("smoke", "fargate", 4.0)),
        ({"instance_type": "c6i.metal"}, ("smoke", "fargate", 2.0)),  # size unknown: the default
    ],
)
def test_the_other_class_is_the_nearest_size_on_the_other_platform(
    runner: dict[str, Any], other: tuple[str, str, object]
) -> None:
    alt = other_class(spec({**runner, "placement": "same-az", "count": 2}))
    size = alt.runner.size.instance_type if alt.runner.platform == "ec2" else alt.runner.size.fargate.cpu
    assert (alt.runner.cls, alt.runner.platform, size) == other
    assert (alt.runner.count, alt.runner.placement) == (2, "same-az")


def test_a_matrix_over_the_fargate_size_leaves_the_other_class_unpriced_and_says_why() -> None:
    prices = ExcerptPriceList.from_directory(str(PRICES), "us-east-1")
    sized = spec({"class": "smoke"}, matrix={"runner.size.cpu": [2, 4]})
    budget = estimate_spec(sized, prices)
    costs = class_costs(sized, budget, prices)
    measured = next(c for c in costs if c.runner_class == "measured")
    assert measured.why_not is not None and "size.cpu" in measured.why_not
    assert next(c for c in costs if c.chosen).runner_class == "smoke"


def test_validate_shows_both_classes_and_the_chosen_one(capsys: pytest.CaptureFixture[str]) -> None:
    path = ROOT / "examples" / "exp3-rds-mysql-storage.aws.yaml"  # a measured runner, pinned c6i.xlarge
    assert load_spec(path).runner.cls == "measured"
    assert main(["validate", str(path), "--prices", str(PRICES)]) == 0
    out = capsys.readouterr().out
    assert "runner measured (ec2 c6i.xlarge)" in out
    table = out.split("runner classes")[1]
    rows = [line for line in table.splitlines() if line.startswith("│")]
    assert any("measured" in r and "ec2 c6i.xlarge" in r and "chosen" in r for r in rows), rows
    # the other class: Fargate of the same size (4 vCPU / 8 GiB), priced but not chosen
    assert any("smoke" in r and "fargate 4 vCPU / 8 GB" in r and "chosen" not in r for r in rows), rows
    assert not any(" ? " in r for r in rows), rows  # both priced
