"""A cache spec's ``settings`` become a parameter group the cluster is created with (ElastiCache,
MemoryDB): made first, each setting in a call of its own (a refusal names the setting and nothing else
is created), tagged with the run, deleted after the cluster or swept by the janitor. Against moto with
the calls it lacks (rehearse/services/cache_api.py, installed by tests/conftest.py)."""

from __future__ import annotations

from typing import Any

import pytest

from benchwright.errors import ProvisioningFailed
from benchwright.providers.aws.janitor import delete_run, leftovers
from benchwright.providers.aws.names import RUN_ID_TAG
from benchwright.providers.aws.targets.cache_params import (
    ELASTICACHE,
    delete_group_later_ok,
    elasticache_family,
    memorydb_family,
)
from tests.aws_world import REGION
from tests.functions.test_aws_targets import target

CACHE = {
    "provider": "elasticache",
    "engine": "redis",
    "engine_version": "7.1",
    "node_type": "cache.r7g.large",
    "replicas": 1,
    "availability_zone": f"{REGION}a",
    "settings": {"maxmemory-policy": "noeviction", "activedefrag": True, "maxmemory-samples": 10},
}
MEMORYDB = {
    "provider": "memorydb",
    "engine": "redis",
    "engine_version": "7.1",
    "node_type": "db.r7g.large",
    "replicas_per_shard": 0,
    "settings": {"maxmemory-policy": "allkeys-lru"},
}


@pytest.mark.parametrize(
    ("engine", "version", "family"),
    [("redis", "7.1", "redis7"), ("redis", "7.0.7", "redis7"), ("redis", "6.2", "redis6.x"),
     ("redis", "5.0.6", "redis5.0"), ("valkey", "8.0", "valkey8"), ("valkey", "7.2", "valkey7")],
)  # fmt: skip
def test_elasticache_family_follows_the_engine_version(engine: str, version: str, family: str) -> None:
    assert elasticache_family(engine, version) == family


def test_memorydb_family_follows_the_engine_version() -> None:
    assert memorydb_family("redis", "7.1") == "memorydb_redis7"
    assert memorydb_family("valkey", "7.2") == "memorydb_valkey7"
    assert memorydb_family("redis", "6.2") == "memorydb_redis6"


def _tags(client: Any, arn: str) -> dict[str, str]:
    return {t["Key"]: t["Value"] for t in client.list_tags_for_resource(ResourceName=arn)["TagList"]}


def test_elasticache_settings_are_a_tagged_parameter_group_the_group_is_created_with(aws: Any) -> None:
    t = target(aws, CACHE, "cache-params-1")
    handle = t.create()
    client = aws[1]("elasticache")
    name = handle["parameter_group"]
    assert name == f"{t.name}-params"
    (group,) = client.describe_cache_parameter_groups(CacheParameterGroupName=name)["CacheParameterGroups"]
    assert group["CacheParameterGroupFamily"] == "redis7"
    assert _tags(client, group["ARN"])[RUN_ID_TAG] == "cache-params-1"
    values = {p["ParameterName"]: p["ParameterValue"] for p in client.describe_cache_parameters(
        CacheParameterGroupName=name)["Parameters"]}  # fmt: skip
    assert values == {"maxmemory-policy": "noeviction", "activedefrag": "yes", "maxmemory-samples": "10"}
    # the replication group was created with it (moto keeps what the request said)
    from moto.elasticache.models import elasticache_backends

    backend = elasticache_backends["123456789012"][REGION]
    assert backend.replication_groups[t.name].cache_parameter_group_name == name
    kinds = sorted(r.kind for r in leftovers(aws[1], "cache-params-1"))
    assert kinds == ["elasticache-parameter-group", "elasticache-replication-group"]
    t.delete()
    assert client.describe_cache_parameter_groups()["CacheParameterGroups"] == [] or all(
        g["CacheParameterGroupName"] != name
        for g in client.describe_cache_parameter_groups()["CacheParameterGroups"]
    )
    assert leftovers(aws[1], "cache-params-1") == []


def test_a_refused_setting_fails_before_the_cluster_exists_naming_the_setting(aws: Any) -> None:
    # validate refuses this value (spec.server_settings); the provider still relies on the service's
    # answer, so the spec is built past validation to show that path
    t = target(aws, CACHE, "cache-params-2")
    t.spec = t.spec.model_copy(update={"settings": {"maxmemory-policy": "evict-sometimes"}})
    with pytest.raises(ProvisioningFailed) as failed:
        t.create()
    message = str(failed.value)
    assert "target.settings.maxmemory-policy" in message and "InvalidParameterValue" in message, message
    assert "evict-sometimes" in message and "noeviction" in message  # the service's allowed values
    client = aws[1]("elasticache")
    groups = [g["ReplicationGroupId"] for g in client.describe_replication_groups()["ReplicationGroups"]]
    assert t.name not in groups  # nothing else was created
    assert leftovers(aws[1], "cache-params-2") == []  # and the group itself was deleted


