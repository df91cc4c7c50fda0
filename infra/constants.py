"""Names shared by the stack, the Lambda code and the docs: environment variables, tags, S3 layout.

The Lambda handlers (functions/, providers/aws/) read their wiring from these environment variables,
never from hard-coded names, so one stack can be deployed several times (stages) side by side.
"""

from __future__ import annotations

from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
STATEMACHINES = REPO_ROOT / "statemachines"
FUNCTIONS = REPO_ROOT / "functions"

LAMBDA_PYTHON = "3.12"  # the Lambda runtime; the local bundler installs wheels for exactly this
LAMBDA_PLATFORM = "manylinux2014_x86_64"

# Tags on every resource the stack and every run creates; the janitor sweeps by them.
TAG_MANAGED = "benchwright:managed"
TAG_STAGE = "benchwright:stage"
TAG_OWNER = "benchwright:owner"
TAG_RUN_ID = "benchwright:run-id"
TAG_EXPIRES = "benchwright:expires-at"

# Environment variables the Lambdas and runner tasks read (documented in docs/deploy.md).
ENV_STAGE = "BENCHWRIGHT_STAGE"
ENV_OWNER = "BENCHWRIGHT_OWNER"
ENV_BUCKET = "BENCHWRIGHT_RESULTS_BUCKET"
ENV_CLUSTER = "BENCHWRIGHT_ECS_CLUSTER"
ENV_TASK_DEFINITION = "BENCHWRIGHT_TASK_DEFINITION"
ENV_RUNNER_CONTAINER = "BENCHWRIGHT_RUNNER_CONTAINER"
ENV_LAUNCH_TEMPLATE = "BENCHWRIGHT_LAUNCH_TEMPLATE"
ENV_SUBNETS = "BENCHWRIGHT_SUBNETS"  # JSON {"us-east-1a": "subnet-...", ...}
ENV_RUNNER_SG = "BENCHWRIGHT_RUNNER_SECURITY_GROUP"
ENV_TARGET_SG = "BENCHWRIGHT_TARGET_SECURITY_GROUP"
ENV_TARGET_ROLE = "BENCHWRIGHT_EC2_INSTANCE_PROFILE"
ENV_SINK = "BENCHWRIGHT_SINK"  # liveanalytics | influxdb | none
ENV_TIMESTREAM_DATABASE = "BENCHWRIGHT_TIMESTREAM_DATABASE"
ENV_TIMESTREAM_TABLE = "BENCHWRIGHT_TIMESTREAM_TABLE"
ENV_INFLUX_ENDPOINT = "BENCHWRIGHT_INFLUX_ENDPOINT"
ENV_INFLUX_SECRET = "BENCHWRIGHT_INFLUX_SECRET_ARN"
ENV_SLACK_SECRET = "BENCHWRIGHT_SLACK_SECRET_ARN"
ENV_MAX_RUN_HOURS = "BENCHWRIGHT_MAX_RUN_HOURS"
ENV_BENCHMARK_SM = "BENCHWRIGHT_BENCHMARK_STATE_MACHINE"
ENV_SUITE_SM = "BENCHWRIGHT_SUITE_STATE_MACHINE"
ENV_TEARDOWN_FUNCTION = "BENCHWRIGHT_TEARDOWN_FUNCTION"
ENV_JANITOR_FUNCTION = "BENCHWRIGHT_JANITOR_FUNCTION"
ENV_METRICS_NAMESPACE = "BENCHWRIGHT_METRICS_NAMESPACE"

METRICS_NAMESPACE = "Benchwright"
METRIC_LEAKED = "LeakedResources"  # emitted by the janitor: resources found past expires-at
METRIC_RUN_COST = "RunCostUSD"  # emitted by the Price stage: estimated cost of one run
