"""MemoryDB clusters and the parameter groups made for them."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from benchwright.providers.aws.deletion import gone_ok
from benchwright.providers.aws.names import RESOURCE_PREFIX
from benchwright.providers.aws.pricelist import HOURS_NOTE, HOURS_PER_MONTH
from benchwright.providers.aws.tagged import Resource, kv, ours
from benchwright.providers.aws.targets.cache_params import MEMORYDB, delete_group_later_ok
from benchwright.providers.aws.targets.kinds.base import (
    GROUPS,
    TARGETS,
    AwsTargetKind,
    Rehearsal,
    ResourceKind,
)
from benchwright.providers.aws.targets.kinds.memorydb import events
from benchwright.providers.aws.targets.kinds.memorydb.spec import MemoryDbTarget
from benchwright.providers.aws.targets.kinds.memorydb.usage import memorydb_written_lines

if TYPE_CHECKING:  # the price book prices through the kinds: only its types are needed here
    from benchwright.providers.aws.monthly import MonthlyPrice, MonthlyPricer
    from benchwright.providers.aws.pricing import AwsPriceBook, Lines


def price(book: AwsPriceBook, t: MemoryDbTarget, hours: float, lines: Lines) -> None:
    nodes = t.shards * (t.replicas_per_shard + 1)
    unit = book.rate("AmazonMemoryDB", instanceType=t.node_type)
    lines.add(f"memorydb {nodes} x {t.node_type}", hours * nodes * unit.usd, [unit])


# prices and resources ---------------------------------------------------------------
def describe(t: MemoryDbTarget) -> str:
    return f"memorydb {t.shards * (t.replicas_per_shard + 1)} x {t.node_type}"


def monthly(pricer: MonthlyPricer, t: MemoryDbTarget, out: MonthlyPrice, _io: float | None) -> None:
    nodes, attrs = t.shards * (t.replicas_per_shard + 1), {"instanceType": t.node_type}

    def hourly() -> tuple[float, str]:
        usd, src = pricer.row("AmazonMemoryDB", **attrs)
        return nodes * usd * HOURS_PER_MONTH, f"{src}; {nodes} x {HOURS_NOTE}"

    pricer.line(out, "server", f"{nodes} x {t.node_type}", hourly)
    out.notes.append("data written: billed per GB written, usage not in this monthly price")


def usage(book: AwsPriceBook, spec: Any, cell: Any, lines: Lines) -> None:
    """MemoryDB bills each GB written."""
    t = spec.target
    assert isinstance(t, MemoryDbTarget)  # its kind's own spec
    memorydb_written_lines(book, t, spec, cell, lines)


def find(clients: Any) -> Iterator[Resource]:
    """Clusters and the parameter groups made for them (the tagging API misses MemoryDB)."""
    client = clients("memorydb")
    token = None
    while True:
        page = client.describe_clusters(**({"NextToken": token} if token else {}))
        for cluster in page.get("Clusters", []):
            if str(cluster.get("Status", "")).lower() == "deleting":
                continue
            tags = kv(client.list_tags(ResourceArn=cluster["ARN"]).get("TagList"))
            if ours(tags):
                yield Resource("memorydb-cluster", cluster["Name"], tags)
        token = page.get("NextToken")
        if not token:
            break
    yield from _parameter_groups(client)


def _parameter_groups(client: Any) -> Iterator[Resource]:
    token = None
    while True:
        page = client.describe_parameter_groups(**({"NextToken": token} if token else {}))
        for group in page.get("ParameterGroups", []):
            if not group["Name"].startswith(RESOURCE_PREFIX) or not group.get("ARN"):
                continue  # the service's default.* groups and everyone else's
            tags = kv(client.list_tags(ResourceArn=group["ARN"]).get("TagList"))
            if ours(tags):
                yield Resource("memorydb-parameter-group", group["Name"], tags)
        token = page.get("NextToken")
        if not token:
            return


KIND = AwsTargetKind(
    name="memorydb",
    provider="memorydb",
    target="benchwright.providers.aws.targets.kinds.memorydb.target:MemoryDbTarget",
    resources=(
        ResourceKind(
            "memorydb-cluster",
            lambda c, i, x: gone_ok(c("memorydb").delete_cluster, ClusterName=i),
            TARGETS + 20,
        ),
        ResourceKind(
            "memorydb-parameter-group",
            lambda c, i, x: delete_group_later_ok(MEMORYDB, c("memorydb"), i),
            GROUPS + 20,
        ),
    ),
    lister="memorydb",
    iam_list=("memorydb:DescribeClusters", "memorydb:ListTags", "memorydb:DescribeParameterGroups"),
    iam_delete=("memorydb:DeleteCluster", "memorydb:DeleteParameterGroup"),
    iam_describe=("memorydb:DescribeClusters", "memorydb:ListTags", "memorydb:DescribeParameterGroups"),
    iam_create=("memorydb:CreateCluster", "memorydb:CreateParameterGroup", "memorydb:TagResource"),
    iam_modify=("memorydb:UpdateParameterGroup",),  # targets/cache_params.py
    iam_events=("memorydb:FailoverShard", "memorydb:UpdateCluster"),
    price=price,
    price_services=("AmazonMemoryDB",),
    rehearsal=Rehearsal(
        ("benchwright.rehearse.services.cache",),
        "Redis on 127.0.0.1 per cluster (TLS unless the cluster turns it off)",
    ),
    # prices and resources
    monthly=monthly,
    describe=describe,
    usage=usage,
    zones=lambda t: [],  # a MemoryDB cluster's nodes are placed by AWS: no AZ in the spec
    find=find,
    spec=MemoryDbTarget,  # its spec model, which declares its timings and experiments
    events=(
        ("failover", events.memorydb_failover),
        ("scale", events.memorydb_scale),
    ),  # the API call of each event it allows
)
