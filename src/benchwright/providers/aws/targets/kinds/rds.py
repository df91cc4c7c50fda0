"""RDS instances, their manual snapshots (snapshot_restore) and parameter groups."""

from __future__ import annotations

from typing import TYPE_CHECKING

from benchwright.providers.aws.deletion import (
    delete_db_instance,
    delete_db_snapshot,
    delete_parameter_group_later_ok,
)
from benchwright.providers.aws.pricelist import HOURS_PER_MONTH
from benchwright.providers.aws.targets.kinds.base import (
    GROUPS,
    TARGETS,
    AwsTargetKind,
    Rehearsal,
    ResourceKind,
)
from benchwright.spec.targets import RdsTarget

if TYPE_CHECKING:  # the price book prices through the kinds: only its types are needed here
    from benchwright.providers.aws.pricing import AwsPriceBook, Lines

RDS_ENGINE = {"postgres": "PostgreSQL", "mysql": "MySQL"}
RDS_VOLUME = {
    "gp2": "General Purpose",
    "gp3": "General Purpose-GP3",
    "io1": "Provisioned IOPS",
    "io2": "Provisioned IOPS-IO2",
    "magnetic": "Magnetic",
}
RDS_IOPS_FAMILY = {"io1", "io2", "gp3"}
# RDS gp3 (PostgreSQL, MySQL) includes 3,000 IOPS below 400 GB and 12,000 IOPS from 400 GB on.
RDS_GP3_FREE_IOPS = ((400, 12000.0), (0, 3000.0))


def price(book: AwsPriceBook, t: RdsTarget, hours: float, lines: Lines) -> None:
    az = "Multi-AZ" if t.multi_az else "Single-AZ"
    engine = RDS_ENGINE[t.engine]
    usage = f"{book.usage_prefix()}{'Multi-AZUsage' if t.multi_az else 'InstanceUsage'}:{t.instance_class}"
    unit = book.rate(
        "AmazonRDS",
        instanceType=t.instance_class,
        databaseEngine=engine,
        deploymentOption=az,
        usagetype=usage,
    )
    lines.add(f"rds {t.instance_class} {az}", hours * unit.usd, [unit])
    storage = t.storage
    common = {"deploymentOption": az, "databaseEngine": engine, "volumeType": RDS_VOLUME[storage.type]}
    gb_month = book.rate("AmazonRDS", productFamily="Database Storage", **common)
    lines.add(
        f"rds storage {storage.type} {storage.size_gb} GB",
        storage.size_gb * gb_month.usd * hours / HOURS_PER_MONTH,
        [gb_month],
    )
    free = next(i for gb, i in RDS_GP3_FREE_IOPS if storage.size_gb >= gb) if storage.type == "gp3" else 0
    billable = float(storage.iops or 0) - free
    if billable > 0 and storage.type in RDS_IOPS_FAMILY:
        iops_month = book.rate("AmazonRDS", productFamily="Provisioned IOPS", **common)
        lines.add(
            f"rds provisioned IOPS {storage.iops}",
            billable * iops_month.usd * hours / HOURS_PER_MONTH,
            [iops_month],
            f"{billable:g} IOPS above the {free:g} gp3 includes" if free else "",
        )


KIND = AwsTargetKind(
    name="rds",
    provider="rds",
    target="benchwright.providers.aws.targets.rds:RdsTarget",
    resources=(
        # an Aurora cluster's members are rds-instances too, deleted as members (no automated backups)
        ResourceKind(
            "rds-instance", lambda c, i, x: delete_db_instance(c("rds"), i, cluster_member="cluster" in x), TARGETS
        ),
        ResourceKind("rds-snapshot", lambda c, i, x: delete_db_snapshot(c("rds"), i), TARGETS + 2),
        ResourceKind("rds-parameter-group", lambda c, i, x: delete_parameter_group_later_ok(c("rds"), i), GROUPS),
    ),
    lister="rds",
    iam_list=(
        "rds:DescribeDBInstances", "rds:DescribeDBSnapshots", "rds:DescribeDBParameterGroups",
        "rds:ListTagsForResource",
    ),
    iam_delete=("rds:DeleteDBInstance", "rds:DeleteDBSnapshot", "rds:DeleteDBParameterGroup"),
    price=price,
    price_services=("AmazonRDS", "AmazonCloudWatch"),
    rehearsal=Rehearsal(
        ("benchwright.rehearse.services.rds", "benchwright.rehearse.services.rds_restore", "benchwright.rehearse.events"),
        "PostgreSQL or MariaDB on 127.0.0.1 per instance; snapshots and restores copy its data; reboot and failover restart it",
    ),
)  # fmt: skip
