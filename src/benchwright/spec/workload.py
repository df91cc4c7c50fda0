"""The ``workload`` section: which workload, its properties and its phases (load, warmup, run).

The phase defaults live here: an unwritten load / run means "the workload's default" (see ``Phases``).
"""

from __future__ import annotations

from typing import Any

from pydantic import (
    ByteSize,
    Field,
    PrivateAttr,
    SerializerFunctionWrapHandler,
    field_validator,
    model_serializer,
    model_validator,
)

from benchwright.spec._base import Scalar, StrictModel


class PhaseSpec(StrictModel):
    """One phase. Unset values come from the workload's properties (threadcount, target ...)."""

    enabled: bool = True
    threads: int | None = Field(default=None, ge=1, le=4096)
    target_rate: float | None = Field(default=None, gt=0)  # operations per second, all threads
    operation_count: int | None = Field(default=None, ge=1)
    duration_s: float | None = Field(default=None, gt=0, le=86400)
    # the I/O per second this phase is expected to drive on the target's storage: a hint for the
    # burst-credit forecast (benchwright.forecast.credits); never sent to the workload
    expected_iops: float | None = Field(default=None, gt=0, le=1_000_000)
    properties: dict[str, Scalar] = Field(default_factory=dict)  # overrides for this phase only


PHASE_NAMES = ("load", "warmup", "run")  # in the order they run
DEFAULTED = ("load", "run")  # present unless written otherwise: "the workload's default"


class Phases(StrictModel):
    """The phases. An unwritten load / run is "the workload's default": it runs only if the workload
    has that phase, whereas a written one must exist (``load: null`` switches it off)."""

    load: PhaseSpec | None = Field(default_factory=PhaseSpec)
    warmup: PhaseSpec | None = None
    run: PhaseSpec | None = Field(default_factory=PhaseSpec)

    @model_serializer(mode="wrap")
    def _dump(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        # Leave out the defaulted load / run so that every dump (model_dump(), JSON, the AWS cell
        # state) re-validates to the same spec: written out, a default load phase would be rejected
        # by a workload without one (redis-bench, sql).
        data: dict[str, Any] = handler(self)
        for name in DEFAULTED:
            if self.is_default(name):
                data.pop(name, None)
        return data

    def is_default(self, name: str) -> bool:
        """An unwritten load / run: it runs only if the workload has that phase (``enabled_phases``),
        is not checked against the workload, and is left out of every dump."""
        return name in DEFAULTED and name not in self.model_fields_set

    @model_validator(mode="after")
    def _rules(self) -> Phases:
        if (
            self.warmup is not None
            and self.warmup.enabled
            and not (self.warmup.duration_s or self.warmup.operation_count)
        ):
            raise ValueError("warmup needs duration_s or operation_count")
        if not any(p is not None and p.enabled for p in (self.load, self.warmup, self.run)):
            raise ValueError("at least one phase must be enabled")
        return self


class WorkloadSpec(StrictModel):
    name: str = Field(min_length=1)
    # Packaged YCSB workloads (workloada..f). Property files of the user's are read when the spec is
    # loaded from a file (benchwright.specguard.inline_files) and arrive here inlined in properties.
    files: list[str] = Field(default_factory=list)
    properties: dict[str, Scalar] = Field(default_factory=dict)
    phases: Phases = Field(default_factory=Phases)
    # YCSB: the data to load, in bytes ("8GiB", "500MB"); recordcount is derived per cell (spec.derived)
    data_size: ByteSize | None = Field(default=None, gt=0)
    _derived: set[str] = PrivateAttr(default_factory=set)  # property keys filled in by spec.derived

    @model_validator(mode="after")
    def _derive(self) -> WorkloadSpec:
        from benchwright.spec.derived import derive

        size = int(self.data_size) if self.data_size else None
        self._derived = derive(self.name, self.files, self.properties, size)
        return self

    @model_serializer(mode="wrap")
    def _dump(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        # derived values stay out of every dump: each validation derives them from what was written
        data: dict[str, Any] = handler(self)
        if self._derived and isinstance(data.get("properties"), dict):
            data["properties"] = {k: v for k, v in data["properties"].items() if k not in self._derived}
        return data

    @field_validator("files")
    @classmethod
    def _packaged_only(cls, files: list[str]) -> list[str]:
        from benchwright.runner.workloads.ycsb.properties import PACKAGED

        for i, name in enumerate(files):
            if name not in PACKAGED:
                raise ValueError(
                    f"files[{i}] {name!r}: only packaged workloads ({', '.join(PACKAGED)}) here; a "
                    "property file is read from the spec's directory when the spec is loaded from a file"
                )
        return files