def test_a_group_in_use_is_left_to_the_janitor_which_deletes_it_after_the_cluster(aws: Any) -> None:
    t = target(aws, CACHE, "cache-params-3")
    handle = t.create()
    client = aws[1]("elasticache")
    from moto.elasticache.models import elasticache_backends

    elasticache_backends["123456789012"][REGION].replication_groups[t.name].status = "available"
    # while the cluster uses it the service refuses (InvalidCacheParameterGroupState): not yet deleted
    assert delete_group_later_ok(ELASTICACHE, client, handle["parameter_group"]) is False
    assert delete_run(aws[1], "cache-params-3") == []  # cluster first, then its group
    assert delete_group_later_ok(ELASTICACHE, client, handle["parameter_group"]) is True  # already gone


def test_memorydb_settings_are_a_parameter_group_and_a_refusal_names_the_setting(aws: Any) -> None:
    t = target(aws, MEMORYDB, "mdb-params-1")
    handle = t.create()
    client = aws[1]("memorydb")
    name = handle["parameter_group"]
    (group,) = client.describe_parameter_groups(ParameterGroupName=name)["ParameterGroups"]
    assert group["Family"] == "memorydb_redis7"
    tags = {x["Key"]: x["Value"] for x in client.list_tags(ResourceArn=group["ARN"])["TagList"]}
    assert tags[RUN_ID_TAG] == "mdb-params-1"
    (param,) = client.describe_parameters(ParameterGroupName=name)["Parameters"]
    assert (param["Name"], param["Value"]) == ("maxmemory-policy", "allkeys-lru")
    assert client.describe_clusters(ClusterName=t.name)["Clusters"][0]["ParameterGroupName"] == name
    assert t.status() == "ready"  # (the probe is stubbed) and the primary's zone is known, for same-az
    assert t.handle["availability_zone"].startswith(REGION), t.handle
    assert sorted(r.kind for r in leftovers(aws[1], "mdb-params-1")) == [
        "memorydb-cluster",
        "memorydb-parameter-group",
    ]
    t.delete()
    assert leftovers(aws[1], "mdb-params-1") == []

    refused = target(aws, {**MEMORYDB, "settings": {"appendonly": "yes"}}, "mdb-params-2")
    with pytest.raises(ProvisioningFailed, match=r"target\.settings\.appendonly"):
        refused.create()  # MemoryDB keeps its data in its log: no persistence parameters
    assert client.describe_clusters()["Clusters"] == [] or all(
        c["Name"] != refused.name for c in client.describe_clusters()["Clusters"]
    )
    assert leftovers(aws[1], "mdb-params-2") == []


def test_a_cluster_cannot_be_created_with_a_group_that_does_not_exist(aws: Any) -> None:
    from botocore.exceptions import ClientError

    with pytest.raises(ClientError, match="CacheParameterGroupNotFound"):
        aws[1]("elasticache").create_replication_group(
            ReplicationGroupId="bw-nogroup",
            ReplicationGroupDescription="x",
            CacheParameterGroupName="bw-none",
        )
    with pytest.raises(ClientError, match="ParameterGroupNotFoundFault"):
        aws[1]("memorydb").create_cluster(
            ClusterName="bw-nogroup",
            NodeType="db.r7g.large",
            ACLName="open-access",
            ParameterGroupName="bw-none",
        )


def test_failover_calls_answer_in_the_service_shape(aws: Any) -> None:
    """TestFailover / RebootCacheCluster / FailoverShard through moto (boto3 parses each answer)."""
    cache = target(aws, {**CACHE, "settings": {}}, "cache-failover")
    cache.create()
    from moto.elasticache.models import elasticache_backends

    elasticache_backends["123456789012"][REGION].replication_groups[cache.name].status = "available"
    assert cache.trigger("failover") == f"TestFailover {cache.name} node group 0001"
    assert cache.trigger("reboot") == f"RebootCacheCluster {cache.name}-001"
    cache.delete()
    mdb = target(aws, {**MEMORYDB, "settings": {}}, "mdb-failover")
    mdb.create()
    assert mdb.trigger("failover") == f"FailoverShard {mdb.name} shard 0001"
    mdb.delete()
