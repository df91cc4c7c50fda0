"""Aurora clusters (their member instances are rds-instances, owned by the rds kind), their manual
snapshots and cluster parameter groups; found by tag in the RDS service (``find``)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from benchwright.providers.aws.deletion import (
    delete_db_cluster,
    delete_db_snapshot,
    delete_parameter_group_later_ok,
)
from benchwright.providers.aws.names import RESOURCE_PREFIX
from benchwright.providers.aws.pricelist import HOURS_NOTE, HOURS_PER_MONTH
from benchwright.providers.aws.tagged import Resource, tagged
from benchwright.providers.aws.targets.kinds.aurora import events
from benchwright.providers.aws.targets.kinds.aurora.spec import AuroraTarget
from benchwright.providers.aws.targets.kinds.aurora.usage import aurora_io_lines
from benchwright.providers.aws.targets.kinds.base import (
    GROUPS,
    TARGETS,
    AwsTargetKind,
    Rehearsal,
    ResourceKind,
)

if TYPE_CHECKING:  # the price book prices through the kinds: only its types are needed here
    from benchwright.providers.aws.monthly import MonthlyPrice, MonthlyPricer
    from benchwright.providers.aws.pricing import AwsPriceBook, Lines

AURORA_ENGINE = {"postgres": "Aurora PostgreSQL", "mysql": "Aurora MySQL"}
AURORA_MIN_GB = 10.0  # an Aurora cluster volume starts at 10 GB and grows with the data


def price(book: AwsPriceBook, t: AuroraTarget, hours: float, lines: Lines) -> None:
    """Instances at the cluster's storage configuration (I/O-Optimized instances and ACUs cost more:
    the Price List has two rows per class, told apart by usage type) and the cluster volume, at
    its 10 GB minimum. Standard's I/O requests are usage (usage.py)."""
    engine = AURORA_ENGINE[t.engine]
    optimized = t.storage_type == "aurora-iopt1"
    mode = "I/O-Optimized" if optimized else "Standard"
    if t.instance_class == "db.serverless" and t.serverless_v2 is not None:
        acu = t.serverless_v2.max_acu  # an upper bound: the cluster may run below its maximum
        unit = book.rate(
            "AmazonRDS",
            databaseEngine=engine,
            usagetype=f"{book.usage_prefix()}Aurora:ServerlessV2{'IOOptimized' if optimized else ''}Usage",
        )
        lines.add(
            f"aurora serverless v2 {t.instances} x {acu:g} ACU (max, {mode})",
            hours * t.instances * acu * unit.usd,
            [unit],
        )
    else:
        cls = t.instance_class
        unit = book.rate(
            "AmazonRDS",
            instanceType=cls,
            databaseEngine=engine,
            deploymentOption="Single-AZ",
            usagetype=f"{book.usage_prefix()}InstanceUsage{'IOOptimized' if optimized else ''}:{cls}",
        )
        lines.add(f"aurora {t.instances} x {cls} ({mode})", hours * t.instances * unit.usd, [unit])
    gb_month = book.rate(
        "AmazonRDS",
        productFamily="Database Storage",
        usagetype=f"{book.usage_prefix()}Aurora:{'IO-Optimized' if optimized else ''}StorageUsage",
    )
    lines.add(
        f"aurora storage {AURORA_MIN_GB:g} GB ({mode})",
        AURORA_MIN_GB * gb_month.usd * hours / HOURS_PER_MONTH,
        [gb_month],
        "the cluster volume's 10 GB minimum (it grows with the data)",
    )


# prices and resources ---------------------------------------------------------------
def describe(t: AuroraTarget) -> str:
    return f"aurora {t.instances} x {t.instance_class} ({t.storage_type})"


def monthly(pricer: MonthlyPricer, t: AuroraTarget, out: MonthlyPrice, _io: float | None) -> None:
    engine, optimized = AURORA_ENGINE[t.engine], t.storage_type == "aurora-iopt1"
    p, mode = pricer.prefix(), "I/O-Optimized" if optimized else "Standard"
    if t.instance_class == "db.serverless":
        out.unpriced("server", "aurora serverless v2", "not priced: ACUs follow the load")
    else:
        cls = t.instance_class

        def instances() -> tuple[float, str]:
            usd, src = pricer.row(
                "AmazonRDS",
                instanceType=cls,
                databaseEngine=engine,
                deploymentOption="Single-AZ",
                usagetype=f"{p}InstanceUsage{'IOOptimized' if optimized else ''}:{cls}",
            )
            return t.instances * usd * HOURS_PER_MONTH, f"{src}; {t.instances} x {HOURS_NOTE}"

        pricer.line(out, "server", f"aurora {t.instances} x {cls} ({mode})", instances)
    out.unpriced("disk", "aurora cluster volume", "not priced: billed for the data it holds")
    if not optimized:
        out.unpriced("io", "aurora I/O requests", "not priced: Standard bills each request")


