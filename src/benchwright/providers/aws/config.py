"""Deployment settings: pydantic models read once from the environment, and the ONE source of the
environment variables' names (``BENCHWRIGHT_`` + the field name in capitals).

``AwsSettings`` is what the workflow's Lambdas read, ``ApiSettings`` what the API's Lambda reads. The
CDK stack writes their environments with ``environment(field=value, ...)``, which refuses a field the
model does not have, so the stack cannot set a variable nothing reads or misspell one that is read.
Tests build the models directly. Defaults live here and nowhere else.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from benchwright.providers.aws.names import METRICS_NAMESPACE

PREFIX = "BENCHWRIGHT_"


class EnvSettings(BaseModel):
    """Settings read from ``BENCHWRIGHT_<FIELD>`` variables; lists are comma-separated."""

    model_config = ConfigDict(extra="forbid")

    @classmethod
    def env_name(cls, field: str) -> str:
        """The variable of one field: ``results_bucket`` -> ``BENCHWRIGHT_RESULTS_BUCKET``."""
        if field not in cls.model_fields:
            raise KeyError(f"{cls.__name__} has no setting {field!r}")
        return PREFIX + field.upper()

    @classmethod
    def env_names(cls) -> list[str]:
        return [cls.env_name(name) for name in cls.model_fields]

    @classmethod
    def environment(cls, **values: str | None) -> dict[str, str]:
        """The variables that set these fields (for the stack); ``None`` values are left out."""
        return {cls.env_name(field): value for field, value in values.items() if value is not None}

    @classmethod
    def _values_from_env(cls, env: Mapping[str, str]) -> dict[str, object]:
        values: dict[str, object] = {}
        for name, field in cls.model_fields.items():
            raw = env.get(PREFIX + name.upper())
            if raw is None:
                continue
            if field.annotation == list[str]:
                values[name] = [part.strip() for part in raw.split(",") if part.strip()]
            else:
                values[name] = raw
        if "region" in cls.model_fields and "region" not in values and env.get("AWS_REGION"):
            values["region"] = env["AWS_REGION"]
        return values


class AwsSettings(EnvSettings):
    region: str = "us-east-1"
    stage: str = "dev"
    results_bucket: str = "benchwright-results"
    owner: str = "benchwright"
    ttl_hours: float = 12.0  # expires-at tag = creation + ttl; the janitor deletes what outlives it
    max_run_hours: float = 8.0  # the Benchmark state machine's timeout (a suite's: x SUITE_TIMEOUT_RUNS)
    # the janitor asks these whether the execution of an expired resource's run still runs
    benchmark_state_machine: str | None = None
    suite_state_machine: str | None = None
    subnet_ids: list[str] = Field(default_factory=list)  # private subnets, one or more per AZ
    security_group_ids: list[str] = Field(default_factory=list)  # on targets
    runner_security_group: str | None = None  # on runner tasks / instances (else security_group_ids)
    db_subnet_group: str | None = None
    cache_subnet_group: str | None = None
    memorydb_subnet_group: str | None = None
    ecs_cluster: str = "benchwright"
    runner_task_definition: str = "benchwright-runner"
    runner_container: str = "runner"
    runner_ami: str | None = None  # EC2 runners and self-managed targets (the stack: latest AL2023)
    runner_image: str | None = None  # the runner image URI an EC2 runner host pulls and runs
    egress: Literal["nat", "endpoints"] = "nat"  # endpoints: no internet, only AWS endpoints + S3
    runner_instance_profile: str | None = None  # name or ARN
    # self-managed target nodes (EC2 templates): SSM Run Command's agent role (node_replace's yb-admin)
    node_instance_profile: str | None = None  # name or ARN
    launch_template: str | None = None  # optional EC2 launch template for runner instances
    # the role RDS's Enhanced Monitoring agent writes RDSOSMetrics with (spec target.monitoring.enhanced_s)
    monitoring_role_arn: str | None = None
    # run-scoped roles (infra/isolation.py): the runner, Teardown, CheckOperations and the stages
    # that write a run's objects act through a session of these, tagged with their run
    # (providers/aws/run_session.py); unset, they act as their standing roles
    runner_run_role_arn: str | None = None
    teardown_run_role_arn: str | None = None
    operations_run_role_arn: str | None = None
    results_run_role_arn: str | None = None
    metrics_namespace: str = METRICS_NAMESPACE
    sink: Literal["timestream", "influxdb", "none"] = "none"
    timestream_database: str = "benchwright"
    timestream_table: str = "results"
    influx_url: str | None = None
    influx_org: str = "benchwright"
    influx_bucket: str = "benchwright"
    influx_token_secret_arn: str | None = None
    slack_secret_arn: str | None = None
    ready_timeout_s: float = 3600.0
    probe_timeout_s: float = 3.0

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> AwsSettings:
        """``BENCHWRIGHT_RESULTS_BUCKET`` -> results_bucket; lists are comma-separated."""
        return cls.model_validate(cls._values_from_env(os.environ if env is None else env))

    def runner_security_groups(self) -> list[str]:
        return [self.runner_security_group] if self.runner_security_group else list(self.security_group_ids)


DEFAULT_MAX_RUNS_PER_DAY = 50  # runs one caller may start per UTC day (benchwright.api.quota)
DEFAULT_MAX_USD_PER_REQUEST = 25.0  # estimated USD one POST /runs may start (benchwright.api.cost)


class ApiSettings(EnvSettings):
    """What the API's Lambda reads: where to start runs and find their records."""

    region: str | None = None
    results_bucket: str = ""
    benchmark_state_machine: str = ""
    suite_state_machine: str = ""
    teardown_function: str | None = None
    janitor_function: str | None = None
    api_admins: list[str] = []  # IAM role names or principal ARNs that may read and cancel every run
    # the stage's limits on what a submitted spec may ask (benchwright.api.limits; infra/config.py)
    api_endpoint_cidrs: list[str] = []
    api_instance_types: list[str] = []  # empty: benchwright.api.limits.DEFAULT_INSTANCE_TYPES
    max_run_hours: float = 8
    api_max_runs_per_day: int = Field(
        default=DEFAULT_MAX_RUNS_PER_DAY, ge=1
    )  # per caller (benchwright.api.quota)
    # the estimated cost of everything one request starts (benchwright.api.cost); a request that cannot
    # be priced from the packaged price list is refused unless api_allow_unpriced
    api_max_usd_per_request: float = Field(default=DEFAULT_MAX_USD_PER_REQUEST, gt=0)
    api_allow_unpriced: bool = False

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> ApiSettings:
        env = os.environ if env is None else env
        values = cls._values_from_env(env)
        values.setdefault("region", env.get("AWS_DEFAULT_REGION"))
        return cls.model_validate(values)


def env_names() -> list[str]:
    """Every variable ``AwsSettings.from_env`` reads (CDK sets them; a test checks the list)."""
    return AwsSettings.env_names()
