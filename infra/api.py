"""The REST API in front of the workflow: IAM (SigV4) authorization on every method, request
validation, throttling, access logs. One Lambda (functions/api.py) serves all routes through the
powertools resolver in benchwright.api, which also generates docs/openapi.json."""

from __future__ import annotations

import aws_cdk as cdk
from aws_cdk import aws_apigateway as apigw
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from constructs import Construct

from benchwright.api.quota import PREFIX as QUOTA_PREFIX
from benchwright.providers.aws.config import ApiSettings
from infra.bucket_access import api_statements
from infra.config import StageConfig
from infra.storage import Storage
from infra.workflow import Workflow

ROUTES = [
    ("runs", "GET"),
    ("runs", "POST"),
    ("runs/{run_id}", "GET"),
    ("runs/{run_id}/report", "GET"),
    ("runs/{run_id}/record", "GET"),
    ("runs/{run_id}/cancel", "POST"),
]


class Api(Construct):
    """REST API Gateway (IAM auth) -> API Lambda -> Step Functions / S3."""

    def __init__(
        self, scope: Construct, cid: str, *, stage: StageConfig, storage: Storage, workflow: Workflow
    ) -> None:
        super().__init__(scope, cid)
        log_group = logs.LogGroup(
            self,
            "ApiFunctionLogs",
            retention=logs.RetentionDays.ONE_MONTH,
            removal_policy=cdk.RemovalPolicy.DESTROY,
        )
        teardown = workflow.functions["Teardown"]
        janitor = workflow.functions["Janitor"]
        self.function = lambda_.Function(
            self,
            "ApiFunction",
            description="Benchwright REST API",
            runtime=lambda_.Runtime.PYTHON_3_12,
            code=workflow.code,
            handler="functions.api.handler",
            timeout=cdk.Duration.seconds(29),
            memory_size=512,
            log_group=log_group,
            tracing=lambda_.Tracing.ACTIVE,
            environment={
                **ApiSettings.environment(
                    results_bucket=storage.results.bucket_name,
                    benchmark_state_machine=workflow.benchmark.state_machine_arn,
                    suite_state_machine=workflow.suite.state_machine_arn,
                    teardown_function=teardown.function_name,
                    janitor_function=janitor.function_name,
                    api_admins=",".join(stage.api_admins) or None,
                    api_endpoint_cidrs=",".join(stage.api.endpoint_cidrs) or None,
                    api_instance_types=",".join(stage.api.instance_types) or None,
                    max_run_hours=str(stage.max_run_hours),
                    api_max_runs_per_day=str(stage.api.max_runs_per_day),
                    api_max_usd_per_request=str(stage.api.max_usd_per_request),
                    api_allow_unpriced=str(stage.api.allow_unpriced).lower(),
                ),
                "POWERTOOLS_SERVICE_NAME": "benchwright-api",
            },
        )
        for machine in (workflow.benchmark, workflow.suite):
            machine.grant_start_execution(self.function)
            self.function.add_to_role_policy(
                iam.PolicyStatement(actions=["states:ListExecutions"], resources=[machine.state_machine_arn])
            )
        self.function.add_to_role_policy(
            iam.PolicyStatement(
                actions=["states:StopExecution", "states:DescribeExecution", "states:GetExecutionHistory"],
                resources=[
                    cdk.Stack.of(self).format_arn(
                        service="states",
                        resource="execution",
                        resource_name=f"{machine.state_machine_name}:*",
                        arn_format=cdk.ArnFormat.COLON_RESOURCE_NAME,
                    )
                    for machine in (workflow.benchmark, workflow.suite)
                ],
            )
        )
        for statement in api_statements(storage.results, f"{QUOTA_PREFIX}*"):  # infra/bucket_access.py
            self.function.add_to_role_policy(statement)
        teardown.grant_invoke(self.function)
        janitor.grant_invoke(self.function)

        access_logs = logs.LogGroup(
            self,
            "AccessLogs",
            retention=logs.RetentionDays.THREE_MONTHS,
            removal_policy=cdk.RemovalPolicy.DESTROY,
        )
        self.rest_api = apigw.RestApi(
            self,
            "RestApi",
            rest_api_name=f"benchwright-{stage.name}",
            description="Benchwright: submit runs, read status and reports (SigV4)",
            cloud_watch_role=True,
            cloud_watch_role_removal_policy=cdk.RemovalPolicy.DESTROY,
            endpoint_types=[apigw.EndpointType.REGIONAL],
            deploy_options=apigw.StageOptions(
                stage_name="v1",
                access_log_destination=apigw.LogGroupLogDestination(access_logs),
                access_log_format=apigw.AccessLogFormat.json_with_standard_fields(
                    caller=True,
                    http_method=True,
                    ip=True,
                    protocol=True,
                    request_time=True,
                    resource_path=True,
                    response_length=True,
                    status=True,
                    user=True,
                ),
                logging_level=apigw.MethodLoggingLevel.ERROR,
                data_trace_enabled=False,
                tracing_enabled=True,
                throttling_rate_limit=10,
                throttling_burst_limit=20,
            ),
            default_method_options=apigw.MethodOptions(authorization_type=apigw.AuthorizationType.IAM),
            min_compression_size=cdk.Size.kibibytes(1),
        )
        validator = self.rest_api.add_request_validator(
            "Validator", validate_request_body=True, validate_request_parameters=True
        )
        integration = apigw.LambdaIntegration(self.function, proxy=True)
        for path, method in ROUTES:
            resource = self.rest_api.root.resource_for_path(path)
            resource.add_method(
                method,
                integration,
                authorization_type=apigw.AuthorizationType.IAM,
                request_validator=validator,
            )
        # Callers need execute-api:Invoke on this API; a managed policy to attach to users or roles.
        self.invoke_policy = iam.ManagedPolicy(
            self,
            "InvokePolicy",
            description="Allows calling the Benchwright API",
            statements=[
                iam.PolicyStatement(
                    actions=["execute-api:Invoke"],
                    resources=[self.rest_api.arn_for_execute_api("*", "/*", "v1")],
                )
            ],
        )
