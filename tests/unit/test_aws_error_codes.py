"""AWS errors are told apart by their code, never by their message: the codes moto's backends give
for the cases the targets and the janitor handle (already exists, not found, wrong state), also
through our own wrapper (``aws_call`` raises ``ProvisioningFailed`` from the ClientError)."""

from __future__ import annotations

from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError
from moto import mock_aws

from benchwright.errors import ProvisioningFailed, RetryableProvisioningError
from benchwright.providers.aws.common import already_exists, aws_call, error_code, in_state, is_not_found
from benchwright.providers.aws.deletion import delete_eni_later_ok


@pytest.fixture
def rds(aws_credentials: None) -> Any:
    with mock_aws():
        yield boto3.client("rds", region_name="us-east-1")


def _create(rds: Any) -> None:
    aws_call(
        "rds instance bw-x", rds.create_db_instance, DBInstanceIdentifier="bw-x", DBInstanceClass="db.t3.micro",
        Engine="postgres", MasterUsername="u", MasterUserPassword="password1", AllocatedStorage=20,
    )  # fmt: skip


def test_a_second_create_is_already_exists_through_our_wrapper(rds: Any) -> None:
    _create(rds)
    with pytest.raises(ProvisioningFailed) as caught:
        _create(rds)
    assert error_code(caught.value) == "DBInstanceAlreadyExists"
    assert already_exists(caught.value)
    assert not already_exists(RetryableProvisioningError("DBInstanceAlreadyExists (transient)"))


def test_a_message_naming_a_code_is_not_the_code(rds: Any) -> None:
    with pytest.raises(ClientError) as caught:
        rds.describe_db_instances(DBInstanceIdentifier="AlreadyExists-NotFound-State")
    assert error_code(caught.value) == "DBInstanceNotFound" and is_not_found(caught.value)
    assert not already_exists(caught.value) and not in_state(caught.value, "DBInstance")
    assert not already_exists(ProvisioningFailed("rds: AlreadyExists in a message only"))


def test_wrong_state_codes_are_recognised() -> None:
    refused = ClientError(
        {"Error": {"Code": "InvalidDBClusterSnapshotStateFault", "Message": ""}}, "DeleteDBClusterSnapshot"
    )
    assert in_state(refused, "InvalidDBSnapshot", "InvalidDBClusterSnapshot")
    assert not in_state(refused, "InvalidDBParameterGroup")


def test_deleting_a_gone_interface_counts_as_deleted(aws_credentials: None) -> None:
    with mock_aws():
        ec2 = boto3.client("ec2", region_name="us-east-1")
        assert delete_eni_later_ok(ec2, "eni-0123456789abcdef0") is True
