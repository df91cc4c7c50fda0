"""Issue 31 item 7f (issue 9's ask): in a rehearsal an EC2 target's data volumes get AWS/EBS series and
the runner hosts get AWS/EC2 series, and CollectMetrics (CloudWatchMetrics.collect, the real
GetMetricData path) reads them back: moto's CloudWatch and EC2 in process, no server, no container."""

from __future__ import annotations

import os
import stat
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from benchwright.providers.aws.cloudwatch import CloudWatchMetrics
from benchwright.providers.aws.common import Clients
from benchwright.providers.aws.config import AwsSettings
from benchwright.providers.base import MetricsWindow
from benchwright.rehearse.host_series import (
    ContainerPids,
    EbsVolumes,
    data_volumes,
    start_runner_series,
    stop_runner_series,
    unwatch_volumes,
    watch_volumes,
)
from tests.aws_world import ACCOUNT, ENV, REGION


@pytest.fixture
def aws() -> Iterator[Clients]:
    from moto import mock_aws

    mp = pytest.MonkeyPatch()
    for k, v in ENV.items():
        mp.setenv(k, v)
    with mock_aws():
        yield Clients(AwsSettings(region=REGION))
    mp.undo()


class Dimensions:
    """A target whose CloudWatch dimensions are given (what Ec2Target.metric_dimensions reports)."""

    def __init__(self, dims: list[tuple[str, dict[str, str]]]) -> None:
        self.dims = dims

    def metric_dimensions(self) -> list[tuple[str, dict[str, str]]]:
        return self.dims


def window() -> MetricsWindow:
    now = datetime.now(UTC)
    return MetricsWindow(start=now - timedelta(minutes=3), end=now + timedelta(minutes=2), pad_s=60)


def node(clients: Clients, volume_type: str = "gp2", size_gb: int = 100) -> Any:
    """A moto instance with a data volume at /dev/sdf (as Ec2Target launches its nodes)."""
    from moto.ec2.models import ec2_backends

    ebs: dict[str, Any] = {"VolumeSize": size_gb, "VolumeType": volume_type}
    found = clients("ec2").run_instances(
        ImageId="ami-12c6146b", MinCount=1, MaxCount=1, InstanceType="m6i.large",
        BlockDeviceMappings=[{"DeviceName": "/dev/sdf", "Ebs": ebs}],
    )["Instances"][0]  # fmt: skip
    return ec2_backends[ACCOUNT][REGION].get_instance(found["InstanceId"])


def by_name(series: list[Any], volume: str) -> dict[str, Any]:
    return {s.name: s for s in series if f"VolumeId={volume}" in s.source}


def test_a_node_s_data_volume_gets_aws_ebs_series_that_collect_metrics_reads(aws: Clients) -> None:
    instance = node(aws)
    ((volume, kind, size),) = data_volumes(instance)  # the root volume is not the data's
    assert (kind, size) == ("gp2", 100.0)
    bare = aws("ec2").run_instances(ImageId="ami-12c6146b", MinCount=1, MaxCount=1)["Instances"][0]
    from moto.ec2.models import ec2_backends

    only_root = ec2_backends[ACCOUNT][REGION].get_instance(bare["InstanceId"])
    root = only_root.block_device_mapping[only_root.root_device_name].volume_id
    assert data_volumes(only_root) == []  # an instance-store node: no data volume, no AWS/EBS series
    volumes = EbsVolumes(aws("cloudwatch"))
    volumes.add(volume, kind, size)
    for _ in range(3):  # three sampled seconds of 300 reads and 100 writes per second
        volumes.sample(1.0, 300.0, 100.0)
    assert volumes.published == 3 and volumes.failures == 0
    target = Dimensions([("AWS/EBS", {"VolumeId": root}), ("AWS/EBS", {"VolumeId": volume})])
    series = CloudWatchMetrics(aws).collect(target, window())  # type: ignore[arg-type]
    got = by_name(series, volume)
    # AWS/EBS sums a period's operations; CollectMetrics divides by its 60 s: x 60 is the count back
    assert sum(p.value for p in got["VolumeReadOps"].points) * 60 == pytest.approx(900.0)
    assert sum(p.value for p in got["VolumeWriteOps"].points) * 60 == pytest.approx(300.0)
    # gp2 100 GB: a 300 IOPS baseline, 400 used: the bucket is drawn below full
    assert 99.99 < got["BurstBalance"].points[-1].value < 100.0
    assert by_name(series, root) == {}  # nothing does I/O on the root volume


