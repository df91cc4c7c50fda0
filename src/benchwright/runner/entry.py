"""How every launcher starts the runner: one argv, here and nowhere else.

The local subprocess launcher, the ECS container override, the EC2 user-data and the image's
entrypoint all start ``RUNNER_ENTRYPOINT`` followed by ``runner_arguments(plan, out)``. ECS composes a
task's command as the image's ENTRYPOINT followed by the override's ``command`` (which replaces CMD),
so the override carries the arguments alone; tests/infra/test_runner_argv.py composes the Dockerfile
with what the launcher sends and parses the result with the runner's own argument parser.
This module imports nothing, so launchers can use it without loading the runner.
"""

from __future__ import annotations

from typing import Final

RUNNER_MODULE: Final = "benchwright.runner.main"
# The database secret reaches a runner only through its environment, never its arguments or plan:
PASSWORD_ENV: Final = "BENCHWRIGHT_DB_PASSWORD"  # the password itself (local runs)
SECRET_ARN_ENV: Final = "BENCHWRIGHT_DB_SECRET_ARN"  # a Secrets Manager secret the runner reads (AWS)
# A second place for the runner's output on another filesystem (the local launcher puts it next to the
# result store): a full --out then loses no measured phase (providers/local/runner.py reads the newer).
SPILL_ENV: Final = "BENCHWRIGHT_RUNNER_SPILL"
# Where the runner really is (AWS launchers set them; the result's host.availability_zone(_id)):
AZ_ENV: Final = "BENCHWRIGHT_AZ"
AZ_ID_ENV: Final = "BENCHWRIGHT_AZ_ID"
RUNNER_ENTRYPOINT: Final[tuple[str, ...]] = ("python3", "-m", RUNNER_MODULE)


def runner_arguments(plan: str, out: str) -> list[str]:
    """What follows the entrypoint: the plan and result locations (files or s3:// URIs)."""
    return ["--plan", plan, "--out", out]


def runner_argv(plan: str, out: str, python: str | None = None) -> list[str]:
    """The whole command; ``python`` replaces the interpreter (the local launcher passes its own)."""
    head = list(RUNNER_ENTRYPOINT)
    if python:
        head[0] = python
    return [*head, *runner_arguments(plan, out)]
