"""Least privilege per stage Lambda: each state gets only the actions its stage performs.

Data actions name their resources (the results bucket, the Slack secret, the Timestream table).
Create calls must carry a ``benchwright:run-id`` tag (aws:RequestTag) and modify calls may only touch
resources that carry one (aws:ResourceTag), so a bug cannot touch someone else's database.
Describe/List/GetMetricData calls do not support resource scoping in IAM: those, and only those, use
``*`` resources, which docs/deploy.md and the cdk-nag acknowledgments explain.

No stage's own role deletes, stops or terminates anything, or reads a run's database secret: those
go through a session of a run-scoped role tagged with the stage's run (infra/isolation.py), which
reaches only that run's resources. The two exceptions delete by tag as themselves because they serve
runs whose state is lost: AbortTeardown's run sweep and the janitor (``SWEEPERS``).
"""

from __future__ import annotations

from collections.abc import Callable

import aws_cdk as cdk
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_

from benchwright.providers.aws import names
from benchwright.providers.aws.targets.kinds import iam_actions
from benchwright.spec.notify import SLACK_SECRET_NAME
from infra.bucket_access import BUCKET_ACCESS, NONE, bucket_statements
from infra.compute import Compute, db_secret_statements
from infra.config import StageConfig
from infra.storage import Storage

# The targets' and runner's own actions are declared by each AWS kind (its folder's kind.py) and read
# here as the union over the registry (kinds.iam_actions), so a new kind needs no edit in this file.
# Every target's AZ id, whatever its kind (targets/base.py AwsTarget._az_id, for the results'
# fingerprint): a read of the shared base class, so it stays here rather than on one kind.
SHARED_DESCRIBE = ["ec2:DescribeAvailabilityZones"]
DESCRIBE = list(dict.fromkeys(iam_actions("iam_describe") + SHARED_DESCRIBE))
CREATE = iam_actions("iam_create")
MODIFY = iam_actions("iam_modify")
DELETE = iam_actions("iam_delete")
# The actions of a spec's events (each kind's iam_events, for its events.py), issued by CheckRunner while
# the runner measures (stages/schedule.py): only on resources that carry a run tag, like DELETE.
EVENTS = iam_actions("iam_events")
# The operation benchmarks' calls (each kind's iam_operations: providers/aws/targets/operations.py,
# node_replace.py), made by CheckOperations: each carries the run's tags (aws:RequestTag), like CREATE;
# what they make is deleted (node_replace's terminate of a node, too) under DELETE's rule.
OPERATIONS = iam_actions("iam_operations")
# node_replace's yb-admin (providers/aws/targets/kinds/ec2/yb_admin.py): Run Command's shell document, on the
# run's own instances only (their run tag); the invocation's output is read by command id (IAM has no
# resource for GetCommandInvocation).
RUN_COMMAND_DOCUMENT = "AWS-RunShellScript"
# RunInstances / CreateNetworkInterface also authorize the EXISTING things they use (and the implicit
# ENI), which carry no request tags: allow those by type; the instance and its volume stay tag-bound.
RUN_INSTANCES_USES = ["image", "subnet", "security-group", "launch-template", "key-pair", "network-interface"]


def _statement(
    actions: list[str], resources: list[str], **conditions: dict[str, object]
) -> iam.PolicyStatement:
    return iam.PolicyStatement(actions=actions, resources=resources, conditions=conditions or None)


def _describe(fn: lambda_.Function) -> None:
    fn.add_to_role_policy(_statement(DESCRIBE, ["*"]))


def _create(fn: lambda_.Function, stage: StageConfig, compute: Compute) -> None:
    fn.add_to_role_policy(_statement(CREATE, ["*"], Null={f"aws:RequestTag/{names.RUN_ID_TAG}": "false"}))
    # RDS-managed master passwords: RDS creates and tags the secret on our behalf (a forward access
    # session); the function itself cannot create or tag any secret directly.
    fn.add_to_role_policy(
        _statement(
            ["secretsmanager:CreateSecret", "secretsmanager:TagResource"],
            ["*"],
            Bool={"aws:ViaAWSService": "true"},
        )
    )
    fn.add_to_role_policy(_statement(MODIFY, ["*"], Null={f"aws:ResourceTag/{names.RUN_ID_TAG}": "false"}))
    fn.add_to_role_policy(_statement(["iam:PassRole"], [compute.instance_role.role_arn]))
    # Enhanced Monitoring: CreateDBInstance passes the stack's monitoring role to RDS
    fn.add_to_role_policy(
        _statement(
            ["iam:PassRole"],
            [compute.monitoring_role.role_arn],
            StringEquals={"iam:PassedToService": "monitoring.rds.amazonaws.com"},
        )
    )
    _run_instances_uses(fn, ["ec2:RunInstances", "ec2:CreateNetworkInterface"])


