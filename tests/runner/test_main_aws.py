"""The real runner on "AWS": started as ECS would start it, reading its plan from S3, its database
password from Secrets Manager and writing its output to S3 -- moto over HTTP -- against the local
PostgreSQL.

The secret is made in exactly the shape RDS creates for a managed master password. The launcher is
the real ``AwsRunnerLauncher``; the command is the image's ENTRYPOINT script followed by the override
moto recorded for the task, run as a process with the task's environment and no password in it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from benchwright.providers.base import Credentials
from benchwright.runner.plan import PhaseConfig, RunnerPlan
from benchwright.runner_output import RunnerOutput
from benchwright.spec import RunnerSpec
from tests.aws_world import (
    ENV,
    REGION,
    PgLogin,
    moto_endpoint,
    pg_login,
    rds_managed_secret,
    runner_infrastructure,
)
from tests.runner_image import container_argv, entrypoint_script

pytestmark = pytest.mark.servers

BUCKET = "bw-runner-main"


@dataclass
class Account:
    endpoint: str
    launcher: Any
    clients: Any
    login: PgLogin


class _Target:
    handle = {"availability_zone": f"{REGION}a"}

    def describe(self) -> dict[str, Any]:
        return {}


@pytest.fixture(scope="module")
def account() -> Iterator[Account]:
    from moto import mock_aws

    from benchwright.providers.aws.common import Clients
    from benchwright.providers.aws.config import AwsSettings
    from benchwright.providers.aws.launcher import AwsRunnerLauncher

    mp = pytest.MonkeyPatch()
    for key, value in ENV.items():
        mp.setenv(key, value)
    try:
        with mock_aws(), moto_endpoint() as endpoint, pg_login() as login:
            subnets, sg = runner_infrastructure("10.62", bucket=BUCKET, cluster="bw-main")
            settings = AwsSettings(
                region=REGION,
                results_bucket=BUCKET,
                owner="tests",
                subnet_ids=subnets,
                security_group_ids=[sg],
                ecs_cluster="bw-main",
                runner_task_definition="bw-runner",
                runner_container="runner",
            )
            clients = Clients(settings)
            launcher = AwsRunnerLauncher(
                clients, settings, RunnerSpec.model_validate({"platform": "fargate"})
            )
            yield Account(endpoint=endpoint, launcher=launcher, clients=clients, login=login)
    finally:
        mp.undo()


def plan(login: PgLogin, run_id: str) -> RunnerPlan:
    props = {"postgres.url": login.url, "recordcount": "200", "workload": "workloada"}
    return RunnerPlan(
        run_id=run_id,
        cell_id="c0",
        connection={"postgres.url": login.url},
        phases=[
            PhaseConfig(workload="ycsb", phase="load", engine="postgres", properties=props, threads=2),
            PhaseConfig(
                workload="ycsb",
                phase="run",
                engine="postgres",
                properties={**props, "operationcount": "500"},
                threads=2,
                measured=True,
            ),
        ],
    )


def run_as_ecs_would(account: Account, task_arn: str) -> subprocess.CompletedProcess[str]:
    """The task's container: ENTRYPOINT script + the override's command, the override's environment,
    AWS reached at moto's endpoint; no password and no PG* variables from our own environment."""
    task = account.clients("ecs").describe_tasks(cluster="bw-main", tasks=[task_arn])["tasks"][0]
    (override,) = task["overrides"]["containerOverrides"]
    script = entrypoint_script()
    assert script is not None
    argv = container_argv(override["command"])
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PG", "BENCHWRIGHT_"))}
    env.update({e["name"]: e["value"] for e in override["environment"]})
    env.update(ENV)
    env["AWS_ENDPOINT_URL"] = account.endpoint
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}"  # python3 = this venv's
    return subprocess.run(
        ["sh", str(script), *argv[3:]], capture_output=True, text=True, env=env, timeout=180
    )


def everything_in_s3(account: Account) -> str:
    s3 = account.clients("s3")
    keys = [o["Key"] for o in s3.list_objects_v2(Bucket=BUCKET).get("Contents", [])]
    return "\n".join(s3.get_object(Bucket=BUCKET, Key=k)["Body"].read().decode() for k in keys)


def test_the_runner_reads_an_rds_managed_secret_and_runs_against_postgres(account: Account) -> None:
    arn = rds_managed_secret(account.clients("secretsmanager"), account.login)
    handle = account.launcher.launch(plan(account.login, "secret-1"), Credentials(secret_arn=arn), _Target())

    done = run_as_ecs_would(account, handle.id)

    assert done.returncode == 0, done.stderr[-3000:]
    output = account.launcher.output(handle)
    assert isinstance(output, RunnerOutput) and output.error is None
    assert [d.phase for d in output.documents] == ["load", "run"]
    load, run = output.documents
    assert load.operations_total == 200 and run.operations_total == 500
    assert run.valid, run.validity
    assert account.launcher.results(handle) == output.documents
    task = account.clients("ecs").describe_tasks(cluster="bw-main", tasks=[handle.id])["tasks"][0]
    seen = done.stdout + done.stderr + everything_in_s3(account) + str(task)
    assert account.login.password not in seen


def test_a_secret_without_a_password_fails_the_runner_naming_the_secret(account: Account) -> None:
    arn = account.clients("secretsmanager").create_secret(
        Name="rds!db-no-password", SecretString='{"username": "bench", "pass": "x-not-here-x"}'
    )["ARN"]
    handle = account.launcher.launch(plan(account.login, "secret-2"), Credentials(secret_arn=arn), _Target())

    done = run_as_ecs_would(account, handle.id)

    assert done.returncode != 0, done.stdout
    output = account.launcher.output(handle)
    assert output is not None and output.documents == [], done.stderr
    assert output.error is not None, done.stderr
    assert arn in output.error and "'password'" in output.error
    assert "x-not-here-x" not in done.stderr + done.stdout + everything_in_s3(account)


def test_without_the_secret_the_password_is_missing_and_postgres_refuses(account: Account) -> None:
    """The control: the same launch without the secret cannot connect, so the first test's success
    is the secret's doing."""
    handle = account.launcher.launch(plan(account.login, "secret-3"), Credentials(), _Target())

    done = run_as_ecs_would(account, handle.id)

    assert done.returncode != 0
    output = account.launcher.output(handle)
    assert output is not None and output.documents == [] and output.error
