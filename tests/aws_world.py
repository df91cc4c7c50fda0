"""A moto AWS account for the workflow tests: network, bucket, ECS, secrets, and a Lambda dispatcher
that runs the REAL handlers in functions/ when moto's Step Functions interpreter invokes a Lambda.

A pytest plugin (tests/conftest.py registers it): its fixtures ``aws_world`` (one account per module)
and ``world`` (reset for each test) reach every suite without an import; the helpers below (specs,
inputs, the runner infrastructure, sample documents) are imported by name.

The runner is the REAL runner: when LaunchRunner starts a task, the world runs the image's ENTRYPOINT
script with the override moto recorded (tests/runner_image.py) as a process, with the task's
environment and moto reached over HTTP (``moto_endpoint``). It reads its plan from S3, its password
from the RDS-managed secret, runs against the local PostgreSQL, writes its output to S3, and its exit
code becomes the task's. RDS instances of ``rds_spec`` stand in for real ones that way: their endpoint
is the local PostgreSQL, their master user a role of the world's own whose password is set to the one
moto generated for the managed secret.

Only what cannot run here is simulated, each piece named: the output of runners for the seed
experiments' specs (``recorded_output``: their loads and phases are sized for the cloud, their engines
and tools are not stood in here; ``benchwright rehearse --quick`` runs those), the readiness probe,
the Price List API (saved GetProducts excerpts) and Slack (a recording HTTP server on 127.0.0.1).
"""

from __future__ import annotations

import contextlib
import importlib
import json
import re
import secrets
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import AWS_TEST_REGION, FAKE_AWS_ENV
from tests.receivers import SlackWebhookReceiver

REGION = AWS_TEST_REGION
# Bounds on work that should end by itself, far above what it takes on a loaded machine: they only turn
# a hang into a failure. A real runner loads 1,000 records and runs 2,000 operations (5-50 s seen);
# an execution runs up to four of them one after another (World.runner_lock).
RUNNER_TIMEOUT_S = 300.0
EXECUTION_TIMEOUT_S = 600.0
ACCOUNT = "123456789012"
REPO = Path(__file__).resolve().parents[1]
PRICES = REPO / "tests" / "data" / "pricing"
SLACK_SECRET_VALUE_MARK = "SLACKSECRETTOKEN"
# The master user and database of rds_spec's instances: a role and database of this process's own on
# the local PostgreSQL, which stands in for those instances (World.stand_in_for_rds).
WORLD_LOGIN = f"bw_world_{secrets.token_hex(4)}"


class FakeContext:
    function_name = "benchwright-test"
    function_version = "$LATEST"
    memory_limit_in_mb = 256
    invoked_function_arn = f"arn:aws:lambda:{REGION}:{ACCOUNT}:function:benchwright-test"
    aws_request_id = "req-0001"
    log_group_name = "/aws/lambda/benchwright-test"
    log_stream_name = "stream"

    def get_remaining_time_in_millis(self) -> int:
        return 300_000


# ---------------------------------------------------------------- Slack stand-in
class SlackServer(SlackWebhookReceiver):
    """Slack's incoming webhook as Slack checks it (tests/receivers.py); ``down = 500`` is Slack down."""

    def __init__(self) -> None:
        super().__init__(token=SLACK_SECRET_VALUE_MARK)


# ---------------------------------------------------------------- moto for other processes
@contextlib.contextmanager
def moto_endpoint(reset: bool = False) -> Iterator[str]:
    """Inside mock_aws: the same moto account served over HTTP on 127.0.0.1, for processes this test
    starts (the real runner reaches it through ``AWS_ENDPOINT_URL``). One account, two doors.
    Standing alone (``reset=True``), its accounts are emptied on exit: moto's backends are the
    process's, so what one test made would otherwise be there for the next."""
    import urllib.request

    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    endpoint = f"http://{host}:{port}"
    try:
        yield endpoint
    finally:
        if reset:
            urllib.request.urlopen(urllib.request.Request(f"{endpoint}/moto-api/reset", method="POST"))
        server.stop()


@dataclass
class PgLogin:
    """A role and database of our own on the local PostgreSQL, with a password only we know: a
    stand-in for an RDS instance's master user, so a secret scan can look for the password."""

    user: str
    password: str
    database: str
    port: int

    @property
    def url(self) -> str:
        """The runner's connection property: no password, as a target gives it."""
        return f"postgresql://{self.user}@127.0.0.1:{self.port}/{self.database}"


def _admin_url() -> str:
    from tests.conftest import PASSWORD, PG_PORT, USER

    return f"postgresql://{USER}:{PASSWORD}@127.0.0.1:{PG_PORT}/bench"