def _run_instances_uses(fn: lambda_.Function, actions: list[str]) -> None:
    """The existing image, subnet, security group, interface ... a launch uses (no request tags)."""
    stack = cdk.Stack.of(fn)
    uses = [
        stack.format_arn(
            service="ec2", resource=kind, resource_name="*", account="" if kind == "image" else None
        )
        for kind in RUN_INSTANCES_USES
    ]
    fn.add_to_role_policy(_statement(actions, uses))


def _pass_node_role(fn: lambda_.Function, compute: Compute) -> None:
    """A target node's instance profile (SSM's agent), passed to EC2 only."""
    fn.add_to_role_policy(
        _statement(
            ["iam:PassRole"],
            [compute.node_role.role_arn],
            StringEquals={"iam:PassedToService": "ec2.amazonaws.com"},
        )
    )


def _run_command(fn: lambda_.Function) -> None:
    """SendCommand of the shell document on the run's tagged instances; reading its invocation."""
    stack = cdk.Stack.of(fn)
    document = stack.format_arn(service="ssm", resource="document", resource_name=RUN_COMMAND_DOCUMENT,
                                account="")  # fmt: skip
    fn.add_to_role_policy(_statement(["ssm:SendCommand"], [document]))
    instances = stack.format_arn(service="ec2", resource="instance", resource_name="*")
    fn.add_to_role_policy(
        _statement(["ssm:SendCommand"], [instances], Null={f"ssm:resourceTag/{names.RUN_ID_TAG}": "false"})
    )
    fn.add_to_role_policy(_statement(["ssm:GetCommandInvocation"], ["*"]))


def _delete(fn: lambda_.Function) -> None:
    """Delete anything of SOME run (the tag present): only for the sweepers, which serve runs whose
    state (and so whose run id) is lost; every other delete goes through a run session."""
    fn.add_to_role_policy(_statement(DELETE, ["*"], Null={f"aws:ResourceTag/{names.RUN_ID_TAG}": "false"}))


def _tag_run_secrets(fn: lambda_.Function) -> None:
    """LaunchRunner tags the database secret with the run it launches for (the run-scoped runner
    role reads only a secret tagged with its run): the same secrets the stages may read, and only
    the run-id tag."""
    only_run_tag = {"ForAllValues:StringEquals": {"aws:TagKeys": [names.RUN_ID_TAG]}}
    for statement in db_secret_statements(cdk.Stack.of(fn), ["secretsmanager:TagResource"], **only_run_tag):
        fn.add_to_role_policy(statement)


def _launch(fn: lambda_.Function, compute: Compute) -> None:
    fn.add_to_role_policy(
        _statement(
            ["ecs:RunTask"],
            [compute.task_definition.task_definition_arn],
            ArnEquals={"ecs:cluster": compute.cluster.cluster_arn},
        )
    )
    fn.add_to_role_policy(
        _statement(["ecs:TagResource"], ["*"], StringEquals={"ecs:CreateAction": "RunTask"})
    )
    # a retried launch looks for the runner an earlier attempt started (by its launch token)
    fn.add_to_role_policy(
        _statement(["ecs:ListTasks"], ["*"], ArnEquals={"ecs:cluster": compute.cluster.cluster_arn})
    )
    fn.add_to_role_policy(_statement(["ec2:DescribeInstances"], ["*"]))
    roles = [compute.task_definition.task_role.role_arn]
    if compute.task_definition.execution_role is not None:
        roles.append(compute.task_definition.execution_role.role_arn)
    fn.add_to_role_policy(_statement(["iam:PassRole"], roles))


def _check_runner(fn: lambda_.Function, compute: Compute) -> None:
    fn.add_to_role_policy(
        _statement(["ecs:DescribeTasks"], ["*"], ArnEquals={"ecs:cluster": compute.cluster.cluster_arn})
    )


def _events(fn: lambda_.Function) -> None:
    """A spec's events (failover, reboot, scale) on the run's own resources only (their run tag)."""
    fn.add_to_role_policy(_statement(EVENTS, ["*"], Null={f"aws:ResourceTag/{names.RUN_ID_TAG}": "false"}))


