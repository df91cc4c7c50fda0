"""The VPC: private subnets for targets and runners in the configured AZs, no public ingress.

Gateway endpoints (S3, DynamoDB) are free and always present: image layers (ECR keeps them in S3),
plans and results never cross a NAT gateway. Egress ``nat`` (default): one NAT gateway, about
33 USD/month plus 0.045 USD/GB for the little that remains (API calls). Egress ``endpoints``: isolated
subnets and interface endpoints in ONE zone (about 7.3 USD/month each): the runner needs five (ECR
api+dkr, Logs, Secrets Manager, STS), the readiness probe three more (RDS, ElastiCache, EC2), so eight
cost about 58 USD/month: cheaper than NAT only when API traffic is heavy, or when policy forbids any
route to the internet. Both are one setting (network.egress); docs/deploy.md has the arithmetic.
"""

from __future__ import annotations

import aws_cdk as cdk
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_elasticache as elasticache
from aws_cdk import aws_logs as logs
from aws_cdk import aws_memorydb as memorydb
from aws_cdk import aws_rds as rds
from constructs import Construct

from infra.config import StageConfig

# Database ports a runner may open towards a target; nothing else is allowed between the two groups.
DB_PORTS: dict[str, int] = {"postgres": 5432, "mysql": 3306, "redis": 6379, "yugabyte-ysql": 5433}
INTERFACE_ENDPOINTS = {
    "EcrApi": ec2.InterfaceVpcEndpointAwsService.ECR,
    "EcrDocker": ec2.InterfaceVpcEndpointAwsService.ECR_DOCKER,
    "Logs": ec2.InterfaceVpcEndpointAwsService.CLOUDWATCH_LOGS,
    "SecretsManager": ec2.InterfaceVpcEndpointAwsService.SECRETS_MANAGER,
    # the runner's run-scoped session (AssumeRole with its run's tag: providers/aws/run_session.py)
    "Sts": ec2.InterfaceVpcEndpointAwsService.STS,
    # for the readiness-probe Lambda, which describes the target before it connects
    "Rds": ec2.InterfaceVpcEndpointAwsService.RDS,
    "ElastiCache": ec2.InterfaceVpcEndpointAwsService.ELASTICACHE,
    "Ec2": ec2.InterfaceVpcEndpointAwsService.EC2,
}


