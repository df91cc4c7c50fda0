"""The workflow: one Lambda per ASL task state, the benchmark and suite state machines (inline ASL
from statemachines/ with definition substitutions), the nightly schedule and the janitor.

Placeholders in the ASL follow one convention: ``${<State>FunctionArn}`` is the Lambda of that state
and ``${BenchmarkStateMachineArn}`` (optional) the per-cell machine a suite may start instead of
running its cells inline. Handler paths come from
``functions.HANDLERS`` (kept by the AWS-run engineer) when it exists, else from the state's name.
"""

from __future__ import annotations

import importlib
import json
import re
from pathlib import Path
from typing import Any

import aws_cdk as cdk
from aws_cdk import aws_events as events
from aws_cdk import aws_events_targets as targets
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk import aws_scheduler as scheduler
from aws_cdk import aws_stepfunctions as sfn
from constructs import Construct

from benchwright.providers.aws import names
from benchwright.providers.aws.config import AwsSettings
from infra import constants as c
from infra.bundling import lambda_code
from infra.compute import RUNNER_CONTAINER, Compute
from infra.config import StageConfig
from infra.network import Network
from infra.permissions import grant_stage_permissions
from infra.storage import INFLUX_BUCKET, INFLUX_ORG, Storage

PLACEHOLDER = re.compile(r"\$\{([A-Za-z0-9]+)\}")
# States whose Lambda must sit in the VPC (they open connections to targets or to InfluxDB).
IN_VPC = {"CheckTarget", "CheckOperations", "Ingest", "StoreResults", "InfluxToken"}
JANITOR = "Janitor"
INFLUX_TOKEN = "InfluxToken"  # functions/influx_token.py: the custom resource behind the sink's token
ABORT = "AbortTeardown"  # functions/abort_teardown.py: teardown for executions that never reach theirs
# The states that finish a run read up to 10 whole earlier records from S3 (verdict, trend chart).
FINISHING = {"FinishRun", "SummarizeSuite"}
SCHEDULER_INPUT_LIMIT = 8000  # EventBridge Scheduler target input is at most 8192 characters


def placeholders(path: Path) -> list[str]:
    """The ``${Name}`` placeholders of an ASL file, in order of first use."""
    return list(dict.fromkeys(PLACEHOLDER.findall(path.read_text(encoding="utf-8"))))


def snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def handler_map() -> dict[str, str]:
    """State name -> Lambda handler ("functions.module.function"), from functions.HANDLERS if present."""
    try:
        module = importlib.import_module("functions")
    except ImportError:
        return {}
    raw: dict[str, str] = dict(getattr(module, "HANDLERS", {}) or {})
    if getattr(module, "JANITOR_HANDLER", None):
        raw[JANITOR] = module.JANITOR_HANDLER
    out = {}
    for state, target in raw.items():
        target = target.replace("/", ".").removesuffix(".py")
        if ":" in target:
            mod, func = target.split(":", 1)
            target = f"{mod.removesuffix('.py')}.{func}"
        if not target.startswith("functions."):
            target = f"functions.{target}"
        out[state] = target
    return out


def handler_for(state: str, handlers: dict[str, str]) -> str:
    return handlers.get(state) or f"functions.{snake(state)}.handler"


