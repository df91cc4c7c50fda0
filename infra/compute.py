"""Where the load generator runs: an ECS cluster with a Fargate task definition built from
runner-image/, and an EC2 launch template for runs that ask for dedicated hosts (runner.kind=ec2).

The container image: ``runner.image`` (a pushed URI) wins; otherwise with the context flag
``benchwright:build-image=true`` (what `benchwright deploy` sets) CDK builds runner-image/Dockerfile
with the repo root as context, which needs Docker at deploy time only; otherwise the stack takes the
URI as the CloudFormation parameter ``RunnerImageUri``, so plain `cdk synth` needs no Docker at all.
"""

from __future__ import annotations

from collections.abc import Sequence

import aws_cdk as cdk
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_ecs as ecs
from aws_cdk import aws_iam as iam
from aws_cdk import aws_logs as logs
from aws_cdk import aws_s3 as s3
from constructs import Construct

from benchwright.providers.aws.names import RESOURCE_PREFIX, RUN_ID_TAG
from infra.config import StageConfig
from infra.constants import REPO_ROOT
from infra.network import Network

RUNNER_CONTAINER = "runner"
# Left out of the image build context (the repo root): big, local or secret-looking things.
IMAGE_EXCLUDES = [
    ".venv", "node_modules", "cdk.out", ".git", ".local-servers", ".bench", "benchwright-results",
    "**/__pycache__", ".mypy_cache", ".ruff_cache", ".pytest_cache", "tests", "docs", "infra",
]  # fmt: skip


def db_secret_statements(
    stack: cdk.Stack, actions: Sequence[str] = ("secretsmanager:GetSecretValue",), **extra: object
) -> list[iam.PolicyStatement]:
    """``actions`` (LaunchRunner's TagResource; no standing role reads a run's secret: run sessions
    do, infra/isolation.py) on the secrets of benchwright's own databases only (fault 9: not ``rds!*``,
    every RDS-managed password in the account). RDS tags the secret it manages with the ARN of its
    instance or cluster (``aws:rds:primaryDBInstanceArn`` / ``aws:rds:primaryDBClusterArn``), and
    every database a run creates is named ``bw-...`` (benchwright.providers.aws.common.resource_name);
    secrets the workflow creates itself (EC2 targets) carry the run-id tag."""
    owned = {
        "aws:rds:primaryDBInstanceArn": stack.format_arn(
            service="rds",
            resource="db",
            resource_name=f"{RESOURCE_PREFIX}*",
            arn_format=cdk.ArnFormat.COLON_RESOURCE_NAME,
        ),
        "aws:rds:primaryDBClusterArn": stack.format_arn(
            service="rds",
            resource="cluster",
            resource_name=f"{RESOURCE_PREFIX}*",
            arn_format=cdk.ArnFormat.COLON_RESOURCE_NAME,
        ),
    }
    statements = [
        iam.PolicyStatement(
            actions=list(actions),
            resources=["*"],
            conditions={"StringLike": {f"secretsmanager:ResourceTag/{key}": arn}, **extra},
        )
        for key, arn in owned.items()
    ]
    statements.append(
        iam.PolicyStatement(
            actions=list(actions),
            resources=["*"],
            conditions={"Null": {f"secretsmanager:ResourceTag/{RUN_ID_TAG}": "false"}, **extra},
        )
    )
    return statements


def runner_image(scope: Construct, stage: StageConfig, build: bool) -> ecs.ContainerImage:
    """Pick the runner image source; see the module docstring."""
    if stage.runner.image:
        return ecs.ContainerImage.from_registry(stage.runner.image)
    if build:
        return ecs.ContainerImage.from_asset(
            str(REPO_ROOT), file="runner-image/Dockerfile", exclude=IMAGE_EXCLUDES
        )
    uri = cdk.CfnParameter(
        scope,
        "RunnerImageUri",
        type="String",
        min_length=1,
        description="Runner image URI (build runner-image/ and push it, or deploy with "
        "-c benchwright:build-image=true to let CDK build it)",
    )
    return ecs.ContainerImage.from_registry(uri.value_as_string)


