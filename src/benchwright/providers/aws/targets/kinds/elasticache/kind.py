"""ElastiCache replication groups and the cache parameter groups made for them."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from benchwright.providers.aws.common import paginate
from benchwright.providers.aws.deletion import gone_ok
from benchwright.providers.aws.names import RESOURCE_PREFIX
from benchwright.providers.aws.pricelist import HOURS_NOTE, HOURS_PER_MONTH
from benchwright.providers.aws.tagged import Resource, kv, ours
from benchwright.providers.aws.targets.cache_params import ELASTICACHE, delete_group_later_ok
from benchwright.providers.aws.targets.kinds.base import (
    GROUPS,
    TARGETS,
    AwsTargetKind,
    Rehearsal,
    ResourceKind,
)
from benchwright.providers.aws.targets.kinds.elasticache import events
from benchwright.providers.aws.targets.kinds.elasticache.spec import ElastiCacheTarget

if TYPE_CHECKING:  # the price book prices through the kinds: only its types are needed here
    from benchwright.providers.aws.monthly import MonthlyPrice, MonthlyPricer
    from benchwright.providers.aws.pricing import AwsPriceBook, Lines


def price(book: AwsPriceBook, t: ElastiCacheTarget, hours: float, lines: Lines) -> None:
    nodes = t.shards * (t.replicas + 1)
    engine = "Valkey" if t.cache_engine == "valkey" else "Redis"
    unit = book.rate("AmazonElastiCache", instanceType=t.node_type, cacheEngine=engine)
    lines.add(f"elasticache {nodes} x {t.node_type}", hours * nodes * unit.usd, [unit])


# prices and resources ---------------------------------------------------------------
def describe(t: ElastiCacheTarget) -> str:
    return f"elasticache {t.shards * (t.replicas + 1)} x {t.node_type}"


def monthly(pricer: MonthlyPricer, t: ElastiCacheTarget, out: MonthlyPrice, _io: float | None) -> None:
    nodes, attrs = (
        t.shards * (t.replicas + 1),
        {"instanceType": t.node_type, "cacheEngine": "Valkey" if t.cache_engine == "valkey" else "Redis"},
    )

    def hourly() -> tuple[float, str]:
        usd, src = pricer.row("AmazonElastiCache", **attrs)
        return nodes * usd * HOURS_PER_MONTH, f"{src}; {nodes} x {HOURS_NOTE}"

    pricer.line(out, "server", f"{nodes} x {t.node_type}", hourly)


def zones(t: ElastiCacheTarget) -> list[str]:
    return [t.availability_zone]


def find(clients: Any) -> Iterator[Resource]:
    """Replication groups and the parameter groups made for them, by their run tag."""
    client = clients("elasticache")
    for group in paginate(client, "describe_replication_groups", "ReplicationGroups"):
        if group.get("Status") == "deleting" or not group.get("ARN"):
            continue
        tags = kv(client.list_tags_for_resource(ResourceName=group["ARN"]).get("TagList"))
        if ours(tags):
            yield Resource("elasticache-replication-group", group["ReplicationGroupId"], tags)
    for params in paginate(client, "describe_cache_parameter_groups", "CacheParameterGroups"):
        if not params["CacheParameterGroupName"].startswith(RESOURCE_PREFIX) or not params.get("ARN"):
            continue  # the service's default.* groups and everyone else's
        tags = kv(client.list_tags_for_resource(ResourceName=params["ARN"]).get("TagList"))
        if ours(tags):
            yield Resource("elasticache-parameter-group", params["CacheParameterGroupName"], tags)


KIND = AwsTargetKind(
    name="elasticache",
    provider="elasticache",
    target="benchwright.providers.aws.targets.kinds.elasticache.target:ElastiCacheTarget",
    resources=(
        ResourceKind(
            "elasticache-replication-group",
            lambda c, i, x: gone_ok(c("elasticache").delete_replication_group, ReplicationGroupId=i),
            TARGETS + 10,
        ),
        ResourceKind(
            "elasticache-parameter-group",
            lambda c, i, x: delete_group_later_ok(ELASTICACHE, c("elasticache"), i),
            GROUPS + 10,
        ),
    ),
    lister="elasticache",
    iam_list=(
        "elasticache:DescribeReplicationGroups", "elasticache:DescribeCacheParameterGroups",
        "elasticache:ListTagsForResource",
    ),
    iam_delete=("elasticache:DeleteReplicationGroup", "elasticache:DeleteCacheParameterGroup"),
    # target.py (and the AZ ids of its nodes); DescribeCacheClusters is granted beside the replication
    # groups' read, though no call of today's code needs it
    iam_describe=(
        "elasticache:DescribeReplicationGroups", "elasticache:DescribeCacheClusters",
        "elasticache:ListTagsForResource", "elasticache:DescribeCacheParameterGroups",
        "ec2:DescribeAvailabilityZones",
    ),
    iam_create=(
        "elasticache:CreateReplicationGroup", "elasticache:CreateCacheParameterGroup",
        "elasticache:AddTagsToResource",
    ),
    iam_modify=("elasticache:ModifyCacheParameterGroup",),  # targets/cache_params.py
    iam_events=(
        "elasticache:TestFailover", "elasticache:RebootCacheCluster", "elasticache:ModifyReplicationGroup",
    ),
    price=price,
    price_services=("AmazonElastiCache",),
    rehearsal=Rehearsal(
        ("benchwright.rehearse.services.cache",),
        "Redis on 127.0.0.1 per replication group (TLS when in-transit encryption is on)",
    ),
    # prices and resources
    monthly=monthly,
    describe=describe,
    zones=zones,
    find=find,
    spec=ElastiCacheTarget,  # its spec model, which declares its timings and experiments
    events=(  # the API call of each event it allows
        ("failover", events.elasticache_failover), ("reboot", events.elasticache_reboot),
        ("scale", events.elasticache_scale),
    ),
)  # fmt: skip