def test_a_cluster_s_io_is_split_over_its_live_nodes_volumes_and_gp3_has_no_bucket(aws: Clients) -> None:
    first, second = node(aws), node(aws, "gp3", 200)
    publisher = SimpleNamespace(volumes=None)
    hooks = SimpleNamespace(
        publishers={"ec2-key": publisher}, events=[], faults=SimpleNamespace(credits_start=1.0),
        account=SimpleNamespace(client=aws),
    )  # fmt: skip
    watch_volumes(hooks, "ec2-key", first)
    watch_volumes(hooks, "ec2-key", second)
    volumes = publisher.volumes
    assert isinstance(volumes, EbsVolumes) and len(volumes.models) == 2
    assert "split evenly" in hooks.events[-1]
    volumes.sample(1.0, 200.0, 0.0)
    unwatch_volumes(hooks, "ec2-key", second)  # terminated (node_replace): its series stop
    volumes.sample(1.0, 200.0, 0.0)
    series = CloudWatchMetrics(aws).collect(
        Dimensions([("AWS/EBS", {"VolumeId": v}) for v, _k, _s in [*data_volumes(first), *data_volumes(second)]]),  # type: ignore[arg-type]
        window(),
    )  # fmt: skip
    (kept,), (gone,) = data_volumes(first), data_volumes(second)
    assert sum(p.value for p in by_name(series, kept[0])["VolumeReadOps"].points) * 60 == pytest.approx(300.0)
    gp3 = by_name(series, gone[0])
    assert sum(p.value for p in gp3["VolumeReadOps"].points) * 60 == pytest.approx(100.0)
    assert "BurstBalance" not in gp3


def fake_engine(tmp_path: Path, pid: int) -> str:
    """A container engine whose ``inspect`` names ``pid`` as the container's process."""
    tool = tmp_path / "engine"
    tool.write_text(f"#!/bin/sh\necho {pid}\n")
    tool.chmod(tool.stat().st_mode | stat.S_IEXEC)
    return str(tool)


def test_a_container_s_process_tree_is_found_by_its_root_pid(tmp_path: Path) -> None:
    pids = ContainerPids(fake_engine(tmp_path, os.getpid()), "bw-runner")
    assert pids()[0] == os.getpid() and pids.root == os.getpid()
    assert ContainerPids(fake_engine(tmp_path, 0), "gone")() == []


def test_a_runner_host_gets_aws_ec2_cpu_series_until_its_container_ends(aws: Clients, tmp_path: Path) -> None:
    hooks = SimpleNamespace(
        publishers={}, events=[], account=SimpleNamespace(client=aws),
        containers=SimpleNamespace(tool=fake_engine(tmp_path, os.getpid())),
    )  # fmt: skip
    runner = SimpleNamespace(id="i-0runner", instance_type="c6i.large")
    start_runner_series(hooks, runner, "bw-runner")
    publisher = hooks.publishers["i-0runner"]
    done = threading.Event()
    deadline = time.monotonic() + 10
    while publisher.published < 2 and time.monotonic() < deadline:  # samples once a second
        done.wait(0.05)
    stop_runner_series(hooks, "i-0runner")
    assert publisher.published >= 2 and publisher.failures == 0
    assert "i-0runner" not in hooks.publishers and "CPUUtilization" in hooks.events[-1]
    series = CloudWatchMetrics(aws, runner_instances=["i-0runner"]).collect(Dimensions([]), window())  # type: ignore[arg-type]
    names = {s.name for s in series if "InstanceId=i-0runner" in s.source}
    assert names == {"CPUUtilization"}  # no ReadIOPS/WriteIOPS: EC2 has no such metric