@contextlib.contextmanager
def pg_login(name: str | None = None, password: str | None = None) -> Iterator[PgLogin]:
    import psycopg

    from tests.conftest import PG_PORT

    name = name or f"bw_login_{secrets.token_hex(4)}"
    login = PgLogin(user=name, password=password or secrets.token_urlsafe(24), database=name, port=PG_PORT)
    admin = _admin_url()
    with psycopg.connect(admin, autocommit=True, connect_timeout=5) as conn:
        conn.execute(psycopg.sql.SQL("CREATE ROLE {} LOGIN PASSWORD {}").format(
            psycopg.sql.Identifier(name), psycopg.sql.Literal(login.password)
        ))  # fmt: skip
        conn.execute(psycopg.sql.SQL("CREATE DATABASE {} OWNER {}").format(
            psycopg.sql.Identifier(name), psycopg.sql.Identifier(name)
        ))  # fmt: skip
        # as tests/conftest.py's pg_url: a commit need not wait for its WAL flush in a database dropped
        # after the module (a runner's load commits each insert: 2-5 s of fsync waits on a busy disk)
        conn.execute(psycopg.sql.SQL("ALTER DATABASE {} SET synchronous_commit = off").format(
            psycopg.sql.Identifier(name)
        ))  # fmt: skip
    try:
        yield login
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(psycopg.sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(
                psycopg.sql.Identifier(name)
            ))  # fmt: skip
            conn.execute(psycopg.sql.SQL("DROP ROLE IF EXISTS {}").format(psycopg.sql.Identifier(name)))


def rds_managed_secret(secretsmanager: Any, login: PgLogin, instance: str = "bw-db") -> str:
    """A secret in the shape RDS creates for ManageMasterUserPassword: named ``rds!db-<uuid>``, a
    SecretString of exactly ``{"username": ..., "password": ...}``. Returns its ARN."""
    import uuid

    response = secretsmanager.create_secret(
        Name=f"rds!db-{uuid.uuid4()}",
        Description=f"Secret associated with primary RDS DB instance: arn:aws:rds:{REGION}:{ACCOUNT}:db:{instance}",
        SecretString=json.dumps({"username": login.user, "password": login.password}),
    )
    arn: str = response["ARN"]
    return arn


