"""Runner launch (ECS Fargate / EC2 in the chosen AZ), fan-out merging, and CloudWatch metrics."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from benchwright.errors import RunnerFailed, SpecError
from benchwright.judge.credits import cloud_window_flags, credit_regime, judge_credits
from benchwright.merge import merge_runner_results
from benchwright.providers.aws.cloudwatch import CloudWatchMetrics
from benchwright.providers.aws.common import Clients
from benchwright.providers.aws.config import AwsSettings
from benchwright.providers.aws.launcher import AwsRunnerLauncher
from benchwright.providers.aws.targets import TARGETS
from benchwright.providers.base import Credentials, MetricsWindow
from benchwright.results import MetricPoint, MetricSeries, ResultDocument
from benchwright.runner.entry import runner_arguments
from benchwright.runner.main import write_output
from benchwright.runner.plan import PhaseConfig, RunnerPlan
from benchwright.spec import RunnerSpec, parse_target
from tests.aws_world import ENV, REGION, runner_infrastructure, sample_documents


@pytest.fixture(scope="module")
def aws() -> Iterator[tuple[AwsSettings, Clients]]:
    from moto import mock_aws

    mp = pytest.MonkeyPatch()
    for k, v in ENV.items():
        mp.setenv(k, v)
    with mock_aws():
        subnets, sg = runner_infrastructure("10.60", bucket="bw-runner-test", cluster="bw")
        settings = AwsSettings(
            region=REGION,
            subnet_ids=subnets,
            security_group_ids=[sg],
            results_bucket="bw-runner-test",
            ecs_cluster="bw",
            runner_task_definition="bw-runner",
            runner_ami="ami-12c6146b",
            runner_image="benchwright-runner:test",
        )
        yield settings, Clients(settings)
    mp.undo()


def rds(aws: Any, az: str, run_id: str) -> Any:
    settings = {
        "provider": "rds",
        "engine": "postgres",
        "engine_version": "16.4",
        "instance_class": "db.m6i.large",
        "storage": {"type": "gp3", "size_gb": 100},
        "availability_zone": az,
    }
    t = TARGETS["rds"](
        parse_target(settings), run_id, None, clients=aws[1], config=aws[0], probe=lambda h, p: True
    )
    t.create()
    assert t.status() == "ready"
    return t


def plan(run_id: str, index: int = 0, count: int = 1) -> RunnerPlan:
    return RunnerPlan(
        run_id=run_id,
        cell_id="default",
        runner_index=index,
        runner_count=count,
        connection={"postgres.url": "postgresql://bench@db:5432/bench"},
        phases=[PhaseConfig(workload="ycsb", phase="run", engine="postgres", threads=8, measured=True)],
    )


@pytest.mark.parametrize(
    ("placement", "expected"),
    [("same-az", "us-east-1b"), ("other-az", "us-east-1a"), ("us-east-1c", "us-east-1c")],
)
def test_fargate_runner_lands_in_the_chosen_az_and_records_the_az_id(
    aws: Any, placement: str, expected: str
) -> None:
    target = rds(aws, f"{REGION}b", f"place-{placement}")
    launcher = AwsRunnerLauncher(
        aws[1],
        aws[0],
        RunnerSpec.model_validate(
            {"platform": "fargate", "placement": placement, "size": {"cpu": 2, "memory_mb": 4096}}
        ),
    )

    handle = launcher.launch(
        plan(f"place-{placement}"), Credentials(secret_arn="arn:aws:secretsmanager:x"), target
    )

    assert handle.details["availability_zone"] == expected
    assert handle.details["availability_zone_id"].startswith("use1-az")
    task = aws[1]("ecs").describe_tasks(cluster="bw", tasks=[handle.id], include=["TAGS"])["tasks"][0]
    subnet = next(d["value"] for d in task["attachments"][0]["details"] if d["name"] == "subnetId")
    assert subnet == handle.details["subnet"]
    override = task["overrides"]["containerOverrides"][0]
    assert override["command"] == runner_arguments(handle.details["plan"], handle.result_pointer)
    assert handle.details["plan"].startswith("s3://")  # composed with the image: test_runner_argv.py
    assert {e["name"]: e["value"] for e in override["environment"]} == {
        "BENCHWRIGHT_DB_SECRET_ARN": "arn:aws:secretsmanager:x",
        "BENCHWRIGHT_AZ": expected,  # the result's host.availability_zone(_id)
        "BENCHWRIGHT_AZ_ID": handle.details["availability_zone_id"],
    }
    tags = {t["key"]: t["value"] for t in task["tags"]}
    assert tags["benchwright:run-id"] == f"place-{placement}"


@pytest.mark.parametrize(
    ("size", "cpu_units", "memory_mb"),
    [({}, "2048", 4096), ({"cpu": 4}, "4096", 8192), ({"memory_mb": 1024}, "256", 1024)],
    ids=["unsized", "cpu-only", "memory-only"],
)
def test_a_fargate_task_starts_at_the_size_the_spec_gives_defaults_included(
    aws: Any, size: dict[str, Any], cpu_units: str, memory_mb: int
) -> None:
    """The task's and the container's size come from ``RunnerSize.fargate``, never from the
    task definition (which a stage may size differently) nor from defaults of the launcher's own."""
    run_id = f"size-{cpu_units}-{memory_mb}"
    target = rds(aws, f"{REGION}a", run_id)
    launcher = AwsRunnerLauncher(
        aws[1], aws[0], RunnerSpec.model_validate({"platform": "fargate", "size": size})
    )
    handle = launcher.launch(plan(run_id), Credentials(), target)
    task = aws[1]("ecs").describe_tasks(cluster="bw", tasks=[handle.id])["tasks"][0]
    assert (task["overrides"]["cpu"], task["overrides"]["memory"]) == (cpu_units, str(memory_mb))
    assert task["overrides"]["containerOverrides"][0]["memory"] == memory_mb
    launcher.stop(handle)


