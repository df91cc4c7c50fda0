"""One deletion path per AWS resource kind (providers/aws/deletion.py): the janitor has a path for
every kind the AWS kinds' listers find, deletes in one order, and each path is idempotent against moto."""

from __future__ import annotations

import ast
from pathlib import Path

import boto3
import pytest
from moto import mock_aws

from benchwright.providers.aws import janitor
from benchwright.providers.aws.deletion import delete_db_instance, delete_db_snapshot, terminate_instances
from benchwright.providers.aws.targets import kinds as kinds_package

KINDS_FOLDER = Path(kinds_package.__file__).parent


def listed_kinds(module: str | None = None) -> set[str]:
    """Every resource kind a lister yields: the first argument of each ``Resource(...)`` in the AWS
    kinds' folders (each kind lists its own: ``module``, e.g. "rds", for one kind's folder)."""
    kinds: set[str] = set()
    for path in sorted(KINDS_FOLDER.glob(f"{module}/*.py" if module else "*/*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "Resource" and node.args:
                first = node.args[0]
                assert isinstance(first, ast.Constant), f"{path.name}: Resource(...) names its kind literally"
                kinds.add(str(first.value))
    return kinds


def test_every_kind_the_janitor_finds_has_one_deletion_path() -> None:
    assert len(listed_kinds()) == 13
    assert listed_kinds() == set(janitor.KINDS)
    assert janitor.ORDER.index("rds-instance") < janitor.ORDER.index("rds-parameter-group")
    assert janitor.ORDER.index("ec2-instance") < janitor.ORDER.index("ec2-network-interface")


def test_an_unknown_kind_is_an_error_not_a_silent_false() -> None:
    with pytest.raises(ValueError, match="no deletion path for resource kind 'dynamodb-table'"):
        janitor.delete(lambda service: None, janitor.Resource("dynamodb-table", "t"))


@mock_aws
def test_each_path_is_idempotent_already_gone_counts_as_deleted(monkeypatch: pytest.MonkeyPatch) -> None:
    for key, value in {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
                       "AWS_DEFAULT_REGION": "us-east-1"}.items():  # fmt: skip
        monkeypatch.setenv(key, value)
    rds = boto3.client("rds")
    rds.create_db_instance(
        DBInstanceIdentifier="bw-gone", DBInstanceClass="db.t3.micro", Engine="postgres",
        AllocatedStorage=20, MasterUsername="bench", MasterUserPassword="not-a-secret-1",
    )  # fmt: skip
    assert delete_db_instance(rds, "bw-gone") is True
    assert delete_db_instance(rds, "bw-gone") is True  # again: already gone
    assert rds.describe_db_instances()["DBInstances"] == []
    assert delete_db_snapshot(rds, "bw-never-taken") is True
    ec2 = boto3.client("ec2")
    assert terminate_instances(ec2, []) is True  # nothing to do is done
    clients = {"rds": rds, "ec2": ec2}.__getitem__
    assert janitor.delete(clients, janitor.Resource("rds-cluster", "bw-no-such-cluster")) is True