class Network(Construct):
    """VPC, the runner and target security groups, endpoints and flow logs."""

    def __init__(self, scope: Construct, cid: str, *, stage: StageConfig) -> None:
        super().__init__(scope, cid)
        isolated = stage.network.egress == "endpoints"
        private_type = ec2.SubnetType.PRIVATE_ISOLATED if isolated else ec2.SubnetType.PRIVATE_WITH_EGRESS
        subnets = [ec2.SubnetConfiguration(name="private", subnet_type=private_type, cidr_mask=20)]
        if not isolated:
            subnets.append(
                ec2.SubnetConfiguration(name="public", subnet_type=ec2.SubnetType.PUBLIC, cidr_mask=24)
            )
        self.vpc = ec2.Vpc(
            self,
            "Vpc",
            ip_addresses=ec2.IpAddresses.cidr(stage.network.cidr),
            availability_zones=list(stage.availability_zones),
            subnet_configuration=subnets,
            nat_gateways=0 if isolated else 1,
            restrict_default_security_group=True,
            enable_dns_hostnames=True,
            enable_dns_support=True,
        )
        self.private_subnets = ec2.SubnetSelection(subnet_type=private_type)
        flow_logs = logs.LogGroup(
            self, "FlowLogs", retention=logs.RetentionDays.ONE_MONTH, removal_policy=cdk.RemovalPolicy.DESTROY
        )
        self.vpc.add_flow_log("FlowLog", destination=ec2.FlowLogDestination.to_cloud_watch_logs(flow_logs))

        self.vpc.add_gateway_endpoint("S3", service=ec2.GatewayVpcEndpointAwsService.S3)
        self.vpc.add_gateway_endpoint("DynamoDb", service=ec2.GatewayVpcEndpointAwsService.DYNAMODB)

        self.runner_sg = ec2.SecurityGroup(
            self,
            "RunnerSg",
            vpc=self.vpc,
            description="Benchwright runners: egress to targets and AWS APIs only",
        )
        self.target_sg = ec2.SecurityGroup(
            self,
            "TargetSg",
            vpc=self.vpc,
            allow_all_outbound=False,
            description="Benchwright targets: database ports from runners only",
        )
        self.probe_sg = ec2.SecurityGroup(
            self,
            "ProbeSg",
            vpc=self.vpc,
            description="Benchwright readiness probe Lambda: database ports only",
        )
        for name, port in DB_PORTS.items():
            self.target_sg.add_ingress_rule(self.runner_sg, ec2.Port.tcp(port), f"runner to {name}")
            self.target_sg.add_ingress_rule(self.probe_sg, ec2.Port.tcp(port), f"readiness probe to {name}")
        # Self-managed clusters (YugabyteDB on EC2) talk to each other inside the target group: a
        # node must be allowed to open the connection (egress) as well as to accept it (ingress).
        self.target_sg.add_ingress_rule(
            self.target_sg, ec2.Port.tcp_range(7000, 9100), "cluster-internal RPC"
        )
        self.target_sg.add_egress_rule(self.target_sg, ec2.Port.tcp_range(7000, 9100), "cluster-internal RPC")
        # EC2 targets install their server at boot (dnf from the AL2023 repositories in S3, release
        # downloads): HTTPS out. Where it can go is the route table's business: the NAT gateway
        # (egress nat), or only the S3 gateway and interface endpoints (egress endpoints).
        self.target_sg.add_egress_rule(
            ec2.Peer.any_ipv4(), ec2.Port.tcp(443), "HTTPS installs via NAT or the S3 gateway endpoint"
        )

        endpoint_sg = ec2.SecurityGroup(
            self, "EndpointSg", vpc=self.vpc, allow_all_outbound=False, description="VPC interface endpoints"
        )
        for sg in (self.runner_sg, self.probe_sg):
            endpoint_sg.add_ingress_rule(sg, ec2.Port.tcp(443), "HTTPS to AWS APIs")
        if isolated:
            for name, service in INTERFACE_ENDPOINTS.items():
                self.vpc.add_interface_endpoint(
                    name,
                    service=service,
                    subnets=ec2.SubnetSelection(
                        subnet_type=private_type, availability_zones=[stage.availability_zones[0]]
                    ),
                    security_groups=[endpoint_sg],
                )

        # Subnet groups the provisioning stage names when it creates RDS / ElastiCache / MemoryDB targets.
        private_ids = self.vpc.select_subnets(subnet_group_name="private").subnet_ids
        rds_group = rds.CfnDBSubnetGroup(
            self, "DbSubnets", db_subnet_group_description="Benchwright targets", subnet_ids=private_ids
        )
        cache_group = elasticache.CfnSubnetGroup(
            self, "CacheSubnets", description="Benchwright targets", subnet_ids=private_ids
        )
        memorydb_group = memorydb.CfnSubnetGroup(
            self,
            "MemoryDbSubnets",
            subnet_group_name=f"benchwright-{stage.name}",
            description="Benchwright targets",
            subnet_ids=private_ids,
        )
        self.db_subnet_group = rds_group.ref
        self.cache_subnet_group = cache_group.ref
        self.memorydb_subnet_group = memorydb_group.ref

    def subnet_ids_by_az(self) -> dict[str, str]:
        """AZ -> subnet id, so a stage can place a runner in the target's AZ or another one."""
        selected = self.vpc.select_subnets(subnet_group_name="private")
        return {s.availability_zone: s.subnet_id for s in selected.subnets}
