"""Every registered AWS target kind (providers/aws/targets/kinds/) declares what the rest asks of it:
its spec provider, the resources it leaves, each found by a janitor lister and deleted by one idempotent
path, in one order. The IAM half (its actions granted by the stack) is tests/infra/test_target_kind_iam.py."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber
from moto import mock_aws

from benchwright.providers.aws import janitor
from benchwright.providers.aws.targets import TARGETS
from benchwright.providers.aws.targets.kinds import kinds, resource_kinds
from tests.unit.test_deletion_paths import listed_kinds

KINDS = kinds()
ACTION = re.compile(r"^[a-z0-9-]+:[A-Z][A-Za-z0-9]+$")
# moto has no backend for deleting cache parameter groups: botocore's Stubber answers as AWS does
NO_MOTO = {
    "elasticache-parameter-group": (
        "elasticache",
        "delete_cache_parameter_group",
        "CacheParameterGroupNotFound",
    ),
    "memorydb-parameter-group": ("memorydb", "delete_parameter_group", "ParameterGroupNotFoundFault"),
}


def test_every_aws_provider_is_one_registered_kind() -> None:
    providers = [kind.provider for kind in KINDS.values() if kind.provider is not None]
    assert sorted(providers) == sorted(TARGETS)  # one kind per spec provider, no kind without a target
    assert len(providers) == len(set(providers))


@pytest.mark.parametrize("name", sorted(KINDS))
def test_each_kind_is_listed_deleted_and_ordered(name: str) -> None:
    kind = KINDS[name]
    for action in (*kind.iam_list, *kind.iam_delete):
        assert ACTION.match(action), action
    if not kind.resources:  # a kind that creates nothing (endpoint) asks nothing of the janitor
        assert kind.lister is None and not kind.iam_delete
        return
    assert kind.lister in janitor.LISTERS
    assert {r.name for r in kind.resources} <= listed_kinds()  # the lister yields them, by tag
    for resource in kind.resources:
        assert janitor.KINDS[resource.name] is resource.delete  # the janitor deletes through it
    assert kind.iam_list and kind.iam_delete
    services = {action.split(":")[0] for action in kind.iam_delete}
    assert services == {kind.lister}  # it deletes in the service its lister reads


def test_the_janitor_reads_its_table_and_order_from_the_kinds() -> None:
    ordered = resource_kinds()
    assert tuple(janitor.KINDS) == janitor.ORDER == tuple(r.name for r in ordered)
    assert set(janitor.KINDS) == listed_kinds()  # every kind a lister finds has a declared owner
    ranks = [r.order for r in ordered]
    assert len(set(ranks)) == len(ranks) and ranks == sorted(ranks)
    position = janitor.ORDER.index
    assert (
        position("ecs-task") < position("ec2-instance") < position("rds-instance") < position("rds-cluster")
    )
    for group in ("rds-parameter-group", "rds-cluster-parameter-group", "elasticache-parameter-group",
                  "memorydb-parameter-group", "ec2-network-interface"):  # fmt: skip
        assert position(group) > position("memorydb-cluster")  # what a target uses goes after it


@pytest.fixture
def aws(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    for key, value in {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
                       "AWS_DEFAULT_REGION": "us-east-1"}.items():  # fmt: skip
        monkeypatch.setenv(key, value)
    with mock_aws():
        made: dict[str, Any] = {}
        yield lambda service: made.setdefault(service, boto3.client(service))


@pytest.mark.parametrize("resource", [r.name for r in resource_kinds()])
def test_each_deletion_path_counts_already_gone_as_deleted(aws: Any, resource: str) -> None:
    ident = {"ec2-instance": "i-0123456789abcdef0", "ec2-network-interface": "eni-0123456789abcdef0"}
    extra = (
        {"cluster": "arn:aws:ecs:us-east-1:123456789012:cluster/bw-gone"} if resource == "ecs-task" else {}
    )
    gone = janitor.Resource(resource, ident.get(resource, "bw-gone"), extra=extra)
    if resource not in NO_MOTO:
        assert janitor.delete(aws, gone) is True
        assert janitor.delete(aws, gone) is True  # twice: still deleted, never an error
        return
    service, operation, code = NO_MOTO[resource]
    client = aws(service)
    with Stubber(client) as stub:
        stub.add_client_error(operation, service_error_code=code, http_status_code=404)
        assert janitor.delete(aws, gone) is True
        stub.assert_no_pending_responses()
