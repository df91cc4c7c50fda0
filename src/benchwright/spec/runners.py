"""The ``runner`` section: where the load generator runs (platform, placement, count, size).

Fargate's CPU/memory pairs and the local-runner rules are checked here, before anything launches,
and the sizes a spec leaves out are filled in here too: the launcher starts, and the price book
prices, what ``RunnerSize.fargate`` says.
"""

from __future__ import annotations

from typing import Literal, NamedTuple

from pydantic import Field, field_validator, model_validator

from benchwright.errors import SpecError
from benchwright.spec._base import AZ_ID_RE, AZ_NAME_RE, EC2_TYPE_RE, StrictModel, matching, shown

# vCPU -> the least and most memory (MiB) a Fargate task of that size may have (AWS's valid pairs).
FARGATE_MEMORY_MB: dict[float, tuple[int, int]] = {
    0.25: (512, 2048),
    0.5: (1024, 4096),
    1: (2048, 8192),
    2: (4096, 16384),
    4: (8192, 30720),
    8: (16384, 61440),
    16: (32768, 122880),
}
FARGATE_CPU = tuple(FARGATE_MEMORY_MB)
# A Fargate runner whose spec names no CPU: the stack's runner task definition (infra/config.py
# RunnerConfig, 2048 CPU units and 4096 MiB; a test holds the two together), so an unsized runner is
# started, and priced, as the stack deploys it. Its memory, when unnamed, is the least its CPU size
# allows (4096 MiB at 2 vCPU, 8192 at 4).
FARGATE_DEFAULT_VCPU = 2.0
FARGATE_DEFAULT_MEMORY_MB = FARGATE_MEMORY_MB[FARGATE_DEFAULT_VCPU][0]


class FargateSize(NamedTuple):
    cpu: float  # vCPU
    memory_mb: int  # MiB

    @property
    def cpu_units(self) -> int:
        """The CPU as ECS counts it (1024 units a vCPU)."""
        return int(self.cpu * 1024)


def fargate_size(cpu: float | None, memory_mb: int | None) -> FargateSize | None:
    """The Fargate size for what a spec says, the rest filled in (see FARGATE_DEFAULT_VCPU); None
    when no valid CPU/memory pair holds it."""
    if cpu is None:
        fits = [
            c
            for c, (least, most) in FARGATE_MEMORY_MB.items()
            if memory_mb is None or least <= memory_mb <= most
        ]
        if not fits:
            return None
        cpu = FARGATE_DEFAULT_VCPU if FARGATE_DEFAULT_VCPU in fits else fits[0]
    if cpu not in FARGATE_MEMORY_MB:
        return None
    least, most = FARGATE_MEMORY_MB[cpu]
    memory = least if memory_mb is None else memory_mb
    return FargateSize(float(cpu), memory) if least <= memory <= most else None


class RunnerSize(StrictModel):
    cpu: float | None = Field(default=None, gt=0)  # vCPU (Fargate); None: see FARGATE_DEFAULT_VCPU
    memory_mb: int | None = Field(default=None, ge=512)  # MiB (Fargate); None: the least for cpu
    instance_type: str | None = None  # EC2 runner (required there)

    _it = field_validator("instance_type")(matching(EC2_TYPE_RE, "an EC2 instance type such as c6i.4xlarge"))

    @property
    def fargate(self) -> FargateSize:
        """A Fargate runner's size: what the spec says, with what it leaves out filled in. The
        launcher starts and the price book prices this one."""
        size = fargate_size(self.cpu, self.memory_mb)
        if size is None:  # a validated Fargate runner always has one
            raise SpecError("runner.size", "no Fargate CPU/memory pair holds this size")
        return size

    @property
    def fargate_vcpu(self) -> float:
        return self.fargate.cpu

    @property
    def fargate_memory_mb(self) -> int:
        return self.fargate.memory_mb


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
            raise ValueError(
                f"{shown(v)}: use same-az, other-az, an AZ name (eu-west-1a) or an AZ id (euw1-az1)"
            )
        return v

    @model_validator(mode="after")
    def _rules(self) -> RunnerSpec:
        if self.platform == "fargate":
            _fargate_rules(self.size)
        if self.platform == "ec2":
            if not self.size.instance_type:
                raise ValueError("platform ec2 needs size.instance_type")
            if self.size.cpu is not None or self.size.memory_mb is not None:
                raise ValueError(
                    "size.cpu and size.memory_mb are for Fargate; an EC2 runner's size is its instance_type"
                )
        if self.platform == "local":
            if self.count != 1:
                raise ValueError("a local run uses one runner process (count: 1); use more threads instead")
            if self.placement != "same-az":
                raise ValueError("placement applies to cloud runners (platform fargate | ec2)")
        return self

    @property
    def ec2_instance_type(self) -> str:
        """An EC2 runner's instance type (platform ec2 requires it)."""
        if not self.size.instance_type:
            raise SpecError("runner.size.instance_type", "platform ec2 needs size.instance_type")
        return self.size.instance_type


def _fargate_rules(size: RunnerSize) -> None:
    """Fargate takes a CPU and memory pair AWS offers, and no instance type."""
    if size.instance_type:
        raise ValueError("size.instance_type is for platform ec2; Fargate takes cpu and memory_mb")
    if size.cpu is not None and size.cpu not in FARGATE_CPU:
        raise ValueError(f"size.cpu {size.cpu} is not a Fargate size ({', '.join(map(str, FARGATE_CPU))})")
    if fargate_size(size.cpu, size.memory_mb) is None:
        if size.cpu is not None:
            least, most = FARGATE_MEMORY_MB[size.cpu]
            raise ValueError(
                f"size.memory_mb {size.memory_mb} is outside Fargate's range for {size.cpu} vCPU "
                f"({least}-{most} MiB)"
            )
        raise ValueError(
            f"size.memory_mb {size.memory_mb} fits no Fargate CPU size "
            f"({min(FARGATE_MEMORY_MB.values())[0]}-{max(FARGATE_MEMORY_MB.values())[1]} MiB)"
        )