# ---------------------------------------------------------------- documents for merge/report tests
def sample_documents(
    plan: dict[str, Any], started: datetime, seconds: float = 240.0, errors: float = 0.0
) -> list[dict[str, Any]]:
    """Result documents shaped like a runner's for ``plan`` (a small, honest-looking histogram), for
    tests of what happens to documents after the runner (merging, reports, cost) that need fixed
    figures, and for ``recorded_output``. They say so: ``measurement.method`` is "sample documents".
    ``errors``: the share of the run phase's operations that failed, flagged as the runner flags them."""
    from benchwright.results import IntervalSample, Measurement, OperationSummary, ResultDocument, failed_name
    from benchwright.runner.measure import encode_histogram, new_histogram

    docs = []
    t0 = started
    for phase in plan["phases"]:
        hist = new_histogram()
        for i in range(1, 2001):
            hist.record_value(100 + (i % 97) * 7)
        ops = 2000
        runtime = seconds if phase["phase"] == "run" else 5.0
        failed = round(ops * errors) if phase["phase"] == "run" else 0
        summary = OperationSummary(
            operations=ops - failed,
            statuses={"OK": ops - failed},
            throughput=(ops - failed) / runtime,
            average_us=float(hist.get_mean_value()),
            min_us=float(hist.get_min_value()),
            max_us=float(hist.get_max_value()),
            p50_us=float(hist.get_value_at_percentile(50)),
            p90_us=float(hist.get_value_at_percentile(90)),
            p95_us=float(hist.get_value_at_percentile(95)),
            p99_us=float(hist.get_value_at_percentile(99)),
            p999_us=float(hist.get_value_at_percentile(99.9)),
            histogram=encode_histogram(hist),
        )
        end = t0 + timedelta(seconds=runtime)
        doc = ResultDocument(
            run_id=plan["run_id"],
            cell=plan["cell_id"],
            workload=phase["workload"],
            phase=phase["phase"],
            engine=phase["engine"],
            measurement=Measurement(latency="service_time", method="sample documents"),
            started_at=t0,
            ended_at=end,
            runtime_ms=runtime * 1000,
            operations_total=ops - failed,
            failed_total=failed,
            throughput=(ops - failed) / runtime,
            operations={  # failures are their own entry (READ-FAILED), as the runner writes them
                "READ": summary,
                **(
                    {
                        failed_name("READ"): summary.model_copy(
                            update={
                                "operations": failed,
                                "statuses": {"ERROR": failed},
                                "throughput": failed / runtime,
                            }
                        )
                    }
                    if failed
                    else {}
                ),
            },
            intervals=[
                IntervalSample(
                    t=float(s + 1),
                    operations={"READ": ops // int(runtime)},
                    throughput=ops / runtime,
                    p50_us=200.0,
                    p99_us=700.0,
                    max_us=900.0,
                )
                for s in range(int(runtime))
            ],
        )
        doc.flag_errors()
        docs.append(json.loads(doc.model_dump_json()))
        t0 = end
    return docs


# ---------------------------------------------------------------- the world
@dataclass
class World:
    settings: Any
    clients: Any
    slack: SlackServer
    faults: dict[str, Any] = field(default_factory=dict)
    calls: list[str] = field(default_factory=list)
    ready_after: int = 0  # CheckTarget calls that see "not accepting connections" first
    probe_calls: int = 0
    runner_mode: str = "ok"  # ok | fail | never_start
    # recorded output only: per cell id, the share of its run phase's operations that failed
    recorded_errors: dict[str, float] = field(default_factory=dict)
    sfn_arns: dict[str, str] = field(default_factory=dict)
    timings: list[tuple[str, float]] = field(default_factory=list)
    secrets: list[str] = field(default_factory=list)  # secret values seen during runs (for scans)
    executions: int = 0
    undo: list[Any] = field(default_factory=list)
    endpoint: str = ""  # moto over HTTP, for the runner processes
    runner_logs: list[str] = field(default_factory=list)  # what the real runners printed
    runner_runs: int = 0  # how many real runner processes ran
    stood_in: set[str] = field(default_factory=set)  # secrets made RDS-shaped (stand_in_for_rds)
    login_password: str = field(default="", repr=False)  # the stand-in role's (pg_login)
    world_errors: list[str] = field(default_factory=list)  # the test world's own failures
    # one real runner at a time: every stood-in instance is the same PostgreSQL database, and the
    # cells of a suite (a Map) would otherwise load the same table at once
    runner_lock: threading.Lock = field(default_factory=threading.Lock)
    # stood-in instances no real runner has used yet: a new instance's database is empty, so the
    # first runner on each finds the stand-in database emptied (first_use_of)
    unused_targets: set[str] = field(default_factory=set)
    running: set[str] = field(default_factory=set)  # executions started and not seen finished
    # executions whose interpreter thread has ended (moto's own notice, hooked in aws_world): execute
    # waits on it instead of polling DescribeExecution, whose every call costs CPU the run competes for
    ended: set[str] = field(default_factory=set)
    ending: threading.Condition = field(default_factory=threading.Condition)

    def execution_ended(self, arn: str) -> None:
        """moto's interpreter thread finished execution ``arn`` (its status is final)."""
        with self.ending:
            self.ended.add(arn)
            self.ending.notify_all()

    def stop_leftovers(self) -> None:
        """Stop what an interrupted test (pytest-timeout, an exception while polling) left running, so
        its states call no handler during the next test."""
        while self.running:
            arn = self.running.pop()
            with contextlib.suppress(Exception):  # it may have finished meanwhile
                self.clients("stepfunctions").stop_execution(executionArn=arn, error="TestEnded")

    def reset(self) -> None:
        self.stop_leftovers()
        while self.undo:
            self.undo.pop()()
        self.faults.clear()
        self.calls.clear()
        self.timings.clear()
        self.ready_after = 0
        self.probe_calls = 0
        self.runner_mode = "ok"
        self.recorded_errors.clear()
        self.slack.down = None
        self.slack.requests = 0
        self.slack.posts.clear()
        self.runner_logs.clear()
        self.runner_runs = 0
        assert not self.world_errors, self.world_errors  # a broken world must not pass silently
        self.slack.refused.clear()

    # -- probe ----------------------------------------------------------------------------
    def probe(self, host: str, port: int) -> bool:
        self.probe_calls += 1
        if self.faults.get("unreachable"):
            return False
        return self.probe_calls > self.ready_after

    # -- dispatch -------------------------------------------------------------------------
    def invoke(self, name: str, event: dict[str, Any]) -> tuple[bool, dict[str, Any]]:
        """Run the handler of state ``name``; (ok, payload-or-error)."""
        from functions import HANDLERS

        self.calls.append(name)
        started = time.monotonic()
        fault = self.faults.get(name)
        try:
            if isinstance(fault, BaseException):
                raise fault
            if fault is not None:
                fault(event)  # raises when this invocation should fail
            module, func = HANDLERS[name].rsplit(".", 1)
            result = getattr(importlib.import_module(module), func)(event, FakeContext())
        except Exception as exc:
            return False, {"errorType": type(exc).__name__, "errorMessage": str(exc)}
        try:  # the world's own part: its failures reach the execution with their message
            if name == "CheckTarget" and result.get("target", {}).get("secret_arn"):
                self.stand_in_for_rds(result["target"]["secret_arn"])
            if name == "LaunchRunner":
                self.run_runners(result)
        except Exception as exc:
            self.world_errors.append(f"{name}: {type(exc).__name__}: {exc}")
            return False, {"errorType": "WorldError", "errorMessage": self.world_errors[-1]}
        self.timings.append((name, round(time.monotonic() - started, 2)))
        return True, result

    # -- RDS stand-in -----------------------------------------------------------------------
    def stand_in_for_rds(self, secret_arn: str) -> None:
        """What RDS does with a managed master password, for rds_spec's instances: the secret holds
        ``{"username": <master user>, "password": <generated>}`` and the database accepts exactly that.
        (moto 5.2.5 writes a fixed ``admin`` / ``P@55w0rd!`` secret; RDS writes the master user and a
        generated password, so the world does what RDS does.) With ``runner_mode="fail"`` the secret's
        password is one the database does not take, and the real runner is refused as it would be."""
        sm = self.clients("secretsmanager")
        tags = {t["Key"]: t["Value"] for t in sm.describe_secret(SecretId=secret_arn).get("Tags", [])}
        instance = tags.get("aws:rds:primaryDBInstanceArn", "").rsplit(":", 1)[-1]
        found = self.clients("rds").describe_db_instances()["DBInstances"] if instance else []
        db = next((d for d in found if d["DBInstanceIdentifier"] == instance), None)
        if db is not None and db.get("DBName") == WORLD_LOGIN and secret_arn not in self.stood_in:
            # one role stands in for every instance (suite cells run at once), so every such secret
            # holds its password; "fail": a password the database does not take
            password = self.login_password if self.runner_mode != "fail" else secrets.token_urlsafe(24)
            sm.put_secret_value(
                SecretId=secret_arn,
                SecretString=json.dumps({"username": db["MasterUsername"], "password": password}),
            )
            self.stood_in.add(secret_arn)
            self.unused_targets.add(secret_arn)
        self.secrets.append(json.loads(sm.get_secret_value(SecretId=secret_arn)["SecretString"])["password"])

    # -- runners ----------------------------------------------------------------------------
    def run_runners(self, state: dict[str, Any]) -> None:
        """Each launched runner, as ECS / EC2 would run it: the real runner for plans against the
        world's stand-in database, the recorded output for the others (see the module docstring)."""
        from moto.ecs.models import ecs_backends

        backend = ecs_backends[ACCOUNT][REGION]
        for handle in state["runners"]:
            task = backend.tasks.get(self.settings.ecs_cluster, {}).get(handle["id"])
            if self.runner_mode == "never_start":
                if task is not None:
                    task.containers[0].exitCode = None
                    task.stopped_reason = "CannotPullContainerError: image not found"
                continue
            plan = self._s3_json(handle["details"]["plan"])
            if WORLD_LOGIN in json.dumps(plan.get("connection", {})):
                with self.runner_lock:
                    self.first_use_of(state.get("target", {}).get("secret_arn"))
                    code = self.run_real_runner(handle)
            else:
                code = 2 if self.runner_mode == "fail" else self.recorded_output(plan, handle)
            if task is not None:
                task.containers[0].exitCode = code
            if handle["details"].get("kind") == "ec2":  # the runner instance shuts itself down
                self.clients("ec2").terminate_instances(InstanceIds=[handle["id"]])

    def first_use_of(self, secret_arn: str | None) -> None:
        """Before the first runner on a stood-in instance: the stand-in database emptied, as a new RDS
        instance's is. One database stands in for every instance of the module, so without this a
        load on a second instance (another test, another target group of a suite) inserts keys an
        earlier load left there: every insert fails, and the runner aborts the phase once every
        operation has failed for 3 s -- on a loaded machine only, where the failing load lasts that
        long. Later runners on the same instance keep its data (a suite's cells share their group's
        load). Called under ``runner_lock``: no runner is connected while the schema is replaced."""
        if secret_arn is None or secret_arn not in self.unused_targets:
            return
        self.unused_targets.discard(secret_arn)
        import psycopg

        admin = _admin_url().rsplit("/", 1)[0] + f"/{WORLD_LOGIN}"
        with psycopg.connect(admin, autocommit=True, connect_timeout=10) as conn:
            conn.execute("DROP SCHEMA IF EXISTS public CASCADE")
            conn.execute(
                psycopg.sql.SQL("CREATE SCHEMA public AUTHORIZATION {}").format(
                    psycopg.sql.Identifier(WORLD_LOGIN)
                )
            )

    def _s3_json(self, uri: str) -> Any:
        bucket, key = uri[5:].split("/", 1)
        return json.loads(self.clients("s3").get_object(Bucket=bucket, Key=key)["Body"].read())

    def run_real_runner(self, handle: dict[str, Any]) -> int:
        """The runner container's process: ENTRYPOINT + the override ECS got (or the arguments of the
        EC2 user-data's ``docker run``), the environment the task got, AWS at moto's endpoint, the
        image's python3 being this interpreter. Returns its exit code."""
        import base64
        import os
        import subprocess
        import sys

        from tests.runner_image import container_argv, docker_run

        if handle["details"].get("kind") == "ec2":  # user-data: docker run IMAGE <arguments>
            data = self.clients("ec2").describe_instance_attribute(
                InstanceId=handle["id"], Attribute="userData"
            )
            script = base64.b64decode(data["UserData"]["Value"]).decode()
            task_env, args = docker_run(script, str(self.settings.runner_image))
            argv = container_argv(args)
        else:
            task = self.clients("ecs").describe_tasks(cluster=self.settings.ecs_cluster, tasks=[handle["id"]])
            (override,) = task["tasks"][0]["overrides"]["containerOverrides"]
            task_env = {e["name"]: e["value"] for e in override.get("environment", [])}
            argv = container_argv(override["command"])
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PG", "BENCHWRIGHT_", "AWS_"))}
        env.update(ENV)
        env.update(task_env)
        if "BENCHWRIGHT_HOST_LOCK_DIR" in os.environ:  # this test process's own (tests/conftest.py)
            env["BENCHWRIGHT_HOST_LOCK_DIR"] = os.environ["BENCHWRIGHT_HOST_LOCK_DIR"]
        env["AWS_ENDPOINT_URL"] = self.endpoint
        argv = [sys.executable, *argv[1:]] if argv[0] == "python3" else argv
        done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=RUNNER_TIMEOUT_S)
        self.runner_runs += 1
        self.runner_logs.append(done.stdout + done.stderr)
        return done.returncode

    def recorded_output(self, plan: dict[str, Any], handle: dict[str, Any]) -> int:
        """A runner's output for a plan the real runner cannot run here: the runner's own output model
        (so its shape is the runner's), sample documents that say they are samples."""
        from benchwright.results import ResultDocument
        from benchwright.runner_output import RunnerOutput

        errors = self.recorded_errors.get(plan["cell_id"], 0.0)
        docs = sample_documents(plan, datetime.now(UTC) - timedelta(seconds=260), errors=errors)
        output = RunnerOutput(
            run_id=plan["run_id"],
            cell_id=plan["cell_id"],
            runner_index=plan.get("runner_index", 0),
            documents=[ResultDocument.parse(d) for d in docs],
            exit_code=0,  # the completion marker a runner that finished writes last
        )
        bucket, key = handle["result_pointer"][5:].split("/", 1)
        self.clients("s3").put_object(Bucket=bucket, Key=key, Body=output.model_dump_json().encode())
        return 0

    # -- executions -----------------------------------------------------------------------
    def execute(
        self, machine: str, payload: dict[str, Any], timeout_s: float = EXECUTION_TIMEOUT_S
    ) -> dict[str, Any]:
        """Start an execution and wait until moto's interpreter thread has finished it. ``timeout_s`` only
        bounds a hung execution (it is stopped, so it cannot call handlers during the next test): a suite
        runs up to four real runners one after another, a minute on a quiet machine, several on a loaded
        one."""
        sfn = self.clients("stepfunctions")
        self.executions += 1
        arn = sfn.start_execution(
            stateMachineArn=self.sfn_arns[machine], name=f"x{self.executions}", input=json.dumps(payload)
        )["executionArn"]
        self.running.add(arn)
        with self.ending:
            finished = self.ending.wait_for(lambda: arn in self.ended, timeout=timeout_s)
        if not finished:
            self.stop_leftovers()
            raise AssertionError(f"execution still running after {timeout_s} s: {self.calls}")
        self.running.discard(arn)
        described = sfn.describe_execution(executionArn=arn)
        assert described["status"] != "RUNNING", f"moto ended {arn} without a final status: {described}"
        events = []
        token = None
        while True:
            page = sfn.get_execution_history(
                executionArn=arn, maxResults=1000, **({"nextToken": token} if token else {})
            )
            events.extend(page["events"])
            token = page.get("nextToken")
            if not token:
                break
        return {
            "status": described["status"],
            "output": json.loads(described.get("output") or "null"),
            "error": described.get("error"),
            "cause": described.get("cause"),
            "events": events,
        }

    def aws_error(self, service: str, operation: str, code: str, times: int | None = None) -> list[int]:
        """Make the handlers' own ``service`` client fail ``operation`` with ``code`` (the first ``times``
        calls, or always): a real botocore ClientError through the real error translation."""
        from botocore.awsrequest import AWSResponse

        import functions._common as common

        seen: list[int] = []

        def fail(**kwargs: Any) -> Any:
            seen.append(1)
            if times is not None and len(seen) > times:
                return None
            response = AWSResponse("https://aws.test", 400, {}, None)
            return response, {
                "Error": {"Code": code, "Message": f"injected {code}"},
                "ResponseMetadata": {"HTTPStatusCode": 400},
            }

        common.clients()(service).meta.events.register(f"before-call.{service}.{operation}", fail)
        self.undo.append(
            lambda: common.clients()(service).meta.events.unregister(
                f"before-call.{service}.{operation}", fail
            )
        )
        return seen

    def record(self, run_id: str) -> dict[str, Any]:
        """The run record the workflow saved in S3 ({} when there is none)."""
        s3 = self.clients("s3")
        try:
            body = s3.get_object(Bucket=self.settings.results_bucket, Key=f"runs/{run_id}/record.json")[
                "Body"
            ]
        except Exception:
            return {}
        data: dict[str, Any] = json.loads(body.read())
        return data

    def record_error(self, run_id: str) -> str | None:
        return self.record(run_id).get("error")

    def leftovers(self, run_id: str) -> list[Any]:
        from benchwright.providers.aws.janitor import leftovers

        return leftovers(self.clients, run_id)

    def all_text(self) -> str:
        """Every S3 object's bytes, for secret scans."""
        s3 = self.clients("s3")
        out = []
        for page in s3.get_paginator("list_objects_v2").paginate(Bucket=self.settings.results_bucket):
            for item in page.get("Contents", []):
                out.append(
                    s3.get_object(Bucket=self.settings.results_bucket, Key=item["Key"])["Body"]
                    .read()
                    .decode()
                )
        return "\n".join(out)


