"""Every launcher starts the runner with one argv (``benchwright.runner.entry``), and the image agrees.

ECS runs a task as the image's ENTRYPOINT followed by the container override's ``command`` (which
replaces CMD). These tests read ENTRYPOINT and CMD from runner-image/Dockerfile (tests/runner_image.py),
follow ENTRYPOINT to the script it names (its ``exec`` line), append what the launcher really sent
(read back from moto's RunTask / RunInstances), and parse the result with the runner's own parser.
"""

from __future__ import annotations

import base64
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from benchwright.runner.entry import RUNNER_ENTRYPOINT, RUNNER_MODULE, runner_arguments
from benchwright.runner.main import build_parser
from benchwright.runner.plan import PhaseConfig, RunnerPlan
from benchwright.spec import RunnerSpec
from tests.aws_world import ENV, REGION, runner_infrastructure
from tests.runner_image import container_argv, copied_from, docker_run, exec_line, instruction

IMAGE = "123456789012.dkr.ecr.us-east-1.amazonaws.com/benchwright-runner:test"


def parse_runner(argv: list[str]) -> Any:
    """Parse argv as the runner would: it must be RUNNER_ENTRYPOINT, then the runner's arguments."""
    assert argv[1:3] == ["-m", RUNNER_MODULE], argv
    return build_parser().parse_args(argv[3:])


# ---------------------------------------------------------------- what the launchers send
@pytest.fixture
def moto_launcher(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    from moto import mock_aws

    from benchwright.providers.aws.common import Clients
    from benchwright.providers.aws.config import AwsSettings
    from benchwright.providers.aws.launcher import AwsRunnerLauncher

    for key, value in ENV.items():
        monkeypatch.setenv(key, value)
    with mock_aws():
        subnets, sg = runner_infrastructure("10.61", bucket="bw-argv", cluster="bw-argv")
        settings = AwsSettings(
            region=REGION,
            results_bucket="bw-argv",
            owner="tests",
            subnet_ids=subnets,
            security_group_ids=[sg],
            ecs_cluster="bw-argv",
            runner_task_definition="bw-runner",
            runner_container="runner",
            runner_ami="ami-12c6146b",
            runner_image=IMAGE,
        )
        clients = Clients(settings)

        def make(platform: str) -> AwsRunnerLauncher:
            size = {"instance_type": "c6i.xlarge"} if platform == "ec2" else {}
            return AwsRunnerLauncher(
                clients, settings, RunnerSpec.model_validate({"platform": platform, "size": size})
            )

        yield make


class _Target:
    handle = {"availability_zone": f"{REGION}a"}

    def describe(self) -> dict[str, Any]:
        return {}


def tiny_plan() -> RunnerPlan:
    return RunnerPlan(
        run_id="argv-1",
        cell_id="c0",
        phases=[PhaseConfig(workload="ycsb", phase="run", engine="null", operation_count=10, measured=True)],
    )


def test_the_ecs_override_composed_with_the_image_is_a_valid_runner_command(moto_launcher: Any) -> None:
    from benchwright.providers.base import Credentials

    launcher = moto_launcher("fargate")
    handle = launcher.launch(tiny_plan(), Credentials(secret_arn="arn:aws:secretsmanager:x"), _Target())
    task = launcher.clients("ecs").describe_tasks(cluster="bw-argv", tasks=[handle.id])["tasks"][0]
    (override,) = task["overrides"]["containerOverrides"]

    args = parse_runner(container_argv(override["command"]))

    assert args.plan == handle.details["plan"] and args.plan.startswith("s3://bw-argv/")
    assert args.out == handle.result_pointer
    assert {"name": "BENCHWRIGHT_DB_SECRET_ARN", "value": "arn:aws:secretsmanager:x"} in override[
        "environment"
    ]


def test_the_image_without_an_override_prints_the_runner_help() -> None:
    argv = container_argv(None)
    with pytest.raises(SystemExit) as info:
        parse_runner(argv)
    assert info.value.code == 0  # CMD ["--help"]: help, not an error


def test_the_composition_catches_an_override_that_repeats_the_command() -> None:
    """The fault this test exists for: an override of ``runner --plan ...`` on an entrypoint that
    already runs the runner is ``unrecognized arguments: runner``."""
    with pytest.raises(SystemExit) as info:
        parse_runner(container_argv(["runner", *runner_arguments("s3://b/p", "s3://b/o")]))
    assert info.value.code == 2


def test_the_ec2_user_data_runs_the_image_with_the_same_arguments(moto_launcher: Any) -> None:
    from benchwright.providers.base import Credentials

    launcher = moto_launcher("ec2")
    handle = launcher.launch(tiny_plan(), Credentials(secret_arn="arn:aws:secretsmanager:y"), _Target())
    attribute = launcher.clients("ec2").describe_instance_attribute(
        InstanceId=handle.id, Attribute="userData"
    )
    script = base64.b64decode(attribute["UserData"]["Value"]).decode()
    env, args = docker_run(script, IMAGE)

    parsed = parse_runner(container_argv(args))
    assert (parsed.plan, parsed.out) == (handle.details["plan"], handle.result_pointer)
    assert env["BENCHWRIGHT_DB_SECRET_ARN"] == "arn:aws:secretsmanager:y"


def test_the_local_launcher_runs_the_same_command_with_its_interpreter(tmp_path: Path) -> None:
    from benchwright.providers.local.runner import runner_command

    argv = runner_command(tmp_path / "plan.json", tmp_path / "out.json")

    assert argv[0] == sys.executable and tuple(argv[1:3]) == RUNNER_ENTRYPOINT[1:]
    args = parse_runner(argv)
    assert (args.plan, args.out) == (str(tmp_path / "plan.json"), str(tmp_path / "out.json"))


def test_the_entrypoint_script_execs_the_one_entrypoint() -> None:
    inner = exec_line(copied_from(instruction("ENTRYPOINT")[0]))
    assert tuple(inner[:-1]) == RUNNER_ENTRYPOINT and inner[-1] == "$@"
