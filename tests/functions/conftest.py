"""Fixtures shared by this suite's modules: the API Lambda's backend in moto (``cloud``,
tests/api_events.py) and the account the AWS target tests create targets in (``aws``; a module that
needs another account defines its own ``aws``, which pytest prefers). The moto account of the
workflow tests (``aws_world``, ``world``) comes from the tests.aws_world plugin."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from benchwright.api.backend import CloudBackend
from benchwright.providers.aws.common import Clients
from benchwright.providers.aws.config import AwsSettings
from tests.api_events import api_backend
from tests.aws_world import ENV, REGION


@pytest.fixture
def cloud(aws_credentials: None) -> Iterator[CloudBackend]:
    """Pass-through state machines and the results bucket, as the API's backend, for one test."""
    with api_backend() as backend:
        yield backend


@pytest.fixture(scope="module")
def aws() -> Iterator[tuple[AwsSettings, Clients]]:
    """One moto account per module for the target tests (test_aws_targets, test_aws_events; tests use
    distinct run ids): a VPC with a subnet per AZ, a security group, an AMI."""
    from moto import mock_aws

    mp = pytest.MonkeyPatch()
    for k, v in ENV.items():
        mp.setenv(k, v)
    with mock_aws():
        import boto3

        ec2 = boto3.client("ec2", region_name=REGION)
        vpc = ec2.create_vpc(CidrBlock="10.50.0.0/16")["Vpc"]["VpcId"]
        subnets = [
            ec2.create_subnet(VpcId=vpc, CidrBlock=f"10.50.{i}.0/24", AvailabilityZone=f"{REGION}{az}")[
                "Subnet"
            ]["SubnetId"]
            for i, az in enumerate("abc")
        ]
        sg = ec2.create_security_group(GroupName="t", Description="t", VpcId=vpc)["GroupId"]
        ami = ec2.describe_images(Owners=["amazon"])["Images"][0]["ImageId"]
        settings = AwsSettings(
            region=REGION, subnet_ids=subnets, security_group_ids=[sg], runner_ami=ami, owner="tests"
        )
        yield settings, Clients(settings)
    mp.undo()
