"""Durable things: the results bucket (source of truth), its access logs, the time-series sink and
the Slack webhook secret. Results survive `cdk destroy` (RETAIN); logs and the sink follow the stack."""

from __future__ import annotations

import json

import aws_cdk as cdk
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_s3 as s3
from aws_cdk import aws_secretsmanager as secretsmanager
from aws_cdk import aws_timestream as timestream
from constructs import Construct

from infra.config import INFLUX_FIXED_COST, LIVEANALYTICS_CLOSED, StageConfig
from infra.network import Network

INFLUX_PORT = 8086
INFLUX_ADMIN = "admin"
INFLUX_ORG = "benchwright"
INFLUX_BUCKET = "results"


class Storage(Construct):
    """Results bucket + access logs, time-series sink (LiveAnalytics | InfluxDB | none), Slack secret."""

    def __init__(self, scope: Construct, cid: str, *, stage: StageConfig, network: Network) -> None:
        super().__init__(scope, cid)
        self.access_logs = s3.Bucket(
            self,
            "AccessLogs",
            encryption=s3.BucketEncryption.S3_MANAGED,
            block_public_access=s3.BlockPublicAccess.BLOCK_ALL,
            enforce_ssl=True,
            object_ownership=s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
            lifecycle_rules=[s3.LifecycleRule(expiration=cdk.Duration.days(90))],
            removal_policy=cdk.RemovalPolicy.DESTROY,
            auto_delete_objects=False,
        )
        self.results = s3.Bucket(
            self,
            "Results",
            encryption=s3.BucketEncryption.S3_MANAGED,
            block_public_access=s3.BlockPublicAccess.BLOCK_ALL,
            enforce_ssl=True,
            versioned=True,
            server_access_logs_bucket=self.access_logs,
            server_access_logs_prefix="results/",
            lifecycle_rules=[
                s3.LifecycleRule(
                    id="tiering",
                    transitions=[
                        s3.Transition(
                            storage_class=s3.StorageClass.INFREQUENT_ACCESS,
                            transition_after=cdk.Duration.days(30),
                        )
                    ],
                    expiration=cdk.Duration.days(stage.results_retention_days),
                    noncurrent_version_expiration=cdk.Duration.days(30),
                    abort_incomplete_multipart_upload_after=cdk.Duration.days(2),
                ),
                s3.LifecycleRule(id="plans", prefix="plans/", expiration=cdk.Duration.days(14)),
                # the API's per-caller daily run quota (benchwright.api.quota): a day's markers
                s3.LifecycleRule(id="quota", prefix="quota/", expiration=cdk.Duration.days(2)),
            ],
            removal_policy=cdk.RemovalPolicy.RETAIN,
        )

        self.slack_secret = secretsmanager.Secret(
            self,
            "SlackWebhook",
            description="Slack incoming-webhook URL for run summaries (set it after deploy; empty = no Slack)",
            secret_string_value=cdk.SecretValue.unsafe_plain_text("{}"),
        )

        self.sink = stage.sink.kind
        self.influx_port = INFLUX_PORT
        self.timestream_database: str | None = None
        self.timestream_table: str | None = None
        self.timestream_table_arn: str | None = None
        self.influx: timestream.CfnInfluxDBInstance | None = None
        if stage.sink.kind == "liveanalytics":
            self._liveanalytics(stage)
        elif stage.sink.kind == "influxdb":
            self._influxdb(stage, network)

    def _liveanalytics(self, stage: StageConfig) -> None:
        cdk.Annotations.of(self).add_warning_v2("benchwright:liveanalytics", LIVEANALYTICS_CLOSED)
        database = timestream.CfnDatabase(self, "TimestreamDb", database_name=f"benchwright_{stage.name}")
        table = timestream.CfnTable(
            self,
            "TimestreamTable",
            database_name=database.ref,
            table_name="results",
            retention_properties={
                "MemoryStoreRetentionPeriodInHours": "24",
                "MagneticStoreRetentionPeriodInDays": str(stage.sink.retention_days),
            },
            magnetic_store_write_properties={"EnableMagneticStoreWrites": True},
        )
        table.add_dependency(database)
        self.timestream_database = database.ref
        self.timestream_table = "results"
        self.timestream_table_arn = table.attr_arn

    def _influxdb(self, stage: StageConfig, network: Network) -> None:
        cost = INFLUX_FIXED_COST.format(
            instance=stage.sink.influx_instance_type, storage=stage.sink.influx_storage_gb
        )
        cdk.Annotations.of(self).add_warning_v2("benchwright:influxdb-cost", cost)
        self.influx_sg = ec2.SecurityGroup(
            self, "InfluxSg", vpc=network.vpc, allow_all_outbound=False, description="Timestream for InfluxDB"
        )
        self.influx_sg.add_ingress_rule(
            network.probe_sg, ec2.Port.tcp(INFLUX_PORT), "ingest Lambda to InfluxDB"
        )
        subnets = network.vpc.select_subnets(subnet_group_name="private").subnet_ids
        # CreateDbInstance requires an admin password: generated into our own secret and handed to
        # CloudFormation as a dynamic reference (never in the template as text).
        self.influx_admin = secretsmanager.Secret(
            self,
            "InfluxAdmin",
            description="Timestream for InfluxDB admin user (sign-in only; writes use the operator token)",
            generate_secret_string=secretsmanager.SecretStringGenerator(
                secret_string_template=json.dumps({"username": INFLUX_ADMIN}),
                generate_string_key="password",
                exclude_punctuation=True,
                password_length=32,
            ),
        )
        self.influx = timestream.CfnInfluxDBInstance(
            self,
            "Influx",
            name=f"benchwright-{stage.name}",
            db_instance_type=stage.sink.influx_instance_type,
            db_storage_type="InfluxIOIncludedT1",
            allocated_storage=stage.sink.influx_storage_gb,
            deployment_type="SINGLE_AZ",
            organization=INFLUX_ORG,
            bucket=INFLUX_BUCKET,
            username=INFLUX_ADMIN,
            password=self.influx_admin.secret_value_from_json("password").unsafe_unwrap(),
            publicly_accessible=False,
            vpc_subnet_ids=subnets[:1],
            vpc_security_group_ids=[self.influx_sg.security_group_id],
        )
        # The token the ingest Lambda writes with, {"token": "..."}: created once by the InfluxToken
        # custom resource (functions/influx_token.py) signing in as the admin, kept here.
        self.influx_token = secretsmanager.Secret(
            self,
            "InfluxToken",
            description='Timestream for InfluxDB operator token, {"token": "..."}, set by the stack',
            secret_string_value=cdk.SecretValue.unsafe_plain_text("{}"),
        )
        self.influx_url = f"https://{self.influx.attr_endpoint}:{INFLUX_PORT}"
