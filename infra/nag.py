"""cdk-nag AwsSolutions findings we accept, each with the reason. Anything not listed fails synth.

cdk-nag 3.x reports IAM4/IAM5 per piece of evidence (``AwsSolutions-IAM5[Resource::<Bucket.Arn>/*]``)
and an acknowledgment must name that exact id, so the ids below are computed from the stack's own
logical ids: a new wildcard somewhere else is NOT silently covered and fails synth until it is
reviewed and given a reason here.
"""

from __future__ import annotations

import aws_cdk as cdk

from benchwright.spec.notify import SLACK_SECRET_NAME
from infra.bucket_access import BUCKET_ACCESS, OWNER
from infra.isolation import RUN_PREFIX
from infra.permissions import RUN_INSTANCES_USES
from infra.stack import BenchwrightStack

# Whole rules acknowledged for the stack, with the reason.
RULES: dict[str, str] = {
    "AwsSolutions-L1": "the Lambda code is bundled for Python 3.12 (cp312 wheels); moving runtimes is a "
    "deliberate, tested change, not a drift to follow automatically",
    "AwsSolutions-SMG4": "the Slack webhook URL is issued by Slack and cannot be rotated by a Lambda",
    "AwsSolutions-APIG3": "every method requires SigV4 (IAM) and the stage is throttled; a WAF web ACL "
    "(about 5 USD/month plus rules) adds little in front of an IAM-only API",
    "AwsSolutions-COG4": "the API uses IAM authorization (SigV4), not Cognito: callers are AWS principals",
    "AwsSolutions-ECS2": "the only environment variable is PYTHONUNBUFFERED; plan locations and the DB "
    "password are passed as overrides at RunTask, never stored in the task definition",
    "AwsSolutions-S1": "the access-log bucket itself does not log (it would log into itself)",
}

MANAGED_POLICIES: dict[str, str] = {
    "service-role/AWSLambdaBasicExecutionRole": "AWS-maintained policy limited to writing the function's logs",
    "service-role/AWSLambdaVPCAccessExecutionRole": "AWS-maintained policy limited to managing the ENIs of "
    "the in-VPC readiness probe and ingest Lambdas",
    "service-role/AmazonAPIGatewayPushToCloudWatchLogs": "the account-level role API Gateway needs to write "
    "execution logs; AWS-maintained and logs-only",
    "service-role/AmazonRDSEnhancedMonitoringRole": "what RDS's Enhanced Monitoring agent needs to write "
    "the RDSOSMetrics log group; AWS-maintained and logs-only",
    "AmazonSSMManagedInstanceCore": "lets operators reach EC2 runners through Session Manager instead of "
    "SSH, and lets node_replace run yb-admin on a self-managed target node through Run Command; "
    "AWS-maintained",
}

S3_ACTIONS = "CDK bucket grant helpers on our own results bucket (object-level reads/writes, listing)"
WILDCARD_RESOURCES = (
    "only actions IAM cannot scope to a resource (Describe*/List*, GetMetricData, pricing:GetProducts, "
    "tag:GetResources, timestream:DescribeEndpoints, ssm:GetCommandInvocation) or create/delete calls guarded by "
    "aws:RequestTag / aws:ResourceTag conditions on the benchwright:run-id tag, secret reads "
    "conditioned on the tags of benchwright's own databases or runs, and the secret RDS creates on "
    "our behalf (aws:ViaAWSService)"
)


def _logical(stack: cdk.Stack, construct: cdk.IResource) -> str:
    child = construct.node.default_child
    assert isinstance(child, cdk.CfnElement)
    return stack.get_logical_id(child)


