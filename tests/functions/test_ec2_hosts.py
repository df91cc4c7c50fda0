"""EC2 runner hosts and self-managed EC2 targets as they really boot: a stock Amazon Linux 2023 AMI
(the stack resolves it from AWS's public SSM parameter), user-data that installs what it needs, and
1-minute (detailed) monitoring. The user-data is parsed by the real bash (``bash -n``)."""

from __future__ import annotations

import base64
import shutil
import subprocess
from collections.abc import Iterator
from typing import Any

import pytest

from benchwright.errors import ProvisioningFailed, SpecError
from benchwright.providers.aws.common import Clients
from benchwright.providers.aws.config import AwsSettings
from benchwright.providers.aws.janitor import leftovers
from benchwright.providers.aws.launcher import AwsRunnerLauncher
from benchwright.providers.aws.targets import TARGETS
from benchwright.providers.base import Credentials
from benchwright.runner.entry import runner_arguments
from benchwright.runner.plan import PhaseConfig, RunnerPlan
from benchwright.spec import RunnerSpec, parse_target
from tests.aws_world import ENV, REGION, runner_infrastructure

IMAGE = "123456789012.dkr.ecr.us-east-1.amazonaws.com/benchwright-runner:abc123"


@pytest.fixture(scope="module")
def aws() -> Iterator[tuple[AwsSettings, Clients]]:
    from moto import mock_aws

    mp = pytest.MonkeyPatch()
    for k, v in ENV.items():
        mp.setenv(k, v)
    with mock_aws():
        import boto3

        subnets, sg = runner_infrastructure("10.62", bucket="bw-hosts-test", cluster="bw")
        # the image the stack's SSM public parameter resolves to (moto serves AWS's public parameters)
        ami = boto3.client("ssm", region_name=REGION).get_parameter(
            Name="/aws/service/ami-amazon-linux-latest/al2023-ami-kernel-default-x86_64"
        )["Parameter"]["Value"]
        settings = AwsSettings(
            region=REGION,
            subnet_ids=subnets,
            security_group_ids=[sg],
            results_bucket="bw-hosts-test",
            ecs_cluster="bw",
            runner_task_definition="bw-runner",
            runner_ami=ami,
            runner_image=IMAGE,
        )
        yield settings, Clients(settings)
    mp.undo()


def user_data(aws: Any, instance_id: str) -> str:
    attribute = aws[1]("ec2").describe_instance_attribute(InstanceId=instance_id, Attribute="userData")
    return base64.b64decode(attribute["UserData"]["Value"]).decode()


def bash_parses(script: str) -> None:
    bash = shutil.which("bash")
    assert bash is not None
    out = subprocess.run([bash, "-n"], input=script, capture_output=True, text=True, timeout=30, check=False)
    assert out.returncode == 0, out.stderr


def instance(aws: Any, instance_id: str) -> dict[str, Any]:
    reservations = aws[1]("ec2").describe_instances(InstanceIds=[instance_id])["Reservations"]
    return dict(reservations[0]["Instances"][0])


def rds_target(aws: Any, run_id: str) -> Any:
    settings = {"provider": "rds", "engine": "postgres", "engine_version": "16.4",
                "instance_class": "db.m6i.large", "storage": {"type": "gp3", "size_gb": 100},
                "availability_zone": f"{REGION}a"}  # fmt: skip
    t = TARGETS["rds"](
        parse_target(settings), run_id, None, clients=aws[1], config=aws[0], probe=lambda h, p: True
    )
    t.create()
    return t


def plan(run_id: str) -> RunnerPlan:
    return RunnerPlan(
        run_id=run_id,
        cell_id="c1",
        phases=[PhaseConfig(workload="ycsb", phase="run", engine="postgres", threads=2, measured=True)],
    )


