"""Deployment settings of the AWS providers: one pydantic model, read once from the environment.

The CDK stack sets these variables on every Lambda (see ``ENVIRONMENT`` in functions/__init__.py);
tests build the model directly. Defaults live here and nowhere else.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

PREFIX = "BENCHWRIGHT_"


class AwsSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    region: str = "us-east-1"
    stage: str = "dev"
    results_bucket: str = "benchwright-results"
    owner: str = "benchwright"
    ttl_hours: float = 12.0  # expires-at tag = creation + ttl; the janitor deletes what outlives it
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
    launch_template: str | None = None  # optional EC2 launch template for runner instances
    metrics_namespace: str = "Benchwright"
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
        env = os.environ if env is None else env
        values: dict[str, object] = {}
        for name, field in cls.model_fields.items():
            raw = env.get(PREFIX + name.upper())
            if raw is None:
                continue
            if field.annotation == list[str]:
                values[name] = [part.strip() for part in raw.split(",") if part.strip()]
            else:
                values[name] = raw
        if "region" not in values and env.get("AWS_REGION"):
            values["region"] = env["AWS_REGION"]
        return cls.model_validate(values)

    def runner_security_groups(self) -> list[str]:
        return [self.runner_security_group] if self.runner_security_group else list(self.security_group_ids)


def env_names() -> list[str]:
    """Every variable ``from_env`` reads (CDK sets them; a test checks the list)."""
    return [PREFIX + name.upper() for name in AwsSettings.model_fields]