def acknowledgments(stack: BenchwrightStack) -> dict[str, str]:
    """Exact finding id -> reason, for the stack as built."""
    region = stack.region if not cdk.Token.is_unresolved(stack.region) else "<AWS::Region>"
    account = stack.account if not cdk.Token.is_unresolved(stack.account) else "<AWS::AccountId>"
    acks = {f"AwsSolutions::{rule}": reason for rule, reason in RULES.items()}
    iam4 = "AwsSolutions::AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/{}]"
    iam5 = "AwsSolutions::AwsSolutions-IAM5[{}]"
    for policy, reason in MANAGED_POLICIES.items():
        acks[iam4.format(policy)] = reason
    for action in ("s3:Abort*", "s3:DeleteObject*", "s3:GetBucket*", "s3:GetObject*", "s3:List*"):
        acks[iam5.format(f"Action::{action}")] = S3_ACTIONS
    acks[iam5.format("Resource::*")] = WILDCARD_RESOURCES
    bucket = _logical(stack, stack.storage.results)
    acks[iam5.format(f"Resource::<{bucket}.Arn>/*")] = "objects inside our own results bucket"
    # cdk-nag writes a policy variable ${x} as <x>
    own_prefix = RUN_PREFIX.replace("${", "<").replace("}", ">")
    acks[iam5.format(f"Resource::<{bucket}.Arn>/{own_prefix}*")] = (
        "a run-scoped session's own run prefix: the policy variable is its run-id session tag (infra/isolation.py)"
    )
    for pattern in sorted({p for access in BUCKET_ACCESS.values() for p in (*access.read, *access.put)}):
        acks[iam5.format(f"Resource::<{bucket}.Arn>/{pattern}")] = (
            "one key prefix of our own results bucket, per stage (infra/bucket_access.py)"
        )
    acks[iam5.format(f"Resource::<{bucket}.Arn>/{OWNER}")] = (
        "who submitted each run: the API writes it at submit, every stage is denied it (infra/bucket_access.py)"
    )
    acks[iam5.format(f"Resource::<{bucket}.Arn>/quota/*")] = (
        "the API deletes a refused request's own per-caller quota markers (benchwright.api.quota)"
    )
    for fn in [*stack.workflow.functions.values(), stack.api.function]:
        acks[iam5.format(f"Resource::<{_logical(stack, fn)}.Arn>:*")] = (
            "invoke permission on the function's versions/aliases (CDK grant_invoke)"
        )
    arn = f"arn:<AWS::Partition>:{{}}:{region}:{account}:{{}}"
    api = _logical(stack, stack.api.rest_api)
    acks[iam5.format("Resource::" + arn.format("execute-api", f"<{api}>/v1/*/*"))] = (
        "callers may invoke every route of this one API stage; IAM policies narrow it per caller"
    )
    acks[iam5.format(f"Resource::arn:<AWS::Partition>:s3:::cdk-hnb659fds-assets-{account}-{region}/*")] = (
        "the CDK bootstrap assets bucket, read by the BucketDeployment that uploads the nightly suite"
    )
    for kind in RUN_INSTANCES_USES:
        where = (
            f"arn:<AWS::Partition>:ec2:{region}::{kind}/*"
            if kind == "image"
            else arn.format("ec2", f"{kind}/*")
        )
        acks[iam5.format("Resource::" + where)] = (
            "RunInstances also authorizes the existing AMI, subnet, security group, launch template and key "
            "pair it uses; those carry no request tags, the instance itself is tag-conditioned"
        )
    acks[iam5.format("Resource::" + arn.format("ec2", "instance/*"))] = (
        "node_replace's SendCommand (yb-admin) on instances that carry a benchwright:run-id tag only "
        "(ssm:resourceTag condition), with the AWS-RunShellScript document only"
    )
    acks[iam5.format("Resource::" + arn.format("ecr", "repository/*"))] = (
        "the runner image is given by URI and may be any repository of this account"
    )
    acks[iam5.format("Resource::" + arn.format("secretsmanager", f"secret:{SLACK_SECRET_NAME}/*"))] = (
        "a spec's own Slack webhook secret, by the documented name benchwright/slack/<name> (read only)"
    )
    acks[iam5.format("Resource::" + arn.format("logs", "log-group:RDSOSMetrics:*"))] = (
        "the log streams of RDS's own Enhanced Monitoring group, one per instance (DbiResourceId); read only"
    )
    acks[iam5.format("Resource::" + arn.format("pi", "metrics/rds/*"))] = (
        "Performance Insights metrics of the run's DB instances, named by DbiResourceId at run time; read only"
    )
    for machine in (stack.workflow.benchmark, stack.workflow.suite):
        name = _logical(stack, machine)
        acks[iam5.format("Resource::" + arn.format("states", f"execution:<{name}.Name>:*"))] = (
            "executions of our own state machine; execution names are run ids chosen at run time"
        )
    return acks


def acknowledge(stack: BenchwrightStack) -> None:
    """Record the acknowledgments on the stack (they apply to every construct below it)."""
    cdk.Validations.of(stack).acknowledge(
        *(cdk.Acknowledgment(id=rule, reason=reason) for rule, reason in acknowledgments(stack).items())
    )