class Compute(Construct):
    """ECS cluster + Fargate runner task definition + EC2 runner launch template."""

    def __init__(
        self,
        scope: Construct,
        cid: str,
        *,
        stage: StageConfig,
        network: Network,
        results: s3.IBucket,
        build_image: bool,
    ) -> None:
        super().__init__(scope, cid)
        self.cluster = ecs.Cluster(
            self,
            "Cluster",
            vpc=network.vpc,
            container_insights_v2=ecs.ContainerInsights.ENABLED,
        )
        self.log_group = logs.LogGroup(
            self,
            "RunnerLogs",
            retention=logs.RetentionDays.ONE_MONTH,
            removal_policy=cdk.RemovalPolicy.DESTROY,
        )
        self.task_role = iam.Role(
            self,
            "RunnerTaskRole",
            assumed_by=iam.ServicePrincipal("ecs-tasks.amazonaws.com"),
            description="Benchwright runner: a session of the run-scoped RunnerRunRole (infra/isolation.py)",
        )
        self.task_definition = ecs.FargateTaskDefinition(
            self,
            "RunnerTask",
            cpu=stage.runner.fargate_cpu,
            memory_limit_mib=stage.runner.fargate_memory_mib,
            task_role=self.task_role,
            runtime_platform=ecs.RuntimePlatform(
                cpu_architecture=ecs.CpuArchitecture.X86_64,
                operating_system_family=ecs.OperatingSystemFamily.LINUX,
            ),
        )
        image = runner_image(self, stage, build_image)
        self.container = self.task_definition.add_container(
            RUNNER_CONTAINER,
            image=image,
            memory_limit_mib=stage.runner.fargate_memory_mib,
            logging=ecs.LogDrivers.aws_logs(stream_prefix="runner", log_group=self.log_group),
            # The plan and result locations arrive as the command override at RunTask (appended to
            # the image's ENTRYPOINT), the DB secret's ARN as BENCHWRIGHT_DB_SECRET_ARN; the runner
            # reads the password itself with the task role. Nothing secret is in the definition.
            command=["--help"],
            readonly_root_filesystem=False,
            environment={"PYTHONUNBUFFERED": "1"},
        )

        # The runner reads its plan and the target's password (BENCHWRIGHT_DB_SECRET_ARN) and writes
        # its output only as a session of RunnerRunRole tagged with its run (infra/isolation.py,
        # providers/aws/run_session.py): its own role grants no bucket or secret of any run.
        if stage.runner.image or not build_image:
            # an image by URI may live in this account's ECR: let the execution role pull it
            execution = self.task_definition.obtain_execution_role()
            execution.add_to_principal_policy(
                iam.PolicyStatement(actions=["ecr:GetAuthorizationToken"], resources=["*"])
            )
            execution.add_to_principal_policy(
                iam.PolicyStatement(
                    actions=[
                        "ecr:BatchGetImage",
                        "ecr:GetDownloadUrlForLayer",
                        "ecr:BatchCheckLayerAvailability",
                    ],
                    resources=[
                        cdk.Stack.of(self).format_arn(service="ecr", resource="repository", resource_name="*")
                    ],
                )
            )

        self.instance_role = iam.Role(
            self,
            "RunnerInstanceRole",
            assumed_by=iam.ServicePrincipal("ec2.amazonaws.com"),
            description="Benchwright EC2 runner: SSM access, image pull, a session of RunnerRunRole",
            managed_policies=[iam.ManagedPolicy.from_aws_managed_policy_name("AmazonSSMManagedInstanceCore")],
        )
        # like the task role: plan, secret and output only through a session of RunnerRunRole
        # an EC2 runner host pulls the same runner image the Fargate task runs (userdata.py)
        self.instance_role.add_to_principal_policy(
            iam.PolicyStatement(actions=["ecr:GetAuthorizationToken"], resources=["*"])
        )
        self.instance_role.add_to_principal_policy(
            iam.PolicyStatement(
                actions=[
                    "ecr:BatchGetImage",
                    "ecr:GetDownloadUrlForLayer",
                    "ecr:BatchCheckLayerAvailability",
                ],
                resources=[
                    cdk.Stack.of(self).format_arn(service="ecr", resource="repository", resource_name="*")
                ],
            )
        )
        # EC2 runners and self-managed targets boot the latest Amazon Linux 2023 from AWS's public SSM
        # parameter (a CloudFormation parameter resolved at each deploy; nothing to build or patch).
        self.machine_image = ec2.MachineImage.latest_amazon_linux2023()
        self.runner_ami = self.machine_image.get_image(self).image_id
        self.runner_image_uri = self.container.image_name
        self.instance_profile = iam.InstanceProfile(self, "RunnerInstanceProfile", role=self.instance_role)
        # Self-managed target nodes (EC2 templates): only SSM's agent, so that node_replace can run
        # yb-admin on a node through Run Command (providers/aws/targets/kinds/ec2/yb_admin.py); no bucket, no
        # secret, no image pull (a node downloads its server, it reads nothing of ours).
        self.node_role = iam.Role(
            self,
            "TargetNodeRole",
            assumed_by=iam.ServicePrincipal("ec2.amazonaws.com"),
            description="Benchwright self-managed target nodes: SSM Run Command's agent only",
            managed_policies=[iam.ManagedPolicy.from_aws_managed_policy_name("AmazonSSMManagedInstanceCore")],
        )
        self.node_instance_profile = iam.InstanceProfile(
            self, "TargetNodeInstanceProfile", role=self.node_role
        )
        # RDS's Enhanced Monitoring agent writes the OS metrics into CloudWatch Logs (RDSOSMetrics) as
        # this role (a spec's target.monitoring.enhanced_s; CreateDBInstance's MonitoringRoleArn)
        self.monitoring_role = iam.Role(
            self,
            "RdsMonitoringRole",
            assumed_by=iam.ServicePrincipal("monitoring.rds.amazonaws.com"),
            description="Benchwright RDS/Aurora targets: Enhanced Monitoring writes RDSOSMetrics",
            managed_policies=[
                iam.ManagedPolicy.from_aws_managed_policy_name("service-role/AmazonRDSEnhancedMonitoringRole")
            ],
        )
        self.launch_template = ec2.LaunchTemplate(
            self,
            "RunnerLaunchTemplate",
            instance_type=ec2.InstanceType(stage.runner.ec2_instance_type),
            machine_image=self.machine_image,
            instance_profile=self.instance_profile,
            security_group=network.runner_sg,
            require_imdsv2=True,
            detailed_monitoring=True,
            block_devices=[
                ec2.BlockDevice(
                    device_name="/dev/xvda",
                    volume=ec2.BlockDeviceVolume.ebs(
                        30, encrypted=True, volume_type=ec2.EbsDeviceVolumeType.GP3
                    ),
                )
            ],
            instance_initiated_shutdown_behavior=ec2.InstanceInitiatedShutdownBehavior.TERMINATE,
        )

    def launch_template_arn(self) -> str:
        return cdk.Stack.of(self).format_arn(
            service="ec2", resource="launch-template", resource_name=self.launch_template.launch_template_id
        )
