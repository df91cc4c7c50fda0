"""The ``runner`` section: where the load generator runs (platform, placement, count, size).

Fargate's CPU/memory pairs and the local-runner rules are checked here, before anything launches.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator, model_validator

from benchwright.spec._base import AZ_ID_RE, AZ_NAME_RE, StrictModel

FARGATE_CPU = (0.25, 0.5, 1, 2, 4, 8, 16)
# An unsized Fargate runner runs at the stack's task definition size: infra/config.py RunnerConfig
# (fargate_cpu 2048 CPU units, fargate_memory_mib 4096); a test holds the two together.
FARGATE_DEFAULT_VCPU = 2.0
FARGATE_DEFAULT_MEMORY_MB = 4096


class RunnerSize(StrictModel):
    cpu: float | None = Field(default=None, gt=0)  # vCPU (Fargate); None: the task definition's
    memory_mb: int | None = Field(default=None, ge=512)  # None: the task definition's
    instance_type: str | None = None  # EC2 runner

    @property
    def fargate_vcpu(self) -> float:
        """The vCPUs a Fargate runner gets: ``cpu``, or the stack's task definition default."""
        return float(self.cpu) if self.cpu else FARGATE_DEFAULT_VCPU

    @property
    def fargate_memory_mb(self) -> int:
        return int(self.memory_mb) if self.memory_mb else FARGATE_DEFAULT_MEMORY_MB


class RunnerSpec(StrictModel):
    """Where the load generator runs. Placement is relative to the target's primary, or a named AZ."""

    platform: Literal["local", "fargate", "ec2"] = "local"
    placement: str = "same-az"
    count: int = Field(default=1, ge=1, le=64)
    size: RunnerSize = Field(default_factory=RunnerSize)
    processes: int | None = Field(default=None, ge=1, le=256)  # worker processes per runner

    @field_validator("placement")
    @classmethod
    def _placement(cls, v: str) -> str:
        if v not in ("same-az", "other-az") and not (AZ_NAME_RE.match(v) or AZ_ID_RE.match(v)):
            raise ValueError(f"{v!r}: use same-az, other-az, an AZ name (eu-west-1a) or an AZ id (euw1-az1)")
        return v

    @model_validator(mode="after")
    def _rules(self) -> RunnerSpec:
        size = self.size
        if self.platform == "fargate":
            if size.instance_type:
                raise ValueError("size.instance_type is for platform ec2; Fargate takes cpu and memory_mb")
            if size.cpu is not None and size.cpu not in FARGATE_CPU:
                raise ValueError(
                    f"size.cpu {size.cpu} is not a Fargate size ({', '.join(map(str, FARGATE_CPU))})"
                )
            if (
                size.cpu
                and size.memory_mb
                and not size.cpu * 2048 <= size.memory_mb <= max(size.cpu * 8192, 2048)
            ):
                raise ValueError(
                    f"size.memory_mb {size.memory_mb} is outside Fargate's range for {size.cpu} vCPU"
                )
        if self.platform == "ec2" and not size.instance_type:
            raise ValueError("platform ec2 needs size.instance_type")
        if self.platform == "local":
            if self.count != 1:
                raise ValueError("a local run uses one runner process (count: 1); use more threads instead")
            if self.placement != "same-az":
                raise ValueError("placement applies to cloud runners (platform fargate | ec2)")
        return self
