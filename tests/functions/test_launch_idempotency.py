"""A retried LaunchRunner must not start a second runner: every launch carries a token derived from
run id, cell, repeat and runner index (ECS ``clientToken`` + ``startedBy``, EC2 ``ClientToken`` + a
tag), and a repeat of the same launch finds and keeps what the first one started. moto does not
honour client tokens itself, so these tests count what is really running after two launches."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from benchwright.providers.aws.common import Clients, resource_name
from benchwright.providers.aws.config import AwsSettings
from benchwright.providers.aws.launcher import AwsRunnerLauncher, launch_token
from benchwright.providers.aws.names import LAUNCH_TOKEN_TAG
from benchwright.providers.aws.targets import TARGETS
from benchwright.providers.base import Credentials
from benchwright.runner.plan import PhaseConfig, RunnerPlan
from benchwright.spec import RunnerSpec, parse_target
from tests.aws_world import ENV, REGION, runner_infrastructure


@pytest.fixture(scope="module")
def aws() -> Iterator[tuple[AwsSettings, Clients]]:
    from moto import mock_aws

    mp = pytest.MonkeyPatch()
    for k, v in ENV.items():
        mp.setenv(k, v)
    with mock_aws():
        subnets, sg = runner_infrastructure("10.61", bucket="bw-idem-test", cluster="bw")
        settings = AwsSettings(
            region=REGION,
            subnet_ids=subnets,
            security_group_ids=[sg],
            results_bucket="bw-idem-test",
            ecs_cluster="bw",
            runner_task_definition="bw-runner",
            runner_ami="ami-12c6146b",
            runner_image="benchwright-runner:test",
        )
        yield settings, Clients(settings)
    mp.undo()


def target(aws: Any, run_id: str) -> Any:
    settings = {
        "provider": "rds",
        "engine": "postgres",
        "engine_version": "16.4",
        "instance_class": "db.m6i.large",
        "storage": {"type": "gp3", "size_gb": 100},
        "availability_zone": f"{REGION}a",
    }
    t = TARGETS["rds"](
        parse_target(settings), run_id, None, clients=aws[1], config=aws[0], probe=lambda h, p: True
    )
    t.create()
    return t


def plan(run_id: str, index: int = 0, repeat: int = 0) -> RunnerPlan:
    return RunnerPlan(
        run_id=run_id,
        cell_id="c1",
        repeat=repeat,
        runner_index=index,
        runner_count=2,
        phases=[PhaseConfig(workload="ycsb", phase="run", engine="postgres", threads=2, measured=True)],
    )


def sent(client: Any, event: str) -> list[dict[str, Any]]:
    """The parameters of every ``event`` call (e.g. ``ecs.RunTask``) the client really sends."""
    seen: list[dict[str, Any]] = []
    client.meta.events.register(f"before-parameter-build.{event}", lambda params, **_: seen.append(params))
    return seen


def run_tasks(aws: Any, run_id: str) -> list[str]:
    ecs = aws[1]("ecs")
    arns = [
        arn
        for desired in ("RUNNING", "STOPPED")
        for arn in ecs.list_tasks(cluster="bw", desiredStatus=desired)["taskArns"]
    ]
    tasks = ecs.describe_tasks(cluster="bw", tasks=arns, include=["TAGS"])["tasks"] if arns else []
    return [
        t["taskArn"]
        for t in tasks
        if {x["key"]: x["value"] for x in t.get("tags", [])}.get("benchwright:run-id") == run_id
    ]


def test_the_token_is_stable_per_runner_and_valid_for_both_apis() -> None:
    first = launch_token(plan("r-1"))
    assert first == launch_token(plan("r-1"))  # attempt-independent
    others = {
        launch_token(plan("r-1", index=1)),
        launch_token(plan("r-1", repeat=1)),
        launch_token(plan("r-2")),
    }
    assert first not in others and len(others) == 3
    assert len(first) <= 64 and all(33 <= ord(ch) <= 126 for ch in first)


def test_a_repeated_fargate_launch_keeps_the_first_task(aws: Any) -> None:
    t = target(aws, "idem-ecs")
    launcher = AwsRunnerLauncher(aws[1], aws[0], RunnerSpec.model_validate({"platform": "fargate"}))
    calls = sent(aws[1]("ecs"), "ecs.RunTask")

    first = launcher.launch(plan("idem-ecs"), Credentials(), t)
    again = launcher.launch(plan("idem-ecs"), Credentials(), t)  # the retried LaunchRunner
    other = launcher.launch(plan("idem-ecs", index=1), Credentials(), t)  # the second runner

    assert again.id == first.id and other.id != first.id
    assert sorted(run_tasks(aws, "idem-ecs")) == sorted([first.id, other.id])
    assert len(calls) == 2
    assert calls[0]["clientToken"] == calls[0]["startedBy"] == launch_token(plan("idem-ecs"))
    assert calls[1]["clientToken"] == launch_token(plan("idem-ecs", index=1))


def test_a_repeated_launch_after_the_task_stopped_does_not_start_another(aws: Any) -> None:
    t = target(aws, "idem-stop")
    launcher = AwsRunnerLauncher(aws[1], aws[0], RunnerSpec.model_validate({"platform": "fargate"}))
    first = launcher.launch(plan("idem-stop"), Credentials(), t)
    launcher.stop(first)
    again = launcher.launch(plan("idem-stop"), Credentials(), t)
    assert again.id == first.id and run_tasks(aws, "idem-stop") == [first.id]


def test_a_repeated_ec2_launch_keeps_the_first_instance(aws: Any) -> None:
    t = target(aws, "idem-ec2")
    launcher = AwsRunnerLauncher(
        aws[1],
        aws[0],
        RunnerSpec.model_validate({"platform": "ec2", "size": {"instance_type": "c6i.xlarge"}}),
    )
    calls = sent(aws[1]("ec2"), "ec2.RunInstances")

    first = launcher.launch(plan("idem-ec2"), Credentials(), t)
    again = launcher.launch(plan("idem-ec2"), Credentials(), t)

    assert again.id == first.id
    reservations = aws[1]("ec2").describe_instances(
        Filters=[{"Name": "tag:benchwright:run-id", "Values": ["idem-ec2"]}]
    )["Reservations"]
    instances = [i for r in reservations for i in r["Instances"]]
    assert [i["InstanceId"] for i in instances] == [first.id]
    token = launch_token(plan("idem-ec2"))
    assert len(calls) == 1 and calls[0]["ClientToken"] == token
    assert {x["Key"]: x["Value"] for x in instances[0]["Tags"]}[LAUNCH_TOKEN_TAG] == token


def test_targets_and_runners_carry_the_stage_tag_the_budget_filters_on(aws: Any) -> None:
    t = target(aws, "stage-tag")
    handle = AwsRunnerLauncher(aws[1], aws[0], RunnerSpec.model_validate({"platform": "fargate"})).launch(
        plan("stage-tag"), Credentials(), t
    )
    rds = aws[1]("rds")
    arn = rds.describe_db_instances()["DBInstances"]
    db = next(d for d in arn if d["DBInstanceIdentifier"] == resource_name("stage-tag"))
    db_tags = {
        x["Key"]: x["Value"] for x in rds.list_tags_for_resource(ResourceName=db["DBInstanceArn"])["TagList"]
    }
    task = aws[1]("ecs").describe_tasks(cluster="bw", tasks=[handle.id], include=["TAGS"])["tasks"][0]
    task_tags = {x["key"]: x["value"] for x in task["tags"]}
    assert db_tags["benchwright:stage"] == task_tags["benchwright:stage"] == aws[0].stage == "dev"