def runner_infrastructure(cidr: str, *, bucket: str, cluster: str) -> tuple[list[str], str]:
    """Inside mock_aws: a VPC with one subnet per AZ (a, b, c), a security group, the results bucket,
    an ECS cluster and the runner's Fargate task definition, as moto needs them for RunTask."""
    import boto3

    ec2 = boto3.client("ec2", region_name=REGION)
    vpc = ec2.create_vpc(CidrBlock=f"{cidr}.0.0/16")["Vpc"]["VpcId"]
    ec2.modify_vpc_attribute(VpcId=vpc, EnableDnsHostnames={"Value": True})
    subnets = [
        ec2.create_subnet(VpcId=vpc, CidrBlock=f"{cidr}.{i}.0/24", AvailabilityZone=f"{REGION}{az}")[
            "Subnet"
        ]["SubnetId"]
        for i, az in enumerate("abc")
    ]
    sg = ec2.create_security_group(GroupName="bw-test", Description="bw", VpcId=vpc)["GroupId"]
    boto3.client("s3", region_name=REGION).create_bucket(Bucket=bucket)
    ecs = boto3.client("ecs", region_name=REGION)
    ecs.create_cluster(clusterName=cluster)
    ecs.register_task_definition(
        family="bw-runner",
        networkMode="awsvpc",
        requiresCompatibilities=["FARGATE"],
        cpu="1024",
        memory="2048",
        containerDefinitions=[
            {"name": "runner", "image": "benchwright:test", "memory": 2048, "essential": True}
        ],
    )
    return subnets, sg