class Workflow(Construct):
    """Lambdas, both state machines, the nightly schedule and the janitor schedule."""

    def __init__(
        self,
        scope: Construct,
        cid: str,
        *,
        stage: StageConfig,
        network: Network,
        storage: Storage,
        compute: Compute,
    ) -> None:
        super().__init__(scope, cid)
        self.stage = stage
        self.network = network
        self.storage = storage
        self.compute = compute
        bundle = str(self.node.try_get_context("benchwright:bundle")).lower() not in {"false", "0"}
        self.code = lambda_code(bundle)
        self.handlers = handler_map()
        self.functions: dict[str, lambda_.Function] = {}

        benchmark_asl = c.STATEMACHINES / "benchmark.asl.json"
        suite_asl = c.STATEMACHINES / "suite.asl.json"
        for path in (benchmark_asl, suite_asl):
            for name in placeholders(path):
                if name.endswith("FunctionArn"):
                    self.function(name.removesuffix("FunctionArn"))
        self.function(JANITOR)

        self.benchmark = self.state_machine("Benchmark", benchmark_asl, {})
        self.suite = self.state_machine(
            "Suite", suite_asl, {"BenchmarkStateMachineArn": self.benchmark.state_machine_arn}
        )
        if "BenchmarkStateMachineArn" in placeholders(suite_asl):
            # the suite starts one benchmark execution per cell (startExecution.sync:2) instead of
            # running the cells inline: it needs to start, watch and stop them
            self.benchmark.grant_start_execution(self.suite)
            # startExecution.sync:2 watches the child through an EventBridge managed rule.
            self.suite.add_to_role_policy(
                iam.PolicyStatement(
                    actions=["states:DescribeExecution", "states:StopExecution"],
                    resources=[
                        cdk.Stack.of(self).format_arn(
                            service="states",
                            resource="execution",
                            resource_name=f"{self.benchmark.state_machine_name}:*",
                            arn_format=cdk.ArnFormat.COLON_RESOURCE_NAME,
                        )
                    ],
                )
            )
            self.suite.add_to_role_policy(
                iam.PolicyStatement(
                    actions=["events:PutTargets", "events:PutRule", "events:DescribeRule"],
                    resources=[
                        cdk.Stack.of(self).format_arn(
                            service="events",
                            resource="rule",
                            resource_name="StepFunctionsGetEventsForStepFunctionsExecutionRule",
                        )
                    ],
                )
            )
        if storage.influx is not None:
            self.influx_token_resource = self.influx_operator_token()
        self.nightly_group = self.nightly(suite_asl)
        self.janitor_asks_executions()
        self.janitor_schedule()
        self.abort_rule = self.teardown_on_abort()

    # ------------------------------------------------------------------ Lambdas
    def environment(self) -> dict[str, str]:
        """The variables benchwright.providers.aws.config.AwsSettings.from_env reads (BENCHWRIGHT_*)."""
        s, net, cp = self.storage, self.network, self.compute
        stack = cdk.Stack.of(self)
        env = AwsSettings.environment(
            region=stack.region,
            stage=self.stage.name,
            owner=self.stage.owner,
            ttl_hours=str(self.stage.max_run_hours + 4),
            max_run_hours=str(self.stage.max_run_hours),
            results_bucket=s.results.bucket_name,
            subnet_ids=",".join(net.subnet_ids_by_az().values()),
            security_group_ids=net.target_sg.security_group_id,
            runner_security_group=net.runner_sg.security_group_id,
            db_subnet_group=net.db_subnet_group,
            cache_subnet_group=net.cache_subnet_group,
            memorydb_subnet_group=net.memorydb_subnet_group,
            ecs_cluster=cp.cluster.cluster_name,
            runner_task_definition=cp.task_definition.task_definition_arn,
            runner_container=RUNNER_CONTAINER,
            runner_instance_profile=cp.instance_profile.instance_profile_name,
            node_instance_profile=cp.node_instance_profile.instance_profile_name,
            monitoring_role_arn=cp.monitoring_role.role_arn,
            launch_template=cp.launch_template.launch_template_id or "",
            runner_ami=cp.runner_ami,
            runner_image=cp.runner_image_uri,
            egress=self.stage.network.egress,
            sink={"liveanalytics": "timestream"}.get(s.sink, s.sink),
            slack_secret_arn=s.slack_secret.secret_arn,
            metrics_namespace=names.METRICS_NAMESPACE,
        )
        env["POWERTOOLS_SERVICE_NAME"] = "benchwright"
        env["POWERTOOLS_METRICS_NAMESPACE"] = names.METRICS_NAMESPACE
        if s.timestream_database:
            env |= AwsSettings.environment(
                timestream_database=s.timestream_database, timestream_table=s.timestream_table or "results"
            )
        if s.influx is not None:
            env |= AwsSettings.environment(
                influx_url=s.influx_url,
                influx_org=INFLUX_ORG,
                influx_bucket=INFLUX_BUCKET,
                influx_token_secret_arn=s.influx_token.secret_arn,
            )
        return env

    def function(self, state: str) -> lambda_.Function:
        if state in self.functions:
            return self.functions[state]
        log_group = logs.LogGroup(
            self,
            f"{state}Logs",
            retention=logs.RetentionDays.ONE_MONTH,
            removal_policy=cdk.RemovalPolicy.DESTROY,
        )
        in_vpc = state in IN_VPC
        fn = lambda_.Function(
            self,
            f"{state}Function",
            description=f"Benchwright {state} stage",
            runtime=lambda_.Runtime.PYTHON_3_12,
            architecture=lambda_.Architecture.X86_64,
            code=self.code,
            handler=handler_for(state, self.handlers),
            timeout=cdk.Duration.minutes(15 if state in {"Teardown", JANITOR} else 5),
            memory_size=1024 if state in FINISHING else 512,
            environment=self.environment(),
            log_group=log_group,
            tracing=lambda_.Tracing.ACTIVE,
            vpc=self.network.vpc if in_vpc else None,
            vpc_subnets=self.network.private_subnets if in_vpc else None,
            security_groups=[self.network.probe_sg] if in_vpc else None,
        )
        grant_stage_permissions(state, fn, self.stage, self.storage, self.compute)
        self.functions[state] = fn
        return fn

    # ------------------------------------------------------------------ state machines
    def state_machine(self, name: str, path: Path, extra: dict[str, str]) -> sfn.StateMachine:
        used = placeholders(path)
        subs = {k: v for k, v in extra.items() if k in used}
        for ph in used:
            if ph.endswith("FunctionArn"):
                subs[ph] = self.functions[ph.removesuffix("FunctionArn")].function_arn
        missing = [ph for ph in placeholders(path) if ph not in subs]
        if missing:
            raise ValueError(f"{path.name}: no value for placeholder(s) {', '.join(missing)}")
        log_group = logs.LogGroup(
            self,
            f"{name}ExecutionLogs",
            retention=logs.RetentionDays.THREE_MONTHS,
            removal_policy=cdk.RemovalPolicy.DESTROY,
        )
        machine = sfn.StateMachine(
            self,
            f"{name}StateMachine",
            definition_body=sfn.DefinitionBody.from_string(path.read_text(encoding="utf-8")),
            definition_substitutions=subs,
            tracing_enabled=True,
            logs=sfn.LogOptions(destination=log_group, level=sfn.LogLevel.ALL, include_execution_data=False),
            timeout=cdk.Duration.hours(
                self.stage.max_run_hours * (names.SUITE_TIMEOUT_RUNS if name == "Suite" else 1)
            ),
        )
        for ph in subs:
            if ph.endswith("FunctionArn"):
                self.functions[ph.removesuffix("FunctionArn")].grant_invoke(machine)
        return machine

    def influx_operator_token(self) -> cdk.CustomResource:
        """Sign in to the new InfluxDB instance once and keep an operator token in its secret
        (functions/influx_token.py); in the VPC next to the ingest Lambda, which may reach 8086."""
        s = self.storage
        assert s.influx is not None
        fn = self.function(INFLUX_TOKEN)
        s.influx_admin.grant_read(fn)
        s.influx_token.grant_write(fn)
        resource = cdk.CustomResource(
            self,
            "InfluxOperatorToken",
            service_token=fn.function_arn,
            resource_type="Custom::InfluxToken",
            properties={
                "Url": s.influx_url,
                "AdminSecretArn": s.influx_admin.secret_arn,
                "TokenSecretArn": s.influx_token.secret_arn,
            },
        )
        resource.node.add_dependency(s.influx)
        return resource

    def teardown_on_abort(self) -> events.Rule:
        """A console/API stop or the machine's timeout ends an execution without its Catch ->
        Teardown: this rule hands such an execution (ABORTED, TIMED_OUT) of either machine to
        AbortTeardown, which tears the run down from the execution's history and its tags."""
        fn = self.function(ABORT)
        for machine in (self.benchmark, self.suite):
            fn.add_to_role_policy(
                iam.PolicyStatement(
                    actions=["states:GetExecutionHistory"],
                    resources=[
                        cdk.Stack.of(self).format_arn(
                            service="states",
                            resource="execution",
                            resource_name=f"{machine.state_machine_name}:*",
                            arn_format=cdk.ArnFormat.COLON_RESOURCE_NAME,
                        )
                    ],
                )
            )
        rule = events.Rule(
            self,
            "AbortedExecutions",
            description="Benchwright: tear down runs whose execution was aborted or timed out",
            event_pattern=events.EventPattern(
                source=["aws.states"],
                detail_type=["Step Functions Execution Status Change"],
                detail={
                    "status": ["ABORTED", "TIMED_OUT"],
                    "stateMachineArn": [self.benchmark.state_machine_arn, self.suite.state_machine_arn],
                },
            ),
        )
        rule.add_target(targets.LambdaFunction(fn, retry_attempts=4, max_event_age=cdk.Duration.hours(2)))
        return rule

    # ------------------------------------------------------------------ schedules
    def nightly_specs(self) -> list[dict[str, Any]]:
        """The nightly benchmarks: every benchmark of the configured spec files, validated now (a bad
        spec fails synth naming its file and field), as the suite workflow takes them."""
        from benchwright.errors import SpecError
        from benchwright.spec import load_suite

        benchmarks: list[dict[str, Any]] = []
        for rel in self.stage.schedule.suite:
            path = c.REPO_ROOT / rel
            if not path.is_file():
                raise SpecError("stage.schedule.suite", f"{rel}: no such spec file")
            suite = load_suite(path)
            for bench in suite.benchmarks:
                if bench.target.provider == "local" or bench.runner.platform == "local":
                    raise SpecError(
                        f"{rel}: {bench.name}", "a nightly benchmark needs a cloud target and runner"
                    )
                spec = bench.model_dump(mode="json", exclude_defaults=True)
                if len(suite.benchmarks) > 1:  # as local runs and the API; the size: the digest's cue
                    tags = {"suite": suite.suite, "suite_size": str(len(suite.benchmarks))}
                    spec["tags"] = {**tags, **bench.tags}
                benchmarks.append(spec)
        names = [b["name"] for b in benchmarks]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise SpecError("stage.schedule.suite", f"benchmark names must be unique: {', '.join(dupes)}")
        return benchmarks

    def nightly(self, suite_asl: Path) -> str:
        """One EventBridge Scheduler schedule per nightly benchmark (same cron and time zone, one
        schedule group), each starting the suite workflow with that spec inline in its input: the
        suite workflow expands one spec's matrix, and Scheduler's input limit is 8 KiB."""
        from benchwright.errors import SpecError

        role = iam.Role(
            self,
            "SchedulerRole",
            assumed_by=iam.ServicePrincipal("scheduler.amazonaws.com"),
            description="EventBridge Scheduler: start the nightly suite",
        )
        self.suite.grant_start_execution(role)
        group = scheduler.CfnScheduleGroup(
            self, "NightlyGroup", name=f"benchwright-{self.stage.name}-nightly"
        )
        for index, spec in enumerate(self.nightly_specs()):
            payload = {"spec": spec, "trigger": "schedule"}
            if len(json.dumps(payload, separators=(",", ":"))) > SCHEDULER_INPUT_LIMIT:
                raise SpecError(
                    f"stage.schedule.suite: {spec['name']}", "the spec is over 8000 characters as JSON"
                )
            scheduler.CfnSchedule(
                self,
                f"Nightly{index}",
                name=f"{spec['name'][:60]}",
                group_name=group.ref,  # Ref = the group's name; implies the dependency
                description=f"Benchwright nightly: {spec['name']}",
                schedule_expression=self.stage.schedule.cron,
                schedule_expression_timezone=self.stage.schedule.timezone,
                state="ENABLED" if self.stage.schedule.enabled else "DISABLED",
                flexible_time_window=scheduler.CfnSchedule.FlexibleTimeWindowProperty(mode="OFF"),
                target=scheduler.CfnSchedule.TargetProperty(
                    arn=self.suite.state_machine_arn,
                    role_arn=role.role_arn,
                    input=json.dumps(payload, separators=(",", ":")),
                    retry_policy=scheduler.CfnSchedule.RetryPolicyProperty(maximum_retry_attempts=2),
                ),
            )
        return group.name or ""

    def janitor_asks_executions(self) -> None:
        """Before deleting an expired resource the janitor asks whether its run's execution still
        runs (providers/aws/executions.py): both state machines' ARNs and a read of their executions."""
        janitor = self.functions[JANITOR]
        for machine, field in (
            (self.benchmark, "benchmark_state_machine"),
            (self.suite, "suite_state_machine"),
        ):
            for name, value in AwsSettings.environment(**{field: machine.state_machine_arn}).items():
                janitor.add_environment(name, value)
            janitor.add_to_role_policy(
                iam.PolicyStatement(
                    actions=["states:DescribeExecution"],
                    resources=[
                        cdk.Stack.of(self).format_arn(
                            service="states",
                            resource="execution",
                            resource_name=f"{machine.state_machine_name}:*",
                            arn_format=cdk.ArnFormat.COLON_RESOURCE_NAME,
                        )
                    ],
                )
            )

    def janitor_schedule(self) -> None:
        """The backstop: every N minutes the janitor deletes tagged resources past expires-at."""
        janitor = self.functions[JANITOR]
        role = iam.Role(
            self,
            "JanitorSchedulerRole",
            assumed_by=iam.ServicePrincipal("scheduler.amazonaws.com"),
            description="EventBridge Scheduler: invoke the janitor",
        )
        janitor.grant_invoke(role)
        scheduler.CfnSchedule(
            self,
            "JanitorSchedule",
            description="Benchwright janitor: sweep expired run resources by tag",
            schedule_expression=f"rate({self.stage.janitor_rate_minutes} minutes)",
            flexible_time_window=scheduler.CfnSchedule.FlexibleTimeWindowProperty(mode="OFF"),
            target=scheduler.CfnSchedule.TargetProperty(
                arn=janitor.function_arn,
                role_arn=role.role_arn,
                input=json.dumps({"trigger": "schedule"}),
            ),
        )