def test_a_password_never_goes_into_task_overrides(aws: Any) -> None:
    target = rds(aws, f"{REGION}a", "pw-1")
    launcher = AwsRunnerLauncher(aws[1], aws[0], RunnerSpec.model_validate({"platform": "fargate"}))
    with pytest.raises(SpecError, match="Secrets Manager"):
        launcher.launch(plan("pw-1"), Credentials(password="hunter2"), target)


def test_runner_results_come_back_from_s3_and_a_failed_task_says_why(aws: Any) -> None:
    target = rds(aws, f"{REGION}a", "res-1")
    launcher = AwsRunnerLauncher(aws[1], aws[0], RunnerSpec.model_validate({"platform": "fargate"}))
    handle = launcher.launch(plan("res-1"), Credentials(), target)
    assert launcher.results(handle) == []
    docs = sample_documents(plan("res-1").model_dump(mode="json"), datetime.now(UTC))
    write_output(handle.result_pointer, plan("res-1"), [ResultDocument.parse(d) for d in docs], None)
    assert [d.phase for d in launcher.results(handle)] == ["run"]
    launcher.stop(handle)
    assert launcher.status(handle) in ("succeeded", "failed")
    assert "exit codes" in (launcher.failure(handle) or "")


def test_ecs_capacity_failures_are_retryable_other_failures_are_not(aws: Any) -> None:
    from botocore.stub import ANY, Stubber

    from benchwright.errors import RetryableProvisioningError

    target = rds(aws, f"{REGION}a", "cap-1")
    launcher = AwsRunnerLauncher(aws[1], aws[0], RunnerSpec.model_validate({"platform": "fargate"}))
    with Stubber(aws[1]("ecs")) as stub:
        for _ in range(2):  # the launch-token lookup: no earlier attempt started this runner
            stub.add_response("list_tasks", {"taskArns": []})
        stub.add_response(
            "run_task",
            {"tasks": [], "failures": [{"reason": "Capacity is unavailable at this time"}]},
            {
                k: ANY
                for k in (
                    "cluster",
                    "taskDefinition",
                    "launchType",
                    "count",
                    "networkConfiguration",
                    "overrides",
                    "tags",
                    "startedBy",
                    "clientToken",
                )
            },
        )
        for _ in range(2):
            stub.add_response("list_tasks", {"taskArns": []})
        stub.add_response(
            "run_task",
            {"tasks": [], "failures": [{"reason": "MISSING", "detail": "task definition"}]},
            {
                k: ANY
                for k in (
                    "cluster",
                    "taskDefinition",
                    "launchType",
                    "count",
                    "networkConfiguration",
                    "overrides",
                    "tags",
                    "startedBy",
                    "clientToken",
                )
            },
        )
        with pytest.raises(RetryableProvisioningError):
            launcher.launch(plan("cap-1"), Credentials(), target)
        with pytest.raises(RunnerFailed, match="MISSING"):
            launcher.launch(plan("cap-1"), Credentials(), target)