def substitute(text: str, arns: dict[str, str]) -> str:
    def repl(m: re.Match[str]) -> str:
        name = m.group(1)
        if name.endswith("FunctionArn"):
            return f"arn:aws:lambda:{REGION}:{ACCOUNT}:function:{name.removesuffix('FunctionArn')}"
        return arns[name]

    return re.sub(r"\$\{([A-Za-z0-9]+)\}", repl, text)


def fast_retries(definition: str) -> str:
    """Retries keep their attempts and error names; only the interval shrinks (1 s is moto's minimum)."""
    data = json.loads(definition)

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            for retry in node.get("Retry", []) if isinstance(node.get("Retry"), list) else []:
                retry.update({"IntervalSeconds": 1, "BackoffRate": 1.0})
                retry.pop("MaxDelaySeconds", None)
                retry.pop("JitterStrategy", None)
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(data)
    return json.dumps(data)


ENV = {
    **FAKE_AWS_ENV,
    "POWERTOOLS_TRACE_DISABLED": "1",
    "POWERTOOLS_METRICS_NAMESPACE": "Benchwright",
    "POWERTOOLS_SERVICE_NAME": "benchwright",
}


# The stack's run-scoped roles (infra/isolation.py) the stages act through, as in a deployment:
# AwsSettings field -> role name (the stack's logical id without its "Isolation" prefix and hash).
RUN_ROLES = {
    "teardown_run_role_arn": "TeardownRunRole",
    "operations_run_role_arn": "OperationsRunRole",
    "results_run_role_arn": "ResultsRunRole",
}
RUN_ROLE_TRUST = {
    "Version": "2012-10-17",
    "Statement": [
        {"Effect": "Allow", "Principal": {"AWS": "*"}, "Action": ["sts:AssumeRole", "sts:TagSession"]}
    ],
}


