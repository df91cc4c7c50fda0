"""Names shared by the stack, the Lambda code and the docs: tags, metrics, paths.

The Lambda handlers (functions/, providers/aws/) read their wiring from environment variables whose
names the settings models own (benchwright.providers.aws.config); the stack writes them through those
models, never by hand, so one stack can be deployed several times (stages) side by side.
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

# Environment variables: their names come from the settings models the code reads
# (benchwright.providers.aws.config: AwsSettings, ApiSettings; benchwright.runner.entry for the runner).

METRICS_NAMESPACE = "Benchwright"
METRIC_LEAKED = "LeakedResources"  # emitted by the janitor: resources found past expires-at
METRIC_RUN_COST = "RunCostUSD"  # emitted by the Price stage: estimated cost of one run
