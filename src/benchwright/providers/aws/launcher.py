"""Runner launch on ECS Fargate (RunTask) or a plain EC2 instance, in the subnet of the chosen AZ.

The plan goes to S3 and the task gets only pointers and the secret's ARN (never a password: ECS
overrides are visible to anyone who can describe the task). The runner writes its result documents
to the result pointer; the workflow keeps only pointers in its state.
"""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime
from typing import Any

from benchwright.errors import ProvisioningFailed, RetryableProvisioningError, RunnerFailed, SpecError
from benchwright.providers.aws import placement as placement_mod
from benchwright.providers.aws.common import Clients, aws_call, lifecycle_tags, tag_list
from benchwright.providers.aws.config import AwsSettings
from benchwright.providers.aws.deletion import named, stop_task, terminate_instances
from benchwright.providers.aws.names import LAUNCH_TOKEN_TAG
from benchwright.providers.aws.run_session import RUN_ID_ENV, RUN_ROLE_ENV, run_tags
from benchwright.providers.aws.s3 import S3Artifacts
from benchwright.providers.aws.userdata import runner_user_data
from benchwright.providers.base import (
    Credentials,
    RunnerHandle,
    RunnerLauncher,
    RunnerStatus,
    Target,
)
from benchwright.results import ResultDocument
from benchwright.runner.entry import AZ_ENV, AZ_ID_ENV, SECRET_ARN_ENV, runner_arguments
from benchwright.runner.plan import RunnerPlan
from benchwright.runner_output import RunnerOutput
from benchwright.spec.runners import RunnerSpec

CAPACITY_REASONS = ("RESOURCE", "Capacity", "capacity", "throttl", "AGENT")
STARTING = {"PROVISIONING", "PENDING", "ACTIVATING"}


def launch_token(plan: RunnerPlan) -> str:
    """The idempotency token of one runner launch: the same for every attempt of the same runner of
    the same cell (run id, cell, repeat, runner index), different for anything else. 63 characters of
    [a-z0-9-]: valid as ECS RunTask ``clientToken`` / ``startedBy`` and EC2 ``ClientToken``."""
    key = "\x1f".join((plan.run_id, plan.cell_id, str(plan.repeat), str(plan.runner_index)))
    return "bw-" + hashlib.sha256(key.encode()).hexdigest()[:60]