def run_roles() -> dict[str, str]:
    """Inside mock_aws: the run-scoped roles, so Teardown and CheckOperations route their deletes and
    secret reads, and the stages their run's objects, through a session tagged with their run
    (providers/aws/run_session.py) as they do when deployed. moto keeps no session tags and evaluates no policy: which calls take that route is
    what the world shows (tests/infra/test_iam_coverage.py holds them to the run roles' statements);
    that the roles deny another run is tests/infra/test_run_session_check.py's."""
    import boto3

    iam = boto3.client("iam", region_name=REGION)
    return {
        field: str(
            iam.create_role(RoleName=name, AssumeRolePolicyDocument=json.dumps(RUN_ROLE_TRUST))["Role"]["Arn"]
        )
        for field, name in RUN_ROLES.items()
    }


def interpret_cheaply(mp: pytest.MonkeyPatch) -> None:
    """Two fixed costs of moto's Step Functions interpreter, paid once instead of at every execution
    and Task state (the interpreter's work is otherwise untouched):

    - it parses the definition with ANTLR for each execution (a suite's Map starts one per cell):
      0.4 s of CPU for the benchmark machine. The parse tree of a definition is kept; the evaluation
      components are still built fresh from it for each execution (they hold its state).
    - it builds a new boto3 client for every Task state's Lambda invoke (a service model read and a
      client class made each time). A client is thread-safe and this one has no per-call setting, so
      one per region and service serves every state.
    """
    from moto.stepfunctions.parser.asl.component.state.exec.state_task import lambda_eval_utils
    from moto.stepfunctions.parser.asl.parse import asl_parser
    from moto.stepfunctions.parser.asl.parse.preprocessor import Preprocessor

    trees: dict[str, Any] = {}
    parse = asl_parser.AmazonStateLanguageParser.parse

    def parse_once(definition: str) -> tuple[Any, Any]:
        tree = trees.get(definition)
        if tree is None:
            program, trees[definition] = parse(definition)  # raises on a bad definition: nothing kept
            return program, trees[definition]
        return Preprocessor().visit(tree), tree

    mp.setattr(asl_parser.AmazonStateLanguageParser, "parse", staticmethod(parse_once))
    clients: dict[tuple[str, str], Any] = {}
    lock = threading.Lock()
    new_client = lambda_eval_utils.boto_client_for

    def shared_client(region: str, service: str, state_credentials: Any = None) -> Any:
        with lock:
            key = (region, service)
            if key not in clients:
                clients[key] = new_client(region, service, state_credentials)
            return clients[key]

    mp.setattr(lambda_eval_utils, "boto_client_for", shared_client)