def test_an_ec2_runner_host_installs_docker_and_runs_what_fargate_runs(aws: Any) -> None:
    target = rds_target(aws, "host-1")
    launcher = AwsRunnerLauncher(
        aws[1],
        aws[0],
        RunnerSpec.model_validate({"platform": "ec2", "size": {"instance_type": "c6i.xlarge"}}),
    )
    handle = launcher.launch(plan("host-1"), Credentials(secret_arn="arn:aws:secretsmanager:x"), target)

    script = user_data(aws, handle.id)
    bash_parses(script)
    lines = script.splitlines()
    assert "dnf install -y docker || exit 1" in lines
    login = next(line for line in lines if "docker login" in line)
    assert "aws ecr get-login-password --region us-east-1" in login and IMAGE.split("/")[0] in login
    run = next(line for line in lines if line.startswith("docker run "))
    command = runner_arguments(handle.details["plan"], handle.result_pointer)
    assert run.endswith(f"{IMAGE} {' '.join(command)}")  # the ECS command override, word for word
    assert "--network host" in run and "BENCHWRIGHT_DB_SECRET_ARN=arn:aws:secretsmanager:x" in run
    assert "trap 'shutdown -h now' EXIT" in script  # it terminates itself even when docker fails
    found = instance(aws, handle.id)
    assert found["ImageId"] == aws[0].runner_ami and found["Monitoring"]["State"] == "enabled"
    launcher.stop(handle)


def test_an_ec2_runner_without_an_image_fails_before_launching(aws: Any) -> None:
    target = rds_target(aws, "host-2")
    config = aws[0].model_copy(update={"runner_image": None})
    launcher = AwsRunnerLauncher(
        aws[1],
        config,
        RunnerSpec.model_validate({"platform": "ec2", "size": {"instance_type": "c6i.xlarge"}}),
    )
    with pytest.raises(ProvisioningFailed, match="BENCHWRIGHT_RUNNER_IMAGE"):
        launcher.launch(plan("host-2"), Credentials(), target)
    assert [r.kind for r in leftovers(aws[1], "host-2")] == ["rds-instance"]  # no runner instance


def ec2_target(aws: Any, run_id: str, config: AwsSettings, **settings: Any) -> Any:
    base = {"provider": "ec2", "engine": "redis", "template": "redis-protocol", "instance_type": "t3.micro"}
    return TARGETS["ec2"](parse_target({**base, **settings}), run_id, None, clients=aws[1], config=config,
                          probe=lambda h, p: True)  # fmt: skip


def test_an_ec2_target_boots_with_detailed_monitoring_and_a_parsable_script(aws: Any) -> None:
    t = ec2_target(aws, "tgt-1", aws[0], server="valkey")
    handle = t.create()
    bash_parses(user_data(aws, handle["instances"]))
    assert instance(aws, handle["instances"])["Monitoring"]["State"] == "enabled"
    t.delete()


@pytest.mark.parametrize(
    ("settings", "field"),
    [
        ({"template": "yugabytedb-3node", "engine": "postgres"}, "target.template"),
        ({"server": "ardb"}, "target.server"),
    ],
)
def test_a_target_that_downloads_at_boot_is_refused_without_internet(
    aws: Any, settings: dict[str, Any], field: str
) -> None:
    isolated = aws[0].model_copy(update={"egress": "endpoints"})
    run_id = f"iso-{field.rsplit('.', 1)[-1]}"
    with pytest.raises(SpecError) as info:
        ec2_target(aws, run_id, isolated, **settings).create()
    assert info.value.field == field and "network.egress" in str(info.value)
    assert leftovers(aws[1], run_id) == []  # refused before anything was created


def test_a_package_only_target_still_boots_without_internet(aws: Any) -> None:
    isolated = aws[0].model_copy(update={"egress": "endpoints"})
    t = ec2_target(aws, "iso-ok", isolated, server="redis")
    t.create()
    assert [r.kind for r in leftovers(aws[1], "iso-ok") if r.kind == "ec2-instance"] == ["ec2-instance"]
    t.delete()
