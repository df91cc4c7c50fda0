"""The whole spec: ``BenchmarkSpec`` (one benchmark) and ``SuiteSpec`` (several), with the rules
that span sections (a local target needs a local runner) and the shape of ``matrix``.

``spec_dict`` is the one way a spec becomes plain data (what was written, defaults left out), so a
dump re-validates to the same spec wherever it travels.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import Field, ValidationInfo, field_validator, model_validator

from benchwright.experiments.models import EventSpec, OperationName
from benchwright.notifiers import registry
from benchwright.spec._base import NAME_RE, StrictModel
from benchwright.spec.notify import NotifySpec, ValidityPolicy
from benchwright.spec.runners import RunnerSpec
from benchwright.spec.targets import CLOUD_PROVIDERS, TargetSpec
from benchwright.spec.workload import WorkloadSpec

ZIP = "zip"  # matrix key whose entries set several paths together (more links: zip_size, zip_2 ...)


def is_zip(path: str) -> bool:
    return path == ZIP or path.startswith(ZIP + "_")


def _check_zip(values: list[Any]) -> None:
    """``matrix.zip``: a list of mappings, each a set of paths that vary together (linked axes)."""
    keys: set[str] | None = None
    for i, entry in enumerate(values):
        if not isinstance(entry, dict) or not entry:
            raise ValueError(f"zip[{i}]: a mapping of field paths to values, e.g. {{redis.datatype: hash}}")
        if keys is not None and set(entry) != keys:
            raise ValueError(f"zip[{i}]: every entry names the same paths ({', '.join(sorted(keys))})")
        keys = set(entry)
        for path in entry:
            if path.split(".")[0] in ("name", "matrix", "repeats", "noise"):
                raise ValueError(f"zip[{i}].{path}: cannot be varied in a matrix")


class BenchmarkSpec(StrictModel):
    name: str
    description: str = ""
    target: TargetSpec
    runner: RunnerSpec = Field(default_factory=RunnerSpec)
    workload: WorkloadSpec
    matrix: dict[str, list[Any]] = Field(default_factory=dict)
    repeats: int = Field(default=1, ge=1, le=100)
    # where the site's provisional verdict (1-2 earlier nights) takes its noise floor: the spread of all
    # repeats, or ``aa``: each night's first two repeats, the same config run twice, as an A/A pair
    noise: Literal["repeats", "aa"] = "repeats"
    validity: ValidityPolicy = Field(default_factory=ValidityPolicy)
    notify: NotifySpec = Field(default_factory=NotifySpec)
    tags: dict[str, str] = Field(default_factory=dict)
    events: list[EventSpec] = Field(default_factory=list, max_length=20)  # experiments/models.py
    operations: list[OperationName] = Field(default_factory=list, max_length=10)  # after the run phase

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        if not NAME_RE.match(v):
            raise ValueError("use letters, digits, '.', '_' and '-' (at most 80 characters)")
        return v

    @field_validator("noise")
    @classmethod
    def _noise(cls, v: str, info: ValidationInfo) -> str:
        repeats = info.data.get("repeats", 1)  # validated before noise (field order)
        if v == "aa" and repeats < 2:
            raise ValueError(
                f"aa measures the noise floor from an A/A pair, the same config twice a night; "
                f"set repeats to 2 or more (it is {repeats})"
            )
        return v

    @field_validator("tags")
    @classmethod
    def _tags(cls, tags: dict[str, str]) -> dict[str, str]:
        for k, v in tags.items():
            if not re.match(r"^[A-Za-z0-9_.:/=+@-]{1,128}$", k) or len(v) > 256:
                raise ValueError(
                    f"tag {k!r}: keys are 1-128 of [A-Za-z0-9_.:/=+@-], values at most 256 chars"
                )
        return tags

    @field_validator("matrix")
    @classmethod
    def _matrix(cls, matrix: dict[str, list[Any]]) -> dict[str, list[Any]]:
        for path, values in matrix.items():
            if not values:
                raise ValueError(f"{path}: give at least one value")
            if is_zip(path):
                _check_zip(values)
                continue
            if path.split(".")[0] in ("name", "matrix", "repeats", "noise"):
                raise ValueError(f"{path}: cannot be varied in a matrix")
        return matrix

    @model_validator(mode="before")
    @classmethod
    def _measured_by_default(cls, data: Any) -> Any:
        """A cloud target's runner that names neither class nor platform is a measured one (a pinned
        EC2 instance): the default is the number one can trust, Fargate is asked for (issue 27)."""
        if not isinstance(data, dict):
            return data
        target, runner = data.get("target"), data.get("runner", {})
        if not (isinstance(target, dict) and isinstance(runner, dict)):
            return data
        named = {"class", "runner_class", "platform"} & set(runner)
        if target.get("provider") in CLOUD_PROVIDERS and not named:
            data = {**data, "runner": {**runner, "class": "measured"}}
        return data

    @model_validator(mode="after")
    def _placement(self) -> BenchmarkSpec:
        provider = self.target.provider
        if provider == "local" and self.runner.platform != "local":
            raise ValueError("runner.platform: a local target is reachable only from a local runner")
        if provider in CLOUD_PROVIDERS and self.runner.platform == "local":
            raise ValueError(
                f"runner.platform: a {provider} target needs a cloud runner (class measured | smoke)"
            )
        if self.notify is not None and not self.is_local:
            _cloud_notifiers(self.notify)
        return self

    # -------------------------------------------------------------------------------------------
    @property
    def is_local(self) -> bool:
        return self.target.provider in ("local", "endpoint") and self.runner.platform == "local"


def _cloud_notifiers(notify: NotifySpec) -> None:
    """A cloud run sends from AWS: each configured notifier needs an AWS sender, and a secret it names
    must follow its kind's naming convention, the only secrets the stack lets its Lambdas read."""
    for name, section in notify.configured():
        kind = registry.get(name)
        if kind is None or kind.cloud is None:
            raise ValueError(f"notify.{name}: this notifier cannot send from AWS; a cloud run cannot use it")
        arn = kind.secret_arn(section)
        if arn is not None and not kind.secret_allowed(arn):
            raise ValueError(
                f"notify.{name}.{kind.secret_arn_field}: {arn} is outside the secrets the deployed service "
                f"may read; name the secret {kind.secret_name} or {kind.secret_name}/<name> (docs/deploy.md)"
            )


class SuiteSpec(StrictModel):
    suite: str
    description: str = ""
    benchmarks: list[BenchmarkSpec] = Field(min_length=1)

    @model_validator(mode="after")
    def _unique(self) -> SuiteSpec:
        names = [b.name for b in self.benchmarks]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"benchmark names must be unique: {', '.join(dupes)}")
        return self


def spec_dict(spec: BenchmarkSpec) -> dict[str, Any]:
    """The spec as plain data, only what was written: re-validating it gives the same spec (defaults
    stay defaults, so a default load phase is still skipped for a workload without one)."""
    return spec.model_dump(mode="json", exclude_unset=True)