def usage(book: AwsPriceBook, spec: Any, cell: Any, lines: Lines) -> None:
    """Aurora Standard bills each I/O request (I/O-Optimized has them in its prices)."""
    t = spec.target
    assert isinstance(t, AuroraTarget)  # its kind's own spec
    if t.storage_type == "aurora":
        aurora_io_lines(book, spec, cell, lines)


def zones(t: AuroraTarget) -> list[str]:
    return [t.availability_zone] if t.availability_zone else []


def find(clients: Any) -> Iterator[Resource]:
    """Clusters, their manual snapshots and cluster parameter groups (members: the rds kind's)."""
    rds = clients("rds")
    for cluster, tags in tagged(
        rds, "describe_db_clusters", "DBClusters", "DBClusterIdentifier", "DBClusterArn", status="Status"
    ):
        yield Resource("rds-cluster", cluster["DBClusterIdentifier"], tags)
    for snap, tags in tagged(
        rds,
        "describe_db_cluster_snapshots",
        "DBClusterSnapshots",
        "DBClusterSnapshotIdentifier",
        "DBClusterSnapshotArn",
        RESOURCE_PREFIX,
        "Status",
        SnapshotType="manual",
    ):
        yield Resource("rds-cluster-snapshot", snap["DBClusterSnapshotIdentifier"], tags)
    for group, tags in tagged(
        rds,
        "describe_db_cluster_parameter_groups",
        "DBClusterParameterGroups",
        "DBClusterParameterGroupName",
        "DBClusterParameterGroupArn",
        RESOURCE_PREFIX,
    ):
        yield Resource("rds-cluster-parameter-group", group["DBClusterParameterGroupName"], tags)


KIND = AwsTargetKind(
    name="aurora",
    provider="aurora",
    target="benchwright.providers.aws.targets.kinds.aurora.target:AuroraTarget",
    resources=(
        ResourceKind("rds-cluster", lambda c, i, x: delete_db_cluster(c("rds"), i), TARGETS + 1),
        ResourceKind(
            "rds-cluster-snapshot", lambda c, i, x: delete_db_snapshot(c("rds"), i, cluster=True), TARGETS + 3
        ),
        ResourceKind(
            "rds-cluster-parameter-group",
            lambda c, i, x: delete_parameter_group_later_ok(c("rds"), i, cluster=True),
            GROUPS + 1,
        ),
    ),
    lister="rds",
    iam_list=(
        "rds:DescribeDBClusters", "rds:DescribeDBClusterSnapshots", "rds:DescribeDBClusterParameterGroups",
        "rds:DescribeDBInstances", "rds:ListTagsForResource",
    ),
    iam_delete=(
        "rds:DeleteDBCluster", "rds:DeleteDBClusterSnapshot", "rds:DeleteDBClusterParameterGroup",
        "rds:DeleteDBInstance",
    ),
    iam_describe=(
        "rds:DescribeDBClusters", "rds:DescribeDBInstances", "rds:DescribeDBClusterParameterGroups",
        "rds:DescribeDBClusterSnapshots", "rds:ListTagsForResource",
    ),
    iam_create=(  # the cluster, its parameter group and its member instances
        "rds:CreateDBCluster", "rds:CreateDBClusterParameterGroup", "rds:CreateDBInstance",
        "rds:AddTagsToResource",
    ),
    iam_modify=("rds:ModifyDBClusterParameterGroup",),
    iam_events=("rds:FailoverDBCluster", "rds:RebootDBInstance", "rds:ModifyDBInstance"),
    # snapshot_restore and pitr of a cluster (targets/operations.py: a restored cluster gets a writer
    # instance), and deleting what they made
    iam_operations=(
        "rds:CreateDBClusterSnapshot", "rds:RestoreDBClusterFromSnapshot", "rds:RestoreDBClusterToPointInTime",
        "rds:CreateDBInstance", "rds:AddTagsToResource",
    ),
    iam_operations_delete=("rds:DeleteDBCluster", "rds:DeleteDBClusterSnapshot", "rds:DeleteDBInstance"),
    price=price,
    price_services=("AmazonRDS", "AmazonCloudWatch"),
    rehearsal=Rehearsal(
        ("benchwright.rehearse.services.rds", "benchwright.rehearse.services.rds_restore", "benchwright.rehearse.events"),
        "PostgreSQL or MariaDB on 127.0.0.1 per cluster member; snapshots and restores copy its data; reboot and failover restart it",
    ),
    # prices and resources
    monthly=monthly,
    describe=describe,
    usage=usage,
    zones=zones,
    find=find,
    spec=AuroraTarget,  # its spec model, which declares its timings and experiments
    events=(  # the API call of each event it allows
        ("failover", events.aurora_failover), ("reboot", events.aurora_reboot), ("scale", events.aurora_scale),
    ),
)  # fmt: skip
