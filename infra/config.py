"""Stage settings for one deployment, validated before a single construct is created.

A bad region, availability zone, schedule expression or sink is a ``SpecError`` naming the field
(``stage.schedule.cron: ...``), raised at synth, so nothing half-built reaches CloudFormation.
Defaults live here and only here; cdk.json context (key ``benchwright``) or a YAML/JSON file named
with ``-c benchwright:config=FILE`` override them.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError, available_timezones

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from benchwright.errors import SpecError
from benchwright.providers.aws.config import DEFAULT_MAX_RUNS_PER_DAY, DEFAULT_MAX_USD_PER_REQUEST

# Commercial regions that offer every service the stack uses (ECS Fargate, Step Functions,
# EventBridge Scheduler, Timestream for InfluxDB or LiveAnalytics). Kept as data so a typo fails fast.
REGIONS = frozenset(
    {
        "us-east-1", "us-east-2", "us-west-1", "us-west-2", "ca-central-1", "ca-west-1",
        "eu-west-1", "eu-west-2", "eu-west-3", "eu-central-1", "eu-central-2", "eu-north-1",
        "eu-south-1", "eu-south-2", "ap-south-1", "ap-south-2", "ap-southeast-1", "ap-southeast-2",
        "ap-southeast-3", "ap-southeast-4", "ap-southeast-5", "ap-southeast-7", "ap-northeast-1",
        "ap-northeast-2", "ap-northeast-3", "ap-east-1", "me-south-1", "me-central-1", "il-central-1",
        "af-south-1", "sa-east-1", "mx-central-1",
    }
)  # fmt: skip
# Regions where Timestream LiveAnalytics was ever offered (it is closed to new accounts since 2025-06-20).
LIVEANALYTICS_REGIONS = frozenset(
    {"us-east-1", "us-east-2", "us-west-2", "eu-west-1", "eu-central-1", "ap-southeast-2", "ap-northeast-1",
     "ap-south-1"}
)  # fmt: skip
LIVEANALYTICS_CLOSED = (
    "Timestream LiveAnalytics is closed to AWS accounts that did not use it before 2025-06-20; "
    "if the deploy fails with AccessDeniedException on timestream:CreateDatabase, set sink.kind to "
    "'none' (the default: results, history and verdicts stay in S3) or 'influxdb' (Timestream for InfluxDB)"
)
INFLUX_FIXED_COST = (
    "sink.kind influxdb: Timestream for InfluxDB is an always-on instance ({instance}, {storage} GB), the "
    "largest fixed cost of the stack: of the order of 100 USD a month or more at list prices (check your "
    "region's), and 15-25 minutes to create. History and verdicts do not need it (they read the S3 run "
    "records); 'none' is the default"
)

_NAME = re.compile(r"^[a-z][a-z0-9-]{1,24}$")
_ACCOUNT = re.compile(r"^\d{12}$")
_ADMIN_ARN = re.compile(r"^arn:aws[a-z-]*:(iam|sts)::\d{12}:(role|user|assumed-role)/[\w+=,.@/-]{1,512}$")
_ROLE_NAME = re.compile(r"^[\w+=,.@-]{1,64}$")  # what IAM accepts as a role name
_CRON_FIELD = re.compile(r"^[0-9A-Za-z*?,/\-#L W]+$")


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def check_cron(expr: str) -> str:
    """Validate an EventBridge Scheduler ``cron(...)`` expression: six fields, and exactly one of
    day-of-month / day-of-week is ``?`` (AWS rejects anything else, but only at deploy time)."""
    m = re.fullmatch(r"cron\((.*)\)", expr.strip())
    if not m:
        raise ValueError(f"{expr!r} is not of the form cron(min hour day-of-month month day-of-week year)")
    fields = m.group(1).split()
    if len(fields) != 6:
        raise ValueError(f"{expr!r} has {len(fields)} fields, EventBridge cron needs 6 (with a year)")
    names = ("minutes", "hours", "day-of-month", "month", "day-of-week", "year")
    for name, value in zip(names, fields, strict=True):
        if not _CRON_FIELD.match(value):
            raise ValueError(f"{expr!r}: field {name} {value!r} has invalid characters")
    ranges = {"minutes": (0, 59), "hours": (0, 23), "day-of-month": (1, 31)}
    for name, value in zip(names[:3], fields[:3], strict=True):
        lo, hi = ranges[name]
        for num in re.findall(r"\d+", value):
            if not lo <= int(num) <= hi:
                raise ValueError(f"{expr!r}: {name} value {num} is outside {lo}-{hi}")
    dom, dow = fields[2], fields[4]
    if (dom == "?") == (dow == "?"):
        raise ValueError(f"{expr!r}: exactly one of day-of-month and day-of-week must be '?'")
    return expr.strip()


class ScheduleConfig(_Model):
    """The nightly suite: when it starts (EventBridge Scheduler cron + IANA time zone) and what it runs."""

    enabled: bool = True
    cron: str = "cron(0 2 * * ? *)"
    timezone: str = "UTC"
    suite: list[str] = Field(default_factory=lambda: ["infra/nightly.yaml"], min_length=1)

    @field_validator("cron")
    @classmethod
    def _cron(cls, value: str) -> str:
        return check_cron(value)

    @field_validator("timezone")
    @classmethod
    def _tz(cls, value: str) -> str:
        if value not in available_timezones():
            try:
                ZoneInfo(value)
            except (ZoneInfoNotFoundError, ValueError) as exc:
                raise ValueError(f"{value!r} is not an IANA time zone (e.g. Europe/Berlin)") from exc
        return value


class SinkConfig(_Model):
    """Where results go besides S3: nowhere by default (the S3 run records are the history), or
    Timestream for InfluxDB (opt-in: a fixed monthly cost) or LiveAnalytics (accounts that have it)."""

    kind: Literal["liveanalytics", "influxdb", "none"] = "none"
    influx_instance_type: Literal[
        "db.influx.medium", "db.influx.large", "db.influx.xlarge", "db.influx.2xlarge"
    ] = "db.influx.medium"
    influx_storage_gb: int = Field(default=20, ge=20, le=16384)
    retention_days: int = Field(default=365, ge=1, le=73000)


class BudgetConfig(_Model):
    """Spend guard rails: the daily estimated-charges alarm threshold and who hears about it."""

    daily_usd: float = Field(default=25.0, gt=0, le=100000)
    alarm_email: str | None = Field(default=None, pattern=r"^[^@\s]+@[^@\s]+\.[^@\s]+$")


class RunnerConfig(_Model):
    """The runner task definition's size. Every launch overrides it with the spec's ``runner.size``,
    whose defaults (spec/runners.py) are these, so the two are held equal by a test."""

    fargate_cpu: Literal[1024, 2048, 4096, 8192, 16384] = 2048
    fargate_memory_mib: int = Field(default=4096, ge=2048, le=122880)
    ec2_instance_type: str = Field(default="c7i.xlarge", pattern=r"^[a-z][a-z0-9-]*\.[a-z0-9]+$")
    image: str | None = Field(
        default=None,
        description="a pushed image URI; when unset the image is built from runner-image/ "
        "(needs Docker at deploy, or -c benchwright:build-image=true at synth)",
    )


class NetworkConfig(_Model):
    """``nat``: one NAT gateway (cheapest for the API calls the stack makes, see infra/network.py);
    ``endpoints``: isolated subnets + interface endpoints, no route to the internet at all."""

    egress: Literal["endpoints", "nat"] = "nat"
    cidr: str = Field(default="10.42.0.0/16", pattern=r"^\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}/(1[6-9]|2[0-4])$")


class ApiLimitsConfig(_Model):
    """What a spec submitted through the API may ask of this account (benchwright.api.limits):
    ``endpoint_cidrs`` an endpoint target's addresses must lie in (none: endpoint targets refused
    with cloud runners; link-local and metadata addresses are refused always), and the instance
    classes, node types and instance types it may start (shell patterns; empty: the defaults), and
    how many runs one caller (IAM identity) may start per UTC day (benchwright.api.quota), and the
    estimated USD one request may start (benchwright.api.cost): a request the packaged price list
    cannot price is refused unless ``allow_unpriced``."""

    endpoint_cidrs: list[str] = Field(default_factory=list, max_length=20)
    instance_types: list[str] = Field(default_factory=list, max_length=100)
    max_runs_per_day: int = Field(default=DEFAULT_MAX_RUNS_PER_DAY, ge=1, le=10000)
    max_usd_per_request: float = Field(default=DEFAULT_MAX_USD_PER_REQUEST, gt=0, le=100000)
    allow_unpriced: bool = False

    @field_validator("endpoint_cidrs")
    @classmethod
    def _cidrs(cls, value: list[str]) -> list[str]:
        import ipaddress

        for cidr in value:
            try:
                network = ipaddress.ip_network(cidr, strict=False)
            except ValueError:
                raise ValueError(f"{cidr!r} is not a CIDR (10.0.0.0/16)") from None
            if network.is_link_local or network.is_loopback or network.prefixlen == 0:
                raise ValueError(f"{cidr!r}: link-local, loopback and 0.0.0.0/0 are never allowed")
        return value

    @field_validator("instance_types")
    @classmethod
    def _types(cls, value: list[str]) -> list[str]:
        for pattern in value:
            if not re.match(r"^[a-z0-9*?][a-z0-9.*?-]{0,40}$", pattern):
                raise ValueError(f"{pattern!r} is not an instance type pattern (db.r6g.*, c6i.8xlarge)")
        return value


class StageConfig(_Model):
    """Everything that differs between two deployments of Benchwright."""

    name: str = "dev"
    account: str | None = None
    region: str = "us-east-1"
    availability_zones: list[str] = Field(default_factory=lambda: ["us-east-1a", "us-east-1b"])
    owner: str = "benchwright"
    schedule: ScheduleConfig = Field(default_factory=ScheduleConfig)
    sink: SinkConfig = Field(default_factory=SinkConfig)
    budget: BudgetConfig = Field(default_factory=BudgetConfig)
    runner: RunnerConfig = Field(default_factory=RunnerConfig)
    network: NetworkConfig = Field(default_factory=NetworkConfig)
    results_retention_days: int = Field(default=400, ge=30, le=3650)
    janitor_rate_minutes: int = Field(default=60, ge=5, le=1440)
    max_run_hours: int = Field(default=8, ge=1, le=48)
    # Who may read and cancel every run through the API (others see only the runs they submitted):
    # IAM role names or user/role ARNs.
    api_admins: list[str] = Field(default_factory=list, max_length=50)
    api: ApiLimitsConfig = Field(default_factory=ApiLimitsConfig)

    @field_validator("name", "owner")
    @classmethod
    def _name(cls, value: str) -> str:
        if not _NAME.match(value):
            raise ValueError(f"{value!r} must be 2-25 characters: lower-case letters, digits, '-'")
        return value

    @field_validator("account")
    @classmethod
    def _account(cls, value: str | None) -> str | None:
        if value is not None and not _ACCOUNT.match(value):
            raise ValueError(f"{value!r} is not a 12-digit AWS account id")
        return value

    @field_validator("api_admins")
    @classmethod
    def _admins(cls, value: list[str]) -> list[str]:
        for admin in value:
            if not (_ADMIN_ARN.match(admin) or _ROLE_NAME.match(admin)):
                raise ValueError(
                    f"{admin!r} is neither an IAM role name nor an arn:aws:iam::ACCOUNT:(role|user)/NAME ARN"
                )
        return value

    @field_validator("region")
    @classmethod
    def _region(cls, value: str) -> str:
        if value not in REGIONS:
            raise ValueError(f"{value!r} is not a supported AWS region (e.g. us-east-1, eu-west-1)")
        return value

    @model_validator(mode="after")
    def _cross(self) -> StageConfig:
        azs = self.availability_zones
        if len(azs) < 2:
            raise ValueError("availability_zones: list at least 2 zones (subnet groups need two)")
        if len(set(azs)) != len(azs):
            raise ValueError("availability_zones: zones must be distinct")
        for az in azs:
            if not re.fullmatch(re.escape(self.region) + r"[a-z]", az):
                raise ValueError(f"availability_zones: {az!r} is not a zone of region {self.region}")
        if self.sink.kind == "liveanalytics" and self.region not in LIVEANALYTICS_REGIONS:
            raise ValueError(f"sink.kind: LiveAnalytics is not offered in {self.region}; use 'influxdb'")
        return self

    @property
    def stack_name(self) -> str:
        return f"benchwright-{self.name}"


def _field_of(error: Any, message: str) -> str:
    loc = ".".join(str(p) for p in error.get("loc", ()))
    # Model-level validators report "field: reason"; lift the field into the path.
    head, sep, _ = message.partition(": ")
    if not loc and sep and re.fullmatch(r"[a-z_.]+", head):
        loc = head
    return f"stage.{loc}" if loc else "stage"


def parse_stage(data: dict[str, Any]) -> StageConfig:
    """Validate a raw mapping; the first problem becomes a SpecError naming its field."""
    try:
        return StageConfig.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        message = str(first.get("msg", "invalid")).removeprefix("Value error, ")
        field = _field_of(first, message)
        if field != "stage" and message.startswith(field.removeprefix("stage.") + ": "):
            message = message.split(": ", 1)[1]
        raise SpecError(field, message) from None


def load_stage(context: dict[str, Any] | None, config_file: str | None = None) -> StageConfig:
    """Stage settings from the cdk.json ``benchwright`` context, overlaid by an optional file."""
    data: dict[str, Any] = dict(context or {})
    if config_file:
        path = Path(config_file)
        if not path.is_file():
            raise SpecError("benchwright:config", f"{config_file}: no such file")
        text = path.read_text(encoding="utf-8")
        try:
            loaded = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
        except (json.JSONDecodeError, yaml.YAMLError) as exc:
            raise SpecError(config_file, f"not valid JSON/YAML: {exc}") from None
        if not isinstance(loaded, dict):
            raise SpecError(config_file, "must hold a mapping of stage settings")
        data.update(loaded)
    return parse_stage(data)
