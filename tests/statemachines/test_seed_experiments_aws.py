"""Every seed experiment's AWS spec validates and dry-runs through the workflow in moto.

Each benchmark's matrix is expanded and validated in full (ExpandMatrix, into target groups); its
first cell (which provisions and loads) is executed
through the benchmark state machine with the real handlers, and must leave nothing behind.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from benchwright.stages.suite import expand
from tests.aws_world import World

EXAMPLES = sorted((Path(__file__).resolve().parents[2] / "examples").glob("*.aws.yaml"))


# Known problems outside this workflow, kept visible (strict xfail: they fail loudly once fixed).
KNOWN: dict[str, str] = {}


def for_moto(spec: dict[str, Any]) -> dict[str, Any]:
    """The moto account lives in us-east-1 and moto 5.2.5 lacks Aurora I/O-Optimized storage."""
    text = json.dumps(spec).replace("eu-west-1", "us-east-1").replace("euw1-az", "use1-az")
    adapted = json.loads(text)
    adapted["target"].pop("storage_type", None)
    return adapted


def benchmarks() -> list[Any]:
    out = []
    for path in EXAMPLES:
        data = yaml.safe_load(path.read_text())
        for spec in data.get("benchmarks", [data]):
            marks = (
                [pytest.mark.xfail(reason=KNOWN[spec["name"]], strict=True)] if spec["name"] in KNOWN else []
            )
            out.append(pytest.param(for_moto(spec), id=f"{path.stem}:{spec['name']}", marks=marks))
    return out


def test_there_is_an_aws_spec_for_every_seed_experiment() -> None:
    assert {p.name.split("-")[0] for p in EXAMPLES} >= {"exp1", "exp2", "exp3", "exp4", "exp5"}


@pytest.mark.parametrize("spec", benchmarks())
def test_seed_experiment_dry_runs_through_the_workflow(world: World, spec: dict[str, Any]) -> None:
    groups = expand({"spec": spec, "run_id": f"seed-{spec['name']}", "poll_seconds": 0})["groups"]
    cells = [cell for group in groups for cell in group["cells"]]
    assert cells

    first = cells[0]
    result = world.execute("benchmark", first)
    cost = world.record(first["run_id"])["cells"][0]["cost"] if result["status"] == "SUCCEEDED" else None

    assert result["status"] == "SUCCEEDED", (
        result["cause"],
        world.calls,
        world.record_error(first["run_id"]),
    )
    assert world.leftovers(first["run_id"]) == []
    assert cost is not None and cost["total"] > 0 and "incomplete" not in cost["source"], cost