class AwsRunnerLauncher(RunnerLauncher):
    """``runner``: the spec's validated runner section (platform, placement, size). Its sizes and
    placements are the spec's own, defaults included (``RunnerSize.fargate``): what is
    launched is what the spec says and what the price book prices."""

    def __init__(self, clients: Clients, config: AwsSettings, runner: RunnerSpec) -> None:
        self.clients = clients
        self.config = config
        self.runner = runner
        self.artifacts = S3Artifacts(clients, config.results_bucket)

    @property
    def kind(self) -> str:
        kind = self.runner.platform
        if kind == "local":
            raise SpecError("runner.platform", "AWS runners are fargate or ec2, got 'local'")
        return kind

    def _prefix(self, plan: RunnerPlan) -> str:
        from benchwright.specguard import path_component

        cell = path_component(plan.cell_id)
        return f"runs/{path_component(plan.run_id)}/{cell}/repeat-{plan.repeat}/runner-{plan.runner_index}"

    def launch(self, plan: RunnerPlan, credentials: Credentials, target: Target) -> RunnerHandle:
        if credentials.password:
            raise SpecError(
                "target.password", "AWS runners read passwords only from Secrets Manager (a secret ARN)"
            )
        target_az = target.handle.get("availability_zone") or target.describe().get("availability_zone")
        where = placement_mod.choose(
            self.clients("ec2"),
            self.config.subnet_ids,
            self.runner.placement,
            target_az,
            plan.runner_index,
        )
        prefix = self._prefix(plan)
        result_uri = self.artifacts.uri(f"{prefix}/result.json")
        # A retried LaunchRunner (Lambda timeout, throttling after the call went through) finds the
        # runner an earlier attempt started and keeps it, plan untouched: one runner per launch token.
        token = launch_token(plan)
        existing = self._task_by_token(token) if self.kind == "fargate" else self._instance_by_token(token)
        if existing is not None:
            plan_uri = self.artifacts.uri(f"{prefix}/plan.json")
            resource_id = existing
        else:
            plan_uri = self.artifacts.put_json(f"{prefix}/plan.json", plan.model_dump(mode="json"))
            env = {SECRET_ARN_ENV: credentials.secret_arn} if credentials.secret_arn else {}
            # where the runner really is: the result's host.availability_zone(_id) (engine/document.host_facts)
            env |= {AZ_ENV: where.availability_zone, AZ_ID_ENV: where.availability_zone_id}
            env |= self._run_scope(plan, credentials)
            tags = lifecycle_tags(self.config, plan.run_id)
            if self.kind == "fargate":
                resource_id = self._run_task(plan, plan_uri, result_uri, env, tags, where)
            else:
                resource_id = self._run_instance(plan, plan_uri, result_uri, env, tags, where)
        return RunnerHandle(
            id=resource_id,
            runner_index=plan.runner_index,
            result_pointer=result_uri,
            log_pointer=None,
            launched_at=datetime.now(UTC),
            details={
                "kind": self.kind,
                "subnet": where.subnet_id,
                "availability_zone": where.availability_zone,
                "availability_zone_id": where.availability_zone_id,
                "plan": plan_uri,
            },
        )

    def _run_scope(self, plan: RunnerPlan, credentials: Credentials) -> dict[str, str]:
        """With a run-scoped runner role: the database secret is tagged with this run (a suite's
        cells measure one shared target one after another, so the cell measuring it now owns it),
        and the runner learns the role and its run, to act only as that run (run_session.py)."""
        role = self.config.runner_run_role_arn
        if not role:
            return {}
        if credentials.secret_arn:
            aws_call(
                "secretsmanager tag_resource (run tag)",
                self.clients("secretsmanager").tag_resource,
                SecretId=credentials.secret_arn,
                Tags=run_tags(plan.run_id),
            )
        return {RUN_ROLE_ENV: role, RUN_ID_ENV: plan.run_id}

    def _run_task(
        self,
        plan: RunnerPlan,
        plan_uri: str,
        result_uri: str,
        env: dict[str, str],
        tags: dict[str, str],
        where: placement_mod.Placement,
    ) -> str:
        token = launch_token(plan)
        override: dict[str, Any] = {
            "name": self.config.runner_container,
            # ECS runs the image's ENTRYPOINT (runner.entry.RUNNER_ENTRYPOINT) + this, which replaces CMD
            "command": runner_arguments(plan_uri, result_uri),
            "environment": [{"name": k, "value": v} for k, v in env.items()],
        }
        size = self.runner.size.fargate
        # The task's size is always the spec's (the task definition's is only a starting point), and
        # the container's own hard limit follows it: the definition's would cap a larger runner.
        override["memory"] = size.memory_mb
        overrides: dict[str, Any] = {
            "containerOverrides": [override],
            "cpu": str(size.cpu_units),
            "memory": str(size.memory_mb),
        }
        response = aws_call(
            "ecs run_task",
            self.clients("ecs").run_task,
            cluster=self.config.ecs_cluster,
            taskDefinition=self.config.runner_task_definition,
            launchType="FARGATE",
            count=1,
            networkConfiguration={
                "awsvpcConfiguration": {
                    "subnets": [where.subnet_id],
                    "securityGroups": self.config.runner_security_groups(),
                    "assignPublicIp": "DISABLED",
                }
            },
            overrides=overrides,
            tags=[{"key": k, "value": v} for k, v in tags.items()],
            startedBy=token,
            clientToken=token,
        )
        failures = response.get("failures") or []
        if failures or not response.get("tasks"):
            reason = (
                "; ".join(f"{f.get('reason')} {f.get('detail', '')}".strip() for f in failures) or "no task"
            )
            if any(word in reason for word in CAPACITY_REASONS):
                raise RetryableProvisioningError(f"ecs run_task: {reason}")
            raise RunnerFailed(f"ecs run_task did not start the runner: {reason}")
        arn: str = response["tasks"][0]["taskArn"]
        return arn

    def _task_by_token(self, token: str) -> str | None:
        """The task an earlier attempt of this launch started (running or already stopped), if any."""
        ecs = self.clients("ecs")
        for desired in ("RUNNING", "STOPPED"):
            arns = aws_call(
                "ecs list_tasks",
                ecs.list_tasks,
                cluster=self.config.ecs_cluster,
                startedBy=token,
                desiredStatus=desired,
            ).get("taskArns", [])
            if arns:
                return str(arns[0])
        return None

    def _instance_by_token(self, token: str) -> str | None:
        """The instance an earlier attempt of this launch started, if any (found by its tag)."""
        response = aws_call(
            "ec2 describe_instances (runner)",
            self.clients("ec2").describe_instances,
            Filters=[{"Name": f"tag:{LAUNCH_TOKEN_TAG}", "Values": [token]}],
        )
        for reservation in response.get("Reservations", []):
            for instance in reservation.get("Instances", []):
                return str(instance["InstanceId"])
        return None

    def _run_instance(
        self,
        plan: RunnerPlan,
        plan_uri: str,
        result_uri: str,
        env: dict[str, str],
        tags: dict[str, str],
        where: placement_mod.Placement,
    ) -> str:
        if not self.config.runner_ami:
            raise ProvisioningFailed("ec2 runner: no AMI configured (BENCHWRIGHT_RUNNER_AMI)")
        if not self.config.runner_image:
            raise ProvisioningFailed("ec2 runner: no runner image configured (BENCHWRIGHT_RUNNER_IMAGE)")
        token = launch_token(plan)
        tags = {**tags, LAUNCH_TOKEN_TAG: token}
        user_data = runner_user_data(
            self.config.runner_image or "", runner_arguments(plan_uri, result_uri), env, self.config.region
        )
        args: dict[str, Any] = {
            "ImageId": self.config.runner_ami,
            "InstanceType": self.runner.ec2_instance_type,
            "MinCount": 1,
            "MaxCount": 1,
            "SubnetId": where.subnet_id,
            "UserData": user_data,
            "InstanceInitiatedShutdownBehavior": "terminate",
            "TagSpecifications": [
                {"ResourceType": "instance", "Tags": tag_list(tags)},
                {"ResourceType": "volume", "Tags": tag_list(tags)},
            ],
            "MetadataOptions": {"HttpTokens": "required"},
            "Monitoring": {"Enabled": True},  # 1-minute EC2 metrics: the run window is minutes long
            "ClientToken": token,
        }
        if self.config.runner_security_groups():
            args["SecurityGroupIds"] = self.config.runner_security_groups()
        profile = self.config.runner_instance_profile
        if profile:
            args["IamInstanceProfile"] = {"Arn": profile} if profile.startswith("arn:") else {"Name": profile}
        if self.config.launch_template:
            args["LaunchTemplate"] = {"LaunchTemplateId": self.config.launch_template}
        reservation = aws_call("ec2 run_instances (runner)", self.clients("ec2").run_instances, **args)
        instance_id: str = reservation["Instances"][0]["InstanceId"]
        return instance_id

    # status ---------------------------------------------------------------------------------
    def status(self, handle: RunnerHandle) -> RunnerStatus:
        if handle.details.get("kind", "fargate") == "ec2":
            return self._instance_status(handle)
        task = self._describe_task(handle)
        if task is None:
            return "failed"
        last = task.get("lastStatus", "")
        if last in STARTING:
            return "starting"
        if last != "STOPPED":
            return "running"
        codes = [c.get("exitCode") for c in task.get("containers", [])]
        exited_0 = bool(codes) and all(code == 0 for code in codes)
        return "succeeded" if exited_0 and self._completed(handle) else "failed"

    def _completed(self, handle: RunnerHandle) -> bool:
        """The runner's completion marker (``RunnerOutput.exit_code``, written last) says it ended 0.
        That the output exists proves nothing: the runner writes it before its first phase."""
        output = self.output(handle)
        return output is not None and output.completed

    def _describe_task(self, handle: RunnerHandle) -> dict[str, Any] | None:
        response = aws_call(
            "ecs describe_tasks",
            self.clients("ecs").describe_tasks,
            cluster=self.config.ecs_cluster,
            tasks=[handle.id],
        )
        tasks = response.get("tasks") or []
        return tasks[0] if tasks else None

    def _instance_status(self, handle: RunnerHandle) -> RunnerStatus:
        response = aws_call(
            "ec2 describe_instances", self.clients("ec2").describe_instances, InstanceIds=[handle.id]
        )
        states = [i["State"]["Name"] for r in response["Reservations"] for i in r["Instances"]]
        if not states:
            return "failed"
        if states[0] == "pending":
            return "starting"
        if states[0] == "running":
            return "running"
        # an instance has no container exit code to read: the runner's own marker is its exit code
        return "succeeded" if self._completed(handle) else "failed"

    def failure(self, handle: RunnerHandle) -> str | None:
        output = self.output(handle)
        said = f": {output.error}" if output is not None and output.error else ""
        if handle.details.get("kind", "fargate") == "ec2":
            if output is None:
                return "runner instance ended without a result"
            if output.exit_code is None:
                return (
                    f"runner instance {handle.id} ended before its runner finished (no completion "
                    f"marker: the runner was killed or its instance stopped){said}"
                )
            return (
                f"runner instance {handle.id}: the runner exited with {output.exit_code}{said}"
                if not output.completed
                else None
            )
        task = self._describe_task(handle)
        if task is None:
            return f"runner task {handle.id} not found"
        codes = [c.get("exitCode") for c in task.get("containers", [])]
        stopped = f"{task.get('stopCode', '')} {task.get('stoppedReason', '')} exit codes {codes}".strip()
        if output is None or output.exit_code is None:
            said += " (the runner wrote no completion marker: it did not finish)"
        return stopped + said

    def output(self, handle: RunnerHandle) -> RunnerOutput | None:
        """What the runner wrote (None before its first write)."""
        if not self.artifacts.exists(handle.result_pointer):
            return None
        try:
            return RunnerOutput.parse(self.artifacts.get_json(handle.result_pointer))
        except ValueError as exc:
            raise RunnerFailed(f"runner output {handle.result_pointer} is unreadable: {exc}") from None

    def results(self, handle: RunnerHandle) -> list[ResultDocument]:
        output = self.output(handle)
        return output.kept_documents() if output is not None else []

    def stop(self, handle: RunnerHandle) -> None:
        if handle.details.get("kind", "fargate") == "ec2":
            named("ec2 terminate (runner)", terminate_instances, self.clients("ec2"), [handle.id])
            return
        named(
            "ecs stop_task",
            stop_task,
            self.clients("ecs"),
            self.config.ecs_cluster,
            handle.id,
            "benchwright teardown",
        )
