"""The ``runner`` section: where the load generator runs (class, platform, placement, count, size).

Fargate's CPU/memory pairs and the local-runner rules are checked here, before anything launches,
and the sizes a spec leaves out are filled in here too: the launcher starts, and the price book
prices, what ``RunnerSize.fargate`` and ``RunnerSize.instance_type`` say.

A cloud runner has a class (issue 27). ``measured`` runs on a dedicated EC2 instance of a pinned,
fixed-performance type (one runner per host): the machine is known and the same every night.
``smoke`` runs on Fargate, whose hosts are undocumented and vary, for cheap checks; its results are
labelled so and never compared with measured ones (``results.Fingerprint.key``).
"""

from __future__ import annotations

import re
from typing import Any, Literal, NamedTuple

from pydantic import ConfigDict, Field, field_validator, model_validator

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

RunnerClass = Literal["measured", "smoke"]
# the platform each class runs on; a cloud runner's class follows from its platform and back
CLASS_PLATFORM: dict[str, str] = {"measured": "ec2", "smoke": "fargate"}
PLATFORM_CLASS: dict[str, str] = {"local": "local", "ec2": "measured", "fargate": "smoke"}
# A measured runner whose spec names no type: fixed-performance (no CPU credits), current Intel
# generation, and the size of the default Fargate runner (2 vCPU, 4 GiB), so `validate` prices the
# two classes for the same machine size.
DEFAULT_RUNNER_INSTANCE_TYPE = "c6i.large"
# CPU-credit (burstable) families: a drained bucket throttles the runner mid-run
BURSTABLE_RE = re.compile(r"^t\d[a-z]*\.")


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
    instance_type: str | None = None  # EC2 (measured) runner; unset: DEFAULT_RUNNER_INSTANCE_TYPE

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

    model_config = ConfigDict(extra="forbid", populate_by_name=True, serialize_by_alias=True)

    platform: Literal["local", "fargate", "ec2"] = "local"
    # ``class`` in the spec; unset: follows the platform (BenchmarkSpec sets measured for a cloud
    # target that names neither). Derived values are not marked as set, so a dump (spec_dict) keeps
    # only what was written and a matrix may vary runner.class.
    runner_class: RunnerClass | None = Field(default=None, alias="class")
    # the pinned EC2 type of a measured runner: the same as size.instance_type (kept there), written
    # where it reads best; never dumped, so both spellings give one spec and one digest
    instance_type: str | None = Field(default=None, exclude=True)
    placement: str = "same-az"
    count: int = Field(default=1, ge=1, le=64)
    size: RunnerSize = Field(default_factory=RunnerSize)
    processes: int | None = Field(default=None, ge=1, le=256)  # worker processes per runner

    _it = field_validator("instance_type")(matching(EC2_TYPE_RE, "an EC2 instance type such as c6i.large"))

    @model_validator(mode="before")
    @classmethod
    def _platform_from_class(cls, data: Any) -> Any:
        """``class`` without ``platform`` names the platform (measured: ec2, smoke: fargate)."""
        if isinstance(data, dict):
            given = data.get("class", data.get("runner_class"))
            if isinstance(given, str) and given in CLASS_PLATFORM and "platform" not in data:
                data = {**data, "platform": CLASS_PLATFORM[given]}
        return data

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
        self._class_rules()
        self._take_instance_type()
        if self.platform == "fargate":
            _fargate_rules(self.size)
        if self.platform == "ec2":
            self._ec2_rules()
        if self.platform == "local":
            if self.count != 1:
                raise ValueError("a local run uses one runner process (count: 1); use more threads instead")
            if self.placement != "same-az":
                raise ValueError("placement applies to cloud runners (platform fargate | ec2)")
        return self

    def _class_rules(self) -> None:
        """The class and the platform agree; a written class makes the platform redundant (not
        dumped), so a matrix may vary runner.class alone."""
        if self.runner_class is None:
            return
        if self.platform == "local":
            raise ValueError("class: measured | smoke is for cloud runners; a local runner has no class")
        wanted = CLASS_PLATFORM[self.runner_class]
        if self.platform != wanted:
            raise ValueError(
                f"class {self.runner_class} runs on platform {wanted}, not {self.platform} "
                "(measured: a pinned EC2 instance; smoke: Fargate); leave platform out"
            )
        self.__pydantic_fields_set__.discard("platform")

    def _take_instance_type(self) -> None:
        """``runner.instance_type`` is kept in ``size.instance_type`` (one place for every reader)."""
        if self.instance_type is None:
            return
        if self.size.instance_type is not None and self.size.instance_type != self.instance_type:
            raise ValueError(
                f"instance_type {self.instance_type} and size.instance_type {self.size.instance_type} "
                "disagree; write one of them"
            )
        if self.platform != "ec2":
            raise ValueError(
                f"instance_type is for a measured runner (platform ec2), not platform {self.platform}"
            )
        self.size.instance_type = self.instance_type
        self.__pydantic_fields_set__.add("size")  # written: a dump keeps it (as size.instance_type)

    def _ec2_rules(self) -> None:
        if self.size.cpu is not None or self.size.memory_mb is not None:
            raise ValueError(
                "size.cpu and size.memory_mb are for Fargate (class smoke); a measured runner's size is "
                "its instance_type"
            )
        if not self.size.instance_type:
            # filled in, not written: a dump leaves it out and a matrix may still vary runner.class
            self.size.instance_type = DEFAULT_RUNNER_INSTANCE_TYPE
            self.size.__pydantic_fields_set__.discard("instance_type")
        if BURSTABLE_RE.match(self.size.instance_type):
            raise ValueError(
                f"instance_type {self.size.instance_type} is burstable (CPU credits): a measured runner "
                "needs a fixed-performance type such as c6i.large or m6i.large; for a cheap check use "
                "class: smoke"
            )
        # both spellings read the same after validation (a dump keeps only size.instance_type)
        self.instance_type = self.size.instance_type
        self.__pydantic_fields_set__.discard("instance_type")

    @property
    def cls(self) -> str:
        """The runner's class: local, measured (pinned EC2) or smoke (Fargate)."""
        return PLATFORM_CLASS[self.platform]

    @property
    def ec2_instance_type(self) -> str:
        """An EC2 runner's instance type (the spec's, or DEFAULT_RUNNER_INSTANCE_TYPE)."""
        if not self.size.instance_type:
            raise SpecError("runner.instance_type", "a measured runner needs an EC2 instance type")
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
