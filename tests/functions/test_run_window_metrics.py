"""Fault 11, the measuring side on AWS: EBS operations plotted per second (AWS/EBS sums per 60-s
period), gp2 BurstBalance of an EC2 target's volumes, the EC2 runner host's own metrics, a Fargate
runner's memory above the task definition's 4 GiB, and the runner's AZ id reaching the result host."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from benchwright.providers.aws.cloudwatch import CloudWatchMetrics
from benchwright.providers.aws.common import Clients
from benchwright.providers.aws.config import AwsSettings
from benchwright.providers.aws.launcher import AwsRunnerLauncher
from benchwright.providers.aws.targets import TARGETS
from benchwright.providers.base import Credentials, MetricsWindow, RunnerHandle
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
        subnets, sg = runner_infrastructure("10.63", bucket="bw-window-test", cluster="bw")
        settings = AwsSettings(
            region=REGION, subnet_ids=subnets, security_group_ids=[sg], results_bucket="bw-window-test",
            ecs_cluster="bw", runner_task_definition="bw-runner", runner_ami="ami-12c6146b",
            runner_image="benchwright-runner:test",
        )  # fmt: skip
        yield settings, Clients(settings)
    mp.undo()


class Volumes:
    """A target whose CloudWatch dimensions are one EBS volume (what Ec2Target reports)."""

    def __init__(self, volume: str) -> None:
        self.volume = volume

    def metric_dimensions(self) -> list[tuple[str, dict[str, str]]]:
        return [("AWS/EBS", {"VolumeId": self.volume})]


def put_minutes(aws: Any, namespace: str, name: str, dims: dict[str, str], values: list[float]) -> datetime:
    start = (datetime.now(UTC) - timedelta(minutes=len(values) + 2)).replace(second=0, microsecond=0)
    aws[1]("cloudwatch").put_metric_data(
        Namespace=namespace,
        MetricData=[
            {
                "MetricName": name,
                "Dimensions": [{"Name": k, "Value": v} for k, v in dims.items()],
                "Timestamp": start + timedelta(minutes=i, seconds=30),
                "Value": value,
            }
            for i, value in enumerate(values)
        ],
    )
    return start


def test_ebs_operations_are_per_second_not_per_period(aws: Any) -> None:
    start = put_minutes(aws, "AWS/EBS", "VolumeReadOps", {"VolumeId": "vol-1"}, [6000.0, 12000.0, 3000.0])
    put_minutes(aws, "AWS/EBS", "BurstBalance", {"VolumeId": "vol-1"}, [100.0, 80.0, 61.0])
    window = MetricsWindow(start=start, end=start + timedelta(minutes=3), pad_s=0)

    series = {s.name: s for s in CloudWatchMetrics(aws[1]).collect(Volumes("vol-1"), window)}  # type: ignore[arg-type]

    reads = series["VolumeReadOps"]
    assert reads.unit == "Count/Second"
    assert [p.value for p in reads.points] == [100.0, 200.0, 50.0]  # 6000 ops in 60 s = 100 IOPS
    assert [p.value for p in series["BurstBalance"].points] == [100.0, 80.0, 61.0]


def test_the_ec2_runner_hosts_metrics_come_with_the_targets(aws: Any) -> None:
    start = put_minutes(aws, "AWS/EC2", "CPUUtilization", {"InstanceId": "i-runner1"}, [97.0, 99.0, 98.0])
    window = MetricsWindow(start=start, end=start + timedelta(minutes=3), pad_s=0)
    source = CloudWatchMetrics(aws[1])
    source.watch_runners(
        [
            RunnerHandle(id="i-runner1", result_pointer="s3://b/r", details={"kind": "ec2"}),
            RunnerHandle(id="arn:aws:ecs:task/1", result_pointer="s3://b/r2", details={"kind": "fargate"}),
        ]
    )
    series = source.collect(Volumes("vol-none"), window)  # type: ignore[arg-type]
    cpu = [s for s in series if s.name == "CPUUtilization"]
    assert len(cpu) == 1 and "InstanceId=i-runner1" in cpu[0].source
    assert [p.value for p in cpu[0].points] == [97.0, 99.0, 98.0]


def test_an_ec2_targets_volumes_are_watched_for_burst_balance(aws: Any) -> None:
    settings = {"provider": "ec2", "engine": "redis", "template": "redis-protocol", "instance_type": "t3.micro",
                "server": "redis", "volume": {"type": "gp2", "size_gb": 100}}  # fmt: skip
    t = TARGETS["ec2"](
        parse_target(settings), "vol-1", None, clients=aws[1], config=aws[0], probe=lambda h, p: True
    )
    handle = t.create()
    assert t.status() == "ready"
    reservations = aws[1]("ec2").describe_instances(InstanceIds=[handle["instances"]])["Reservations"]
    volumes = [m["Ebs"]["VolumeId"] for m in reservations[0]["Instances"][0]["BlockDeviceMappings"]]
    assert volumes
    dims = t.metric_dimensions()
    assert [d["VolumeId"] for ns, d in dims if ns == "AWS/EBS"] == volumes
    t.delete()


def test_a_fargate_runner_gets_the_memory_it_asked_for_and_knows_its_az_id(aws: Any) -> None:
    settings = {"provider": "rds", "engine": "postgres", "engine_version": "16.4",
                "instance_class": "db.m6i.large", "storage": {"type": "gp3", "size_gb": 100},
                "availability_zone": f"{REGION}b"}  # fmt: skip
    target = TARGETS["rds"](
        parse_target(settings), "mem-1", None, clients=aws[1], config=aws[0], probe=lambda h, p: True
    )
    target.create()
    launcher = AwsRunnerLauncher(
        aws[1],
        aws[0],
        RunnerSpec.model_validate({"platform": "fargate", "size": {"cpu": 2, "memory_mb": 16384}}),
    )
    plan = RunnerPlan(
        run_id="mem-1",
        cell_id="c1",
        phases=[PhaseConfig(workload="ycsb", phase="run", engine="postgres", threads=2, measured=True)],
    )
    handle = launcher.launch(plan, Credentials(), target)
    task = aws[1]("ecs").describe_tasks(cluster="bw", tasks=[handle.id])["tasks"][0]
    override = task["overrides"]["containerOverrides"][0]
    assert task["overrides"]["memory"] == "16384" and override["memory"] == 16384
    env = {e["name"]: e["value"] for e in override["environment"]}
    assert env["BENCHWRIGHT_AZ_ID"] == handle.details["availability_zone_id"]
    assert env["BENCHWRIGHT_AZ_ID"].startswith("use1-az")
    launcher.stop(handle)


def test_presplit_reaches_the_ycsb_table_ddl_on_a_yugabytedb_target(aws: Any) -> None:
    """Fault 11: ``presplit`` was validated and then ignored. It now reaches the runner as the postgres
    driver's DDL hooks, and the real driver builds the statement YSQL wants from them."""
    from benchwright.runner.drivers.postgres import PostgresDriver

    settings = {"provider": "ec2", "engine": "postgres", "template": "yugabytedb-3node",
                "instance_type": "m6i.large", "presplit": ["user10", "user5'0"]}  # fmt: skip
    t = TARGETS["ec2"](
        parse_target(settings), "split-1", None, clients=aws[1], config=aws[0], probe=lambda h, p: True
    )
    t.create()
    props = t.connection_properties()
    assert props["postgres.primary_key"] == "PRIMARY KEY (YCSB_KEY ASC)"
    assert props["postgres.ddl_suffix"] == "SPLIT AT VALUES (('user10'), ('user5''0'))"
    driver = PostgresDriver(props)
    statements: list[str] = []
    driver.execute = lambda sql, *a, **k: statements.append(sql)  # type: ignore[method-assign]
    driver.create_table("usertable", 2)
    assert statements == [
        "CREATE TABLE IF NOT EXISTS usertable (YCSB_KEY TEXT NOT NULL, FIELD0 TEXT, FIELD1 TEXT, "
        "PRIMARY KEY (YCSB_KEY ASC)) SPLIT AT VALUES (('user10'), ('user5''0'))"
    ]
    t.delete()