@pytest.fixture(scope="module")
def aws_world() -> Iterator[World]:
    """One moto account per test module (setting it up costs seconds); tests use distinct run ids."""
    from moto import mock_aws
    from moto.awslambda_simple.models import LambdaSimpleBackend
    from moto.moto_api import state_manager
    from moto.rds.models import DBInstance
    from moto.stepfunctions.parser.backend.execution import BaseExecutionWorkerCommunication

    import functions._common as common
    from benchwright.providers.aws.common import Clients
    from benchwright.providers.aws.config import AwsSettings
    from benchwright.providers.aws.pricing import AwsPriceBook, ExcerptPriceList
    from tests.conftest import PG_PORT

    mp = pytest.MonkeyPatch()
    for key, value in ENV.items():
        mp.setenv(key, value)
    slack = SlackServer()
    aws_config = {"stepfunctions": {"execute_state_machine": True}, "lambda": {"use_docker": False}}
    login_password = secrets.token_urlsafe(24)
    with mock_aws(config=aws_config), moto_endpoint() as endpoint, pg_login(WORLD_LOGIN, login_password):
        state_manager.set_transition(model_name="ecs::task", transition={"progression": "immediate"})
        moto_endpoint_of = DBInstance.endpoint

        def endpoint_of(db: Any) -> dict[str, Any]:  # rds_spec's instances are the local PostgreSQL
            if db.db_name == WORLD_LOGIN:
                return {"Address": "127.0.0.1", "Port": PG_PORT}
            found: dict[str, Any] = moto_endpoint_of.fget(db)  # type: ignore[attr-defined]
            return found

        mp.setattr(DBInstance, "endpoint", property(endpoint_of))
        import boto3

        subnets, sg = runner_infrastructure("10.40", bucket="bw-results-test", cluster="bw-test")
        secret = boto3.client("secretsmanager", region_name=REGION).create_secret(
            Name="bw-slack",
            SecretString=json.dumps({"webhook_url": slack.url}),  # as docs/deploy.md says
        )["ARN"]
        settings = AwsSettings(
            **run_roles(),
            region=REGION,
            results_bucket="bw-results-test",
            owner="tests",
            subnet_ids=subnets,
            security_group_ids=[sg],
            ecs_cluster="bw-test",
            runner_task_definition="bw-runner",
            runner_container="runner",
            runner_ami="ami-12c6146b",
            runner_image="benchwright-runner:test",
            slack_secret_arn=secret,
            sink="none",
        )
        world = World(
            settings=settings,
            clients=Clients(settings),
            slack=slack,
            endpoint=endpoint,
            login_password=login_password,
        )
        world.secrets.append(SLACK_SECRET_VALUE_MARK)
        mp.setattr(common, "_settings", settings)
        mp.setattr(common, "_clients", None)
        mp.setattr(
            common,
            "injected",
            {"probe": world.probe, "prices": AwsPriceBook(ExcerptPriceList.from_directory(str(PRICES)))},
        )

        def invoke(
            self: Any,
            function_name: str,
            qualifier: Any,
            body: Any,
            headers: Any,
            response_headers: dict[str, str],
        ) -> bytes:
            ok, payload = world.invoke(function_name.rsplit(":", 1)[-1], json.loads(body or "{}"))
            if not ok:
                response_headers["x-amz-function-error"] = "Unhandled"
            return json.dumps(payload).encode()

        mp.setattr(LambdaSimpleBackend, "invoke", invoke)
        real_terminated = BaseExecutionWorkerCommunication.terminated

        def terminated(self: Any) -> None:
            try:
                real_terminated(self)
            finally:
                world.execution_ended(self.execution.exec_arn)

        mp.setattr(BaseExecutionWorkerCommunication, "terminated", terminated)
        interpret_cheaply(mp)
        sfn = boto3.client("stepfunctions", region_name=REGION)
        role = f"arn:aws:iam::{ACCOUNT}:role/bw-sfn"
        bench_text = (REPO / "statemachines" / "benchmark.asl.json").read_text()
        world.sfn_arns["benchmark"] = sfn.create_state_machine(
            name="bw-benchmark", roleArn=role, definition=fast_retries(substitute(bench_text, {}))
        )["stateMachineArn"]
        suite_text = (REPO / "statemachines" / "suite.asl.json").read_text()
        world.sfn_arns["suite"] = sfn.create_state_machine(
            name="bw-suite",
            roleArn=role,
            definition=fast_retries(
                substitute(suite_text, {"BenchmarkStateMachineArn": world.sfn_arns["benchmark"]})
            ),
        )["stateMachineArn"]
        try:
            yield world
        finally:
            slack.close()
            mp.undo()