def test_ec2_runner_instance_runs_the_same_command_and_terminates_itself(aws: Any) -> None:
    import base64

    target = rds(aws, f"{REGION}c", "ec2r-1")
    launcher = AwsRunnerLauncher(
        aws[1],
        aws[0],
        RunnerSpec.model_validate(
            {"platform": "ec2", "placement": "same-az", "size": {"instance_type": "c6i.2xlarge"}}
        ),
    )
    handle = launcher.launch(plan("ec2r-1"), Credentials(secret_arn="arn:s"), target)
    ec2 = aws[1]("ec2")
    instance = ec2.describe_instances(InstanceIds=[handle.id])["Reservations"][0]["Instances"][0]
    assert (
        instance["Placement"]["AvailabilityZone"] == f"{REGION}c"
        and instance["InstanceType"] == "c6i.2xlarge"
    )
    data = base64.b64decode(
        ec2.describe_instance_attribute(InstanceId=handle.id, Attribute="userData")["UserData"]["Value"]
    ).decode()
    assert " --plan s3://" in data and " runner --plan" not in data and "shutdown -h now" in data
    assert launcher.status(handle) in ("starting", "running")
    launcher.stop(handle)
    assert launcher.status(handle) == "failed"  # ended without a result document


def test_fan_out_histograms_merge_exactly() -> None:
    now = datetime.now(UTC)
    a = [ResultDocument.parse(d) for d in sample_documents(plan("m", 0, 2).model_dump(mode="json"), now)]
    b = [ResultDocument.parse(d) for d in sample_documents(plan("m", 1, 2).model_dump(mode="json"), now)]
    merged = merge_runner_results([a, b])
    assert len(merged) == 1
    read = merged[0].operations["READ"]
    assert read.operations == 4000 and merged[0].operations_total == 4000
    assert read.p99_us == a[0].operations["READ"].p99_us  # same distribution -> same percentile
    assert merged[0].throughput == pytest.approx(2 * a[0].throughput)
    assert merged[0].extra["runners"] == 2


# ---------------------------------------------------------------- CloudWatch
def test_get_metric_data_returns_the_window_with_t_relative_to_its_start(aws: Any) -> None:
    target = rds(aws, f"{REGION}a", "cw-1")
    start = datetime.now(UTC).replace(microsecond=0) - timedelta(minutes=10)
    cw = aws[1]("cloudwatch")
    for minute, balance in enumerate([100.0, 80.0, 55.0, 30.0]):
        cw.put_metric_data(
            Namespace="AWS/RDS",
            MetricData=[
                {
                    "MetricName": "BurstBalance",
                    "Dimensions": [{"Name": "DBInstanceIdentifier", "Value": target.name}],
                    "Timestamp": start + timedelta(minutes=minute, seconds=30),
                    "Value": balance,
                    "Unit": "Percent",
                }
            ],
        )
    window = MetricsWindow(start=start, end=start + timedelta(minutes=4), pad_s=60)

    series = CloudWatchMetrics(aws[1]).collect(target, window)

    burst = [s for s in series if s.name == "BurstBalance"]
    assert len(burst) == 1 and burst[0].source.startswith("cloudwatch:AWS/RDS")
    assert [p.value for p in burst[0].points] == [100.0, 80.0, 55.0, 30.0]
    assert burst[0].points[0].t == pytest.approx(30, abs=60)
    flags = judge_credits(series) + cloud_window_flags(
        series, (window.end - window.start).total_seconds(), 120.0
    )
    assert [f.code for f in flags] == ["credits_draining"]


@pytest.mark.parametrize(
    ("values", "regime"), [([100, 100, 99], "full"), ([100, 70, 40], "draining"), ([60, 10, 0], "exhausted")]
)
def test_credit_regime(values: list[float], regime: str) -> None:
    series = MetricSeries(
        name="BurstBalance",
        unit="Percent",
        source="cloudwatch:AWS/RDS",
        points=[MetricPoint(t=60.0 * i, value=v) for i, v in enumerate(values)],
    )
    assert credit_regime(series) == regime


def test_a_window_shorter_than_three_minutes_is_flagged() -> None:
    now = datetime.now(UTC)
    cloud = MetricSeries(name="CPUUtilization", unit="Percent", source="cloudwatch:AWS/RDS", points=[])
    window = MetricsWindow(start=now, end=now + timedelta(seconds=90))
    flags = cloud_window_flags([cloud], (window.end - window.start).total_seconds(), 120.0)
    assert [(f.code, f.severity) for f in flags] == [("too_short_for_cloud_metrics", "warning")]
    assert cloud_window_flags([cloud], 120.0, 120.0) == []  # the policy's threshold, not a second one
