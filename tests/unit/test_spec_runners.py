"""spec/runners.py: the runner section owns its sizes, defaults included, and refuses what no
launcher could start."""

from __future__ import annotations

from typing import Any

import pytest

from benchwright.errors import SpecError
from benchwright.spec import RunnerSpec, parse_spec
from benchwright.spec.runners import (
    FARGATE_DEFAULT_MEMORY_MB,
    FARGATE_DEFAULT_VCPU,
    FargateSize,
    fargate_size,
)

RDS = {
    "provider": "rds",
    "engine": "postgres",
    "engine_version": "16.4",
    "instance_class": "db.m6i.large",
    "storage": {"type": "gp3", "size_gb": 100},
}


def spec(runner: dict[str, Any]) -> dict[str, Any]:
    return {
        "name": "r",
        "target": RDS,
        "runner": runner,
        "workload": {"name": "ycsb", "files": ["workloada"]},
    }


@pytest.mark.parametrize(
    ("size", "expected"),
    [
        ({}, (2.0, 4096)),  # the stack's runner task definition
        ({"cpu": 4}, (4.0, 8192)),  # the least memory 4 vCPU allows
        ({"cpu": 0.25}, (0.25, 512)),
        ({"memory_mb": 16384}, (2.0, 16384)),  # the default CPU holds it
        ({"memory_mb": 1024}, (0.25, 1024)),  # it does not: the smallest CPU that does
        ({"memory_mb": 30000}, (4.0, 30000)),
        ({"cpu": 8, "memory_mb": 20480}, (8.0, 20480)),
    ],
)
def test_a_fargate_runner_size_is_what_the_spec_says_with_the_rest_filled_in(
    size: dict[str, Any], expected: tuple[float, int]
) -> None:
    runner = RunnerSpec.model_validate({"platform": "fargate", "size": size})
    assert runner.size.fargate == expected
    assert runner.size.fargate.cpu_units == int(expected[0] * 1024)
    # what the price book reads (providers/aws/pricing.py) is the same size
    assert (runner.size.fargate_vcpu, runner.size.fargate_memory_mb) == expected


def test_the_default_fargate_size_is_the_stacks_task_definition() -> None:
    """An unsized runner is started with overrides of the spec's size: it must be what the stack
    deploys by default, or the default would silently change the runner a nightly suite gets."""
    from infra.config import RunnerConfig

    stack = RunnerConfig()
    default = fargate_size(None, None)
    assert default == FargateSize(FARGATE_DEFAULT_VCPU, FARGATE_DEFAULT_MEMORY_MB)
    assert (default.cpu_units, default.memory_mb) == (stack.fargate_cpu, stack.fargate_memory_mib)


@pytest.mark.parametrize(
    ("runner", "words"),
    [
        ({"platform": "fargate", "size": {"memory_mb": 200000}}, "fits no Fargate CPU size"),
        ({"platform": "fargate", "size": {"cpu": 4, "memory_mb": 32768}}, "8192-30720 MiB"),
        ({"platform": "fargate", "size": {"cpu": 3}}, "not a Fargate size"),
        ({"platform": "fargate", "size": {"instance_type": "c6i.large"}}, "for platform ec2"),
        ({"platform": "ec2", "size": {"instance_type": "t3.large"}}, "burstable"),
        ({"class": "smoke", "platform": "ec2"}, "class smoke runs on platform fargate"),
        ({"class": "measured", "platform": "fargate"}, "class measured runs on platform ec2"),
        ({"class": "smoke", "instance_type": "c6i.large"}, "instance_type is for a measured runner"),
        ({"instance_type": "c6i.large", "size": {"instance_type": "m6i.large"}}, "disagree"),
        ({"instance_type": "c6i large"}, "not an EC2 instance type"),
        ({"class": "fast"}, "'measured' or 'smoke'"),
        ({"platform": "ec2", "size": {"instance_type": "c6i.large", "memory_mb": 8192}}, "are for Fargate"),
        ({"platform": "fargate", "placement": "any"}, "use same-az, other-az"),
        ({"platform": "fargate", "placement": ""}, "use same-az, other-az"),
    ],
    ids=[
        "no-cpu-holds",
        "over-4-vcpu-max",
        "odd-cpu",
        "fargate-instance-type",
        "ec2-burstable",
        "smoke-on-ec2",
        "measured-on-fargate",
        "smoke-pinned",
        "two-types",
        "bad-type",
        "bad-class",
        "ec2-fargate-size",
        "placement-any",
        "placement-empty",
    ],
)
def test_a_runner_no_launcher_could_start_is_refused_naming_the_field(
    runner: dict[str, Any], words: str
) -> None:
    with pytest.raises(SpecError, match=words) as caught:
        parse_spec(spec(runner))
    assert caught.value.field.startswith("runner")


def test_an_ec2_runner_has_its_instance_type_and_no_fargate_size() -> None:
    runner = RunnerSpec.model_validate({"platform": "ec2", "size": {"instance_type": "c6i.8xlarge"}})
    assert runner.ec2_instance_type == "c6i.8xlarge"
    with pytest.raises(SpecError, match="instance_type"):
        _ = RunnerSpec(platform="fargate").ec2_instance_type


def test_the_default_measured_runner_passes_the_apis_default_allow_list_and_a_narrower_one_refuses_it() -> (
    None
):
    """The filled-in type is held to the stage's api.instance_types like a written one."""
    from benchwright.api.limits import ApiLimits, check_limits

    measured = parse_spec(spec({}))
    assert (measured.runner.cls, measured.runner.size.instance_type) == ("measured", "c6i.large")
    check_limits(measured, ApiLimits())
    with pytest.raises(SpecError, match=r"c6i\.large is not in the stage.s api\.instance_types") as caught:
        check_limits(measured, ApiLimits(instance_types=("db.*", "m6i.*")))
    assert caught.value.field == "runner.size.instance_type"