@pytest.fixture
def world(aws_world: World) -> World:
    aws_world.reset()
    return aws_world


def rds_spec(name: str = "rds-pg-ycsb", **target: Any) -> dict[str, Any]:
    """A small AWS spec: RDS PostgreSQL, a Fargate runner in the target's AZ, YCSB workload A of
    2,000 operations (the world's stand-in runs it on the local PostgreSQL with the real runner)."""
    base_target = {
        "provider": "rds",
        "engine": "postgres",
        "engine_version": "16.4",
        "instance_class": "db.m6i.large",
        "storage": {"type": "gp3", "size_gb": 100},
        "availability_zone": f"{REGION}a",
        "settings": {"max_connections": 500},
        "username": WORLD_LOGIN,
        "database": WORLD_LOGIN,
    }
    base_target.update(target)
    return {
        "name": name,
        "target": base_target,
        "runner": {"platform": "fargate", "placement": "same-az", "size": {"cpu": 1, "memory_mb": 2048}},
        "workload": {
            "name": "ycsb",
            "files": ["workloada"],
            "properties": {"recordcount": 1000},
            "phases": {"load": {"threads": 2}, "run": {"threads": 2, "operation_count": 2000}},
        },
    }


def yugabyte_spec(name: str) -> dict[str, Any]:
    """rds_spec's workload on a three-node YugabyteDB cluster on EC2 (node_replace's target); the
    world's runners play recorded output for it (its nodes' addresses answer nothing in moto)."""
    spec = rds_spec(name)
    spec["target"] = {"provider": "ec2", "engine": "postgres", "template": "yugabytedb-3node",
                      "instance_type": "m6i.large", "volume": {"type": "gp3", "size_gb": 50}}  # fmt: skip
    return spec


class Asked(list[str]):
    """The ``host:port`` node_replace's probe asked for, in order, and the yb-admin cluster it used."""

    def __init__(self) -> None:
        super().__init__()
        from benchwright.rehearse.yb_admin import Cluster

        self.yb = Cluster()


@contextlib.contextmanager
def ysql_at_world(world: World) -> Iterator[Asked]:
    """node_replace's probe query through any node's address counts the world's PostgreSQL (the
    real query over a real connection; moto's node addresses answer nothing), and its yb-admin
    commands over SSM (which moto records and runs nothing of) run on one cluster state through the
    rehearsal's executor (rehearse/services/ssm.py); yields what the probe asked and that state."""
    from benchwright.providers.aws import probe
    from benchwright.rehearse.services.ssm import patch_send_command
    from benchwright.rehearse.yb_admin import YbAdmin
    from tests.conftest import PG_PORT

    real = probe.postgres_rows
    asked = Asked()

    def rows(host: str, port: int, user: str, password: str, database: str, timeout_s: float = 5.0) -> int:
        asked.append(f"{host}:{port}")
        return real("127.0.0.1", PG_PORT, WORLD_LOGIN, world.login_password, WORLD_LOGIN, timeout_s)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(probe, "postgres_rows", rows)
        patch_send_command(mp.setattr, YbAdmin(lambda instance: asked.yb, lambda said: None))
        yield asked


def run_input(spec: dict[str, Any], run_id: str = "run-test-1") -> dict[str, Any]:
    return {"run_id": run_id, "spec_name": spec["name"], "spec": spec, "poll_seconds": 0}


def entered(result: dict[str, Any]) -> list[str]:
    """The states an execution (``World.execute``'s result) entered, in order."""
    return [e[k]["name"] for e in result["events"] for k in e if k == "stateEnteredEventDetails"]


def run_record(world: World, run_id: str) -> dict[str, Any]:
    """The run record the workflow saved in S3 (an error when there is none: ``World.record`` is {})."""
    body = world.clients("s3").get_object(
        Bucket=world.settings.results_bucket, Key=f"runs/{run_id}/record.json"
    )
    record: dict[str, Any] = json.loads(body["Body"].read())
    return record


Invoke = Callable[[str, dict[str, Any]], tuple[bool, dict[str, Any]]]
