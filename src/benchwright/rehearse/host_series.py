"""The AWS/EBS series of an EC2 target's data volumes and the AWS/EC2 series of the runner hosts, as a
rehearsal answers CollectMetrics for them (issue 9: a cell on EC2 targets gets both).

- ``EbsVolumes``: fed once per second by the stand-in's publisher (metrics.py) with the I/O it sampled
  from the stand-in's processes. Each data volume (not the root volume: the server's data is on the
  spec's volume) gets ``VolumeReadOps`` / ``VolumeWriteOps`` as the count of the second (AWS/EBS
  reports a count per period, Sum), and ``BurstBalance`` for gp2 from the same bucket model as RDS's.
  A cluster's nodes share one stand-in: its I/O is split evenly over the live nodes' volumes (a model,
  said in the events). ``VolumeQueueLength`` and the time series (VolumeTotalReadTime ...) are not
  published: nothing here measures a queue.
- ``ContainerPids``: a runner container's process tree on this host, for a Publisher of the runner
  instance's ``CPUUtilization`` (and ``CPUCreditBalance`` for T types). Its ``NetworkIn`` /
  ``NetworkOut`` are not published: the container shares the host's network, whose counters are not
  the runner's own.
"""

from __future__ import annotations

import contextlib
import subprocess
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import psutil

from benchwright.rehearse.metrics import CreditModel


@dataclass
class EbsVolumes:
    """The data volumes of one stand-in's nodes and their burst buckets."""

    cloudwatch: Any  # a boto3 CloudWatch client (moto server)
    start_fraction: float = 1.0
    models: dict[str, CreditModel] = field(default_factory=dict)  # volume id -> its model
    published: int = 0
    failures: int = 0

    def add(self, volume_id: str, volume_type: str, size_gb: float) -> None:
        self.models[volume_id] = CreditModel(
            instance_class="", storage_type=volume_type, size_gb=size_gb, start_fraction=self.start_fraction
        )

    def remove(self, volume_id: str) -> None:
        self.models.pop(volume_id, None)

    def sample(self, seconds: float, read_iops: float, write_iops: float) -> None:
        """One second of the stand-in's I/O, shared evenly by the volumes of its live nodes."""
        models = dict(self.models)
        if not models:
            return
        share = 1.0 / len(models)
        stamp = datetime.now(UTC)
        data: list[dict[str, Any]] = []
        for volume_id, model in models.items():
            model.advance(seconds, (read_iops + write_iops) * share, 0.0)
            values = {
                "VolumeReadOps": (read_iops * share * seconds, "Count"),
                "VolumeWriteOps": (write_iops * share * seconds, "Count"),
            }
            values.update({k: v for k, v in model.balances().items() if k == "BurstBalance"})
            dims = [{"Name": "VolumeId", "Value": volume_id}]
            data += [
                {"MetricName": name, "Dimensions": dims, "Timestamp": stamp, "Value": float(v), "Unit": unit}
                for name, (v, unit) in values.items()
            ]
        try:
            self.cloudwatch.put_metric_data(Namespace="AWS/EBS", MetricData=data)
            self.published += 1
        except Exception:  # counted and reported with the stand-in's deletion
            self.failures += 1


def data_volumes(instance: Any) -> list[tuple[str, str, float]]:
    """(volume id, type, GB) of a moto instance's volumes other than its root device."""
    root = str(getattr(instance, "root_device_name", "") or "")
    found = []
    for device, mapping in (getattr(instance, "block_device_mapping", None) or {}).items():
        if device == root or not getattr(mapping, "volume_id", None):
            continue
        with contextlib.suppress(Exception):  # a volume already gone has no series
            volume = instance.ec2_backend.get_volume(mapping.volume_id)
            found.append((str(volume.id), str(volume.volume_type or "gp2"), float(volume.size)))
    return found


@dataclass
class ContainerPids:
    """A container's process tree on this host (its root pid asked once from the engine)."""

    tool: str
    name: str
    root: int | None = None

    def __call__(self) -> list[int]:
        if self.root is None:
            done = subprocess.run(
                [self.tool, "inspect", "--format", "{{.State.Pid}}", self.name],
                capture_output=True,
                text=True,
                check=False,
                timeout=30,
            )
            with contextlib.suppress(ValueError):
                pid = int(done.stdout.strip() or 0)
                self.root = pid or None
        if self.root is None:
            return []
        with contextlib.suppress(psutil.Error):
            proc = psutil.Process(self.root)
            return [proc.pid, *(c.pid for c in proc.children(recursive=True))]
        return []


def watch_volumes(hooks: Any, key: str, instance: Any) -> None:
    """The node's data volumes join its stand-in's AWS/EBS series (made with the first node)."""
    publisher = hooks.publishers.get(key)
    if publisher is None:
        return
    if publisher.volumes is None:
        publisher.volumes = EbsVolumes(
            hooks.account.client("cloudwatch"), start_fraction=hooks.faults.credits_start
        )
    for volume_id, kind, size_gb in data_volumes(instance):
        publisher.volumes.add(volume_id, kind, size_gb)
        shared = (
            " (the stand-in's I/O split evenly over its nodes' volumes)"
            if len(publisher.volumes.models) > 1
            else ""
        )
        hooks.events.append(f"AWS/EBS series of {volume_id} ({kind} {size_gb:g} GB, {instance.id}){shared}")


def unwatch_volumes(hooks: Any, key: str, instance: Any) -> None:
    """A terminated node's volumes leave the series (the others keep theirs)."""
    publisher = hooks.publishers.get(key)
    if publisher is not None and publisher.volumes is not None:
        for volume_id, _kind, _size in data_volumes(instance):
            publisher.volumes.remove(volume_id)


def start_runner_series(hooks: Any, instance: Any, container: str) -> None:
    """The runner instance's AWS/EC2 series from its container's processes, until the container ends."""
    from benchwright.rehearse.metrics import Publisher

    kind = str(getattr(instance, "instance_type", ""))
    publisher = Publisher(
        cloudwatch=hooks.account.client("cloudwatch"),
        namespace="AWS/EC2",
        dimensions={"InstanceId": instance.id},
        pids=ContainerPids(hooks.containers.tool, container),
        model=CreditModel(instance_class=kind, storage_type="none", size_gb=0),
        io_series=False,
    )
    publisher.start()
    hooks.publishers[instance.id] = publisher


def stop_runner_series(hooks: Any, instance_id: str) -> None:
    publisher = hooks.publishers.pop(instance_id, None)
    if publisher is not None:
        publisher.stop()
        hooks.events.append(
            f"AWS/EC2 series of runner {instance_id}: {publisher.published} samples put, "
            f"{publisher.failures} failed (CPUUtilization; NetworkIn/Out not: the host's network)"
        )
