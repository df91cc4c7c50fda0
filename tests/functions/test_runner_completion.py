"""A runner's completion comes from its exit code and the marker it writes last, on EC2 as on Fargate.

The review killed an EC2 runner mid-run and the workflow recorded it ``succeeded`` with only its load
phase: the check asked whether the output object existed, and the runner writes it before its first
phase. Here an EC2 runner is launched in moto, its output is written by the runner's own writer
(``runner.main.write_output``) as a runner killed after its load phase leaves it, and the instance
ends: the launcher must say ``failed`` and why, and ``succeeded`` only once the marker says exit 0.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from benchwright.providers.aws.launcher import AwsRunnerLauncher
from benchwright.providers.base import Credentials
from benchwright.report.sample import make_document
from benchwright.runner.main import EXIT_ABORTED, write_output
from benchwright.spec import RunnerSpec
from tests.functions.test_launch_idempotency import aws, plan, target

__all__ = ["aws"]  # the module's moto world, shared with the launch tests' fixture


def ended(aws: Any, instance_id: str) -> None:
    aws[1]("ec2").terminate_instances(InstanceIds=[instance_id])


@pytest.mark.parametrize(
    ("marker", "status", "said"),
    [
        (None, "failed", "ended before its runner finished (no completion marker"),
        (EXIT_ABORTED, "failed", f"the runner exited with {EXIT_ABORTED}"),
        (0, "succeeded", None),
    ],
    ids=["killed-after-load", "aborted", "completed"],
)
def test_an_ec2_runner_succeeds_only_with_its_completion_marker(
    aws: Any, marker: int | None, status: str, said: str | None
) -> None:
    run_id = f"done-ec2-{marker}"
    launcher = AwsRunnerLauncher(
        aws[1],
        aws[0],
        RunnerSpec.model_validate({"platform": "ec2", "size": {"instance_type": "c6i.xlarge"}}),
    )
    the_plan = plan(run_id)
    handle = launcher.launch(the_plan, Credentials(), target(aws, run_id))
    assert launcher.status(handle) in ("starting", "running")
    load = make_document([1000.0] * 5, phase="load")
    write_output(handle.result_pointer, the_plan, [load], None, {"load": datetime.now(UTC)})
    if marker is not None:  # the runner's last write: the same documents, and how it ended
        write_output(handle.result_pointer, the_plan, [load], None, {"load": datetime.now(UTC)}, marker)
    ended(aws, handle.id)
    assert launcher.status(handle) == status
    failure = launcher.failure(handle)
    if said is None:
        assert failure is None
    else:
        assert failure is not None and said in failure, failure
    assert [d.phase for d in launcher.results(handle)] == ["load"]  # what it measured is kept either way
