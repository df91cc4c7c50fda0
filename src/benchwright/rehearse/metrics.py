"""CloudWatch for stand-ins: real metric names, values sampled from the stand-in's process tree, and
credit balances from a model of the real buckets.

Per second the publisher reads the stand-in's CPU seconds and storage bytes (/proc, as
providers/local/hostmetrics.py does) and puts one datapoint per metric into moto's CloudWatch:

- ``CPUUtilization``: the stand-in's CPU time per second over the instance class's vCPUs, in percent.
- ``ReadIOPS`` / ``WriteIOPS``: the stand-in's storage bytes per second in 16 KiB I/Os (the unit in
  which gp2 counts I/O credits; a smaller I/O still counts as one, so this is a lower bound).
- ``BurstBalance`` (gp2): a bucket of 5.4 million I/O credits, refilled at the baseline of 3 IOPS per
  GB (at least 100), spent by I/O above it, bursts capped at 3,000 IOPS; in percent of the bucket.
- ``CPUCreditBalance`` (T classes): credits earned per hour and the maximum balance of the class, one
  credit = one vCPU-minute at 100 %, spent above the baseline utilisation per vCPU.

``start_fraction`` sets the balances at creation (1.0 = full, as a fresh instance is treated here);
a rehearsal started with an empty bucket shows how a run that exhausts credits is labelled.
EBSIOBalance% / EBSByteBalance% (instance-level EBS burst) are not published: no model of them here.
"""

from __future__ import annotations

import contextlib
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import psutil

from benchwright.forecast.facts import GP2_BUCKET, GP2_BURST_IOPS, T_CLASSES, gp2_baseline

IO_UNIT = 16 * 1024
# T3/T4g (forecast/facts.py, the one table): (credits earned per hour, maximum balance, baseline per vCPU)
T_CLASS = {size: (t.credits_per_hour, t.max_balance, t.baseline) for size, t in T_CLASSES["t3"].items()}
VCPUS = {
    "micro": 2,
    "small": 2,
    "medium": 2,
    "large": 2,
    "xlarge": 4,
    "2xlarge": 8,
    "4xlarge": 16,
    "8xlarge": 32,
}


@dataclass
class CreditModel:
    """The balances of one instance, advanced once per sampled second."""

    instance_class: str
    storage_type: str
    size_gb: float
    start_fraction: float = 1.0
    burst_fraction: float | None = None  # the gp2 bucket's own start, when it differs (credits_carry.py)
    burst_credits: float = 0.0
    cpu_credits: float = 0.0

    def __post_init__(self) -> None:
        burst = self.start_fraction if self.burst_fraction is None else self.burst_fraction
        self.burst_credits = GP2_BUCKET * burst
        if self.t_class is not None:
            self.cpu_credits = self.t_class[1] * self.start_fraction

    @property
    def size(self) -> str:
        return self.instance_class.rsplit(".", 1)[-1]

    @property
    def vcpus(self) -> int:
        return VCPUS.get(self.size, 2)

    @property
    def t_class(self) -> tuple[float, float, float] | None:
        family = self.instance_class.split(".")[1] if self.instance_class.count(".") >= 2 else ""
        return T_CLASS.get(self.size) if family.startswith("t") else None

    def advance(self, seconds: float, iops: float, cpu_fraction: float) -> None:
        """``iops``: I/O per second over the last ``seconds``; ``cpu_fraction``: of all vCPUs."""
        if self.storage_type == "gp2":
            baseline = gp2_baseline(self.size_gb)
            used = min(iops, GP2_BURST_IOPS if self.burst_credits > 0 else baseline)
            self.burst_credits = min(GP2_BUCKET, max(0.0, self.burst_credits + (baseline - used) * seconds))
        if self.t_class is not None:
            earn, cap, base = self.t_class
            spent = max(0.0, cpu_fraction - base) * self.vcpus * seconds / 60.0
            self.cpu_credits = min(cap, max(0.0, self.cpu_credits + earn * seconds / 3600.0 - spent))

    def balances(self) -> dict[str, tuple[float, str]]:
        out: dict[str, tuple[float, str]] = {}
        if self.storage_type == "gp2":
            out["BurstBalance"] = (100.0 * self.burst_credits / GP2_BUCKET, "Percent")
        if self.t_class is not None:
            out["CPUCreditBalance"] = (self.cpu_credits, "Count")
        return out


@dataclass
class Publisher:
    """One thread per stand-in: sample, advance the model, put the datapoints."""

    cloudwatch: Any  # a boto3 CloudWatch client (moto server)
    namespace: str
    dimensions: dict[str, str]
    pids: Any  # callable -> list[int]
    model: CreditModel
    interval_s: float = 1.0
    volumes: Any = None  # host_series.EbsVolumes: the AWS/EBS series of an EC2 target's volumes
    io_series: bool = True  # ReadIOPS / WriteIOPS (a runner host's instance has neither)
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None
    published: int = 0
    failures: int = 0

    def start(self) -> None:
        self._thread = threading.Thread(target=self._loop, name="rehearse-cloudwatch", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(10)

    def _read(self) -> tuple[float, int, int]:
        cpu, rbytes, wbytes = 0.0, 0, 0
        for pid in self.pids():
            with contextlib.suppress(psutil.Error):
                p = psutil.Process(pid)
                t = p.cpu_times()
                io = p.io_counters()
                cpu += t.user + t.system
                rbytes += io.read_bytes
                wbytes += io.write_bytes
        return cpu, rbytes, wbytes

    def _loop(self) -> None:
        last = self._read()
        last_t = time.monotonic()
        while not self._stop.wait(self.interval_s):
            now = self._read()
            now_t = time.monotonic()
            dt = max(1e-3, now_t - last_t)
            cpu_fraction = max(0.0, now[0] - last[0]) / dt / self.model.vcpus
            read_iops = max(0, now[1] - last[1]) / IO_UNIT / dt
            write_iops = max(0, now[2] - last[2]) / IO_UNIT / dt
            self.model.advance(dt, read_iops + write_iops, cpu_fraction)
            cpu = (min(100.0, 100.0 * cpu_fraction), "Percent")
            values: dict[str, tuple[float, str]] = {"CPUUtilization": cpu, **self.model.balances()}
            if self.namespace == "AWS/ElastiCache":  # Redis runs its commands on one thread
                values["EngineCPUUtilization"] = (
                    min(100.0, 100.0 * cpu_fraction * self.model.vcpus),
                    "Percent",
                )
            elif self.io_series:
                values["ReadIOPS"] = (read_iops, "Count/Second")
                values["WriteIOPS"] = (write_iops, "Count/Second")
            self._put(values)
            if self.volumes is not None:
                self.volumes.sample(dt, read_iops, write_iops)
            last, last_t = now, now_t

    def _put(self, values: dict[str, tuple[float, str]]) -> None:
        stamp = datetime.now(UTC)
        dims = [{"Name": k, "Value": v} for k, v in self.dimensions.items()]
        data = [
            {"MetricName": name, "Dimensions": dims, "Timestamp": stamp, "Value": float(value), "Unit": unit}
            for name, (value, unit) in values.items()
        ]
        try:
            self.cloudwatch.put_metric_data(Namespace=self.namespace, MetricData=data)
            self.published += 1
        except Exception:  # counted and reported with the stand-in's deletion
            self.failures += 1