def _metrics(fn: lambda_.Function) -> None:
    fn.add_to_role_policy(_statement(["cloudwatch:GetMetricData", "cloudwatch:GetMetricStatistics"], ["*"]))
    # per-second server series (spec target.monitoring): Enhanced Monitoring's OS metrics in the
    # RDSOSMetrics log group, and Performance Insights' DB load (its resources: db-<DbiResourceId>)
    stack = cdk.Stack.of(fn)
    # the instance's DbiResourceId names its log stream and its PI resource
    fn.add_to_role_policy(_statement(["rds:DescribeDBInstances"], ["*"]))
    fn.add_to_role_policy(
        _statement(
            ["logs:FilterLogEvents", "logs:GetLogEvents"],
            [
                stack.format_arn(
                    service="logs",
                    resource="log-group",
                    resource_name="RDSOSMetrics:*",
                    arn_format=cdk.ArnFormat.COLON_RESOURCE_NAME,
                )
            ],
        )
    )
    fn.add_to_role_policy(
        _statement(
            ["pi:GetResourceMetrics"],
            [stack.format_arn(service="pi", resource="metrics", resource_name="rds/*")],
        )
    )


def _put_metric(fn: lambda_.Function) -> None:
    fn.add_to_role_policy(
        _statement(
            ["cloudwatch:PutMetricData"],
            ["*"],
            StringEquals={"cloudwatch:namespace": names.METRICS_NAMESPACE},
        )
    )


def _ingest(fn: lambda_.Function, storage: Storage) -> None:
    if storage.timestream_table_arn:
        fn.add_to_role_policy(_statement(["timestream:WriteRecords"], [storage.timestream_table_arn]))
        fn.add_to_role_policy(_statement(["timestream:DescribeEndpoints"], ["*"]))
    if storage.influx is not None:
        storage.influx_token.grant_read(fn)  # the operator token only, never the admin password


def _history(fn: lambda_.Function, storage: Storage) -> None:
    if storage.timestream_table_arn:
        fn.add_to_role_policy(_statement(["timestream:Select"], [storage.timestream_table_arn]))
        fn.add_to_role_policy(_statement(["timestream:DescribeEndpoints"], ["*"]))


def _price(fn: lambda_.Function) -> None:
    fn.add_to_role_policy(_statement(["pricing:GetProducts"], ["*"]))


def _janitor(fn: lambda_.Function) -> None:
    fn.add_to_role_policy(_statement(["tag:GetResources", "ecs:ListClusters", "ecs:ListTasks"], ["*"]))
    fn.add_to_role_policy(_statement(["ecs:DescribeTasks"], ["*"]))


def _placement(fn: lambda_.Function) -> None:
    """The runner's subnet is chosen by AZ (same as the target, another, or named): a read of subnets."""
    fn.add_to_role_policy(_statement(["ec2:DescribeSubnets", "ec2:DescribeAvailabilityZones"], ["*"]))


def _provision(fn: lambda_.Function, stage: StageConfig, storage: Storage, compute: Compute) -> None:
    _describe(fn)
    _create(fn, stage, compute)
    _pass_node_role(fn, compute)  # a self-managed target's nodes (ec2.Ec2Target.node_launch_args)


def _check_target(fn: lambda_.Function, stage: StageConfig, storage: Storage, compute: Compute) -> None:
    """Describe the target and probe its port (a TCP connect: no login, so no secret)."""
    _describe(fn)


def _launch_runner(fn: lambda_.Function, stage: StageConfig, storage: Storage, compute: Compute) -> None:
    _launch(fn, compute)
    _create(fn, stage, compute)
    _placement(fn)
    _describe(fn)  # the target's class, storage and AZ id for the results' fingerprint (stages/context.py)
    _tag_run_secrets(fn)


def _watch_runner(fn: lambda_.Function, stage: StageConfig, storage: Storage, compute: Compute) -> None:
    """Look at the runners (and read their outputs from the bucket); issue the spec's due events."""
    _check_runner(fn, compute)
    _describe(fn)
    _events(fn)


def _operations(fn: lambda_.Function, stage: StageConfig, storage: Storage, compute: Compute) -> None:
    """The spec's operation benchmarks: snapshots and restores of the run's own database only (the
    run tag on every create); node_replace launches a replacement node on a new network interface
    (with the nodes' instance profile) and runs yb-admin on a node of the run through SSM Run
    Command. The master secret for the probe query and every delete (what the operations made,
    node_replace's old node) go through the run session of OperationsRunRole (infra/isolation.py)."""
    _describe(fn)
    fn.add_to_role_policy(_statement(OPERATIONS, ["*"], Null={f"aws:RequestTag/{names.RUN_ID_TAG}": "false"}))
    _run_instances_uses(fn, ["ec2:RunInstances", "ec2:CreateNetworkInterface"])
    _pass_node_role(fn, compute)
    _run_command(fn)


def _pricing(fn: lambda_.Function, stage: StageConfig, storage: Storage, compute: Compute) -> None:
    _price(fn)
    _put_metric(fn)


