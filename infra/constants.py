"""Paths and runtime of the stack's own build. Names the stack shares with the code (tags, metrics,
the resource prefix) live in benchwright.providers.aws.names, environment names in the settings models.

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

# Environment variables: their names come from the settings models the code reads
# (benchwright.providers.aws.config: AwsSettings, ApiSettings; benchwright.runner.entry for the runner).
