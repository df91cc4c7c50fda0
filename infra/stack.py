"""The Benchwright stack: composes network, storage, compute, workflow, API and monitoring."""

from __future__ import annotations

import aws_cdk as cdk
from aws_cdk import aws_iam as iam
from constructs import Construct

from benchwright.providers.aws import names
from benchwright.providers.aws.config import AwsSettings
from infra.api import Api
from infra.compute import Compute
from infra.config import StageConfig
from infra.isolation import RunIsolation
from infra.monitoring import Monitoring
from infra.network import Network
from infra.storage import Storage
from infra.workflow import Workflow

# the stages that read and write their run's objects (runs/<run id>/) as a session of ResultsRunRole
RUN_OBJECT_WRITERS = (
    "LaunchRunner", "CheckRunner", "CollectMetrics", "JudgeResults", "StoreResults", "PriceRun",
    "FinishRun", "SummarizeSuite", "AbortTeardown",
)  # fmt: skip


class BenchwrightStack(cdk.Stack):
    """One deployment (stage) of the service."""

    def __init__(
        self, scope: Construct, cid: str, *, stage: StageConfig, build_image: bool, **kw: object
    ) -> None:
        super().__init__(scope, cid, **kw)  # type: ignore[arg-type]
        for key, value in {
            names.MANAGED_TAG: "true",
            names.STAGE_TAG: stage.name,
            names.OWNER_TAG: stage.owner,
        }.items():
            cdk.Tags.of(self).add(key, value)
        self.network = Network(self, "Network", stage=stage)
        self.storage = Storage(self, "Storage", stage=stage, network=self.network)
        self.compute = Compute(
            self,
            "Compute",
            stage=stage,
            network=self.network,
            results=self.storage.results,
            build_image=build_image,
        )
        self.workflow = Workflow(
            self, "Workflow", stage=stage, network=self.network, storage=self.storage, compute=self.compute
        )
        self.api = Api(self, "Api", stage=stage, storage=self.storage, workflow=self.workflow)

        # run-scoped roles (issue 30 item 5): a session tagged with one run reaches that run's resources only
        def roles(*states: str) -> list[iam.IRole]:
            found = [self.workflow.functions[name].role for name in states]
            return [role for role in found if role is not None]

        self.isolation = RunIsolation(
            self,
            "Isolation",
            results=self.storage.results,
            runners=[self.compute.task_role, self.compute.instance_role],
            teardowns=roles("Teardown", "AbortTeardown"),
            operations=roles("CheckOperations"),
            writers=roles(*RUN_OBJECT_WRITERS),
        )
        # who acts through a run session learns the role's ARN (providers/aws/run_session.py)
        for state, field, role in (
            ("LaunchRunner", "runner_run_role_arn", self.isolation.runner_role),
            ("Teardown", "teardown_run_role_arn", self.isolation.teardown_role),
            ("AbortTeardown", "teardown_run_role_arn", self.isolation.teardown_role),
            ("CheckOperations", "operations_run_role_arn", self.isolation.operations_role),
            *((state, "results_run_role_arn", self.isolation.results_role) for state in RUN_OBJECT_WRITERS),
        ):
            if state in self.workflow.functions:
                for name, value in AwsSettings.environment(**{field: role.role_arn}).items():
                    self.workflow.functions[state].add_environment(name, value)
        self.monitoring = Monitoring(self, "Monitoring", stage=stage, workflow=self.workflow)

        outputs = {
            "ApiUrl": self.api.rest_api.url,
            "BenchmarkStateMachineArn": self.workflow.benchmark.state_machine_arn,
            "SuiteStateMachineArn": self.workflow.suite.state_machine_arn,
            "ResultsBucket": self.storage.results.bucket_name,
            "SlackSecretArn": self.storage.slack_secret.secret_arn,
            "AlarmTopicArn": self.monitoring.topic.topic_arn,
            "InvokePolicyArn": self.api.invoke_policy.managed_policy_arn,
            "Sink": stage.sink.kind,
        }
        for key, value in outputs.items():
            cdk.CfnOutput(self, key, value=value)