def _teardown(fn: lambda_.Function, stage: StageConfig, storage: Storage, compute: Compute) -> None:
    """Look at the target and the runners (only running ones are stopped; node_replace's
    replacement and interface are found by tag); read the window's metrics once more (a failed run
    still gets its CloudWatch series). Every delete and stop goes through the run session of
    TeardownRunRole (infra/isolation.py): this role deletes nothing itself."""
    _describe(fn)
    _check_runner(fn, compute)
    _metrics(fn)


def _sweep(fn: lambda_.Function, stage: StageConfig, storage: Storage, compute: Compute) -> None:
    _describe(fn)
    _delete(fn)
    _janitor(fn)
    _put_metric(fn)


def _abort(fn: lambda_.Function, stage: StageConfig, storage: Storage, compute: Compute) -> None:
    """An aborted execution: Teardown's work for each cell it can see (through the run session, as
    Teardown), then the run-id sweep, which deletes by tag as itself (``SWEEPERS``); the state
    machine history read is granted next to the rule, infra/workflow.py."""
    _teardown(fn, stage, storage, compute)
    _delete(fn)
    _janitor(fn)


def _nothing(fn: lambda_.Function, stage: StageConfig, storage: Storage, compute: Compute) -> None:
    """No AWS calls of its own (pure stages, or a profile granted elsewhere); its bucket keys, if any,
    come from infra/bucket_access.py."""


Grant = Callable[[lambda_.Function, StageConfig, Storage, Compute], None]
GRANTS: dict[str, Grant] = {
    "ValidateSpec": _nothing,
    "ExpandMatrix": _nothing,
    "ProvisionTarget": _provision,
    "CheckTarget": _check_target,
    "LaunchRunner": _launch_runner,
    "CheckRunner": _watch_runner,
    "CheckOperations": _operations,
    "CollectMetrics": lambda fn, st, s, cp: _metrics(fn),
    "Judge": lambda fn, st, s, cp: _history(fn, s),
    "Ingest": lambda fn, st, s, cp: _ingest(fn, s),
    "Price": _pricing,
    # the finish reads its history from the S3 run records (infra/bucket_access.py) and posts to Slack
    "FinishRun": _nothing,
    "SummarizeSuite": _nothing,
    "Teardown": _teardown,
    "Janitor": _sweep,
    "AbortTeardown": _abort,
    "InfluxToken": _nothing,  # its two secrets are granted next to the custom resource (workflow.py)
}
# The ASL's names for the same stages (kept in step with statemachines/*.asl.json).
GRANTS["JudgeResults"] = GRANTS["Judge"]
GRANTS["StoreResults"] = GRANTS["Ingest"]
GRANTS["PriceRun"] = GRANTS["Price"]
# FinishRun announces every run (success or failure); SummarizeSuite finishes a suite run the same way;
# AbortTeardown finishes an execution that was aborted or timed out.
NEEDS_SLACK = {"FinishRun", "SummarizeSuite", "AbortTeardown"}
# The only stages whose own roles delete (anything carrying SOME run's tag): they serve runs whose
# state is lost (an aborted execution's leftovers, an expired resource), so no run session exists.
SWEEPERS = {"Janitor", "AbortTeardown"}


def grant_stage_permissions(
    state: str, fn: lambda_.Function, stage: StageConfig, storage: Storage, compute: Compute
) -> None:
    """Attach the policy of one stage; an unknown state gets none (and a warning)."""
    grant = GRANTS.get(state)
    if grant is None:
        cdk.Annotations.of(fn).add_warning_v2(
            "benchwright:unknown-state",
            f"no IAM profile for state {state}: it gets no AWS access (nor any of the results bucket)",
        )
    else:
        grant(fn, stage, storage, compute)
    # its keys of the results bucket, by prefix (infra/bucket_access.py): never a delete
    for statement in bucket_statements(storage.results, BUCKET_ACCESS.get(state, NONE)):
        fn.add_to_role_policy(statement)
    if state in NEEDS_SLACK:
        storage.slack_secret.grant_read(fn)
        _read_spec_slack_secrets(fn)


def _read_spec_slack_secrets(fn: lambda_.Function) -> None:
    """A spec's own Slack secret (notify.slack.webhook_secret_arn), by the documented name alone:
    ``benchwright/slack`` or ``benchwright/slack/<name>`` plus the 6 characters Secrets Manager adds."""
    stack = cdk.Stack.of(fn)
    arns = [
        stack.format_arn(
            service="secretsmanager",
            resource="secret",
            resource_name=name,
            arn_format=cdk.ArnFormat.COLON_RESOURCE_NAME,
        )
        for name in (f"{SLACK_SECRET_NAME}-??????", f"{SLACK_SECRET_NAME}/*")
    ]
    fn.add_to_role_policy(_statement(["secretsmanager:GetSecretValue"], arns))
