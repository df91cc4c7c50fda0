"""RDS instances, their manual snapshots (snapshot_restore) and parameter groups."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from benchwright.providers.aws.deletion import (
    delete_db_instance,
    delete_db_snapshot,
    delete_parameter_group_later_ok,
)
from benchwright.providers.aws.names import RESOURCE_PREFIX
from benchwright.providers.aws.pricelist import HOURS_NOTE, HOURS_PER_MONTH, PriceNotFound
from benchwright.providers.aws.tagged import Resource, tagged
from benchwright.providers.aws.targets.kinds.base import (
    GROUPS,
    TARGETS,
    AwsTargetKind,
    Rehearsal,
    ResourceKind,
)
from benchwright.providers.aws.targets.kinds.rds import events
from benchwright.providers.aws.targets.kinds.rds.magnetic_io import magnetic_io_lines
from benchwright.providers.aws.targets.kinds.rds.spec import RdsTarget

if TYPE_CHECKING:  # the price book prices through the kinds: only its types are needed here
    from benchwright.providers.aws.monthly import MonthlyPrice, MonthlyPricer
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


# prices and resources ---------------------------------------------------------------
# RDS gp3 includes 125 MiB/s below 400 GB and 500 MiB/s from 400 GB on
RDS_GP3_FREE_MIBPS = ((400, 500.0), (0, 125.0))
MULTI_AZ_DOC = (
    "RDS bills a Multi-AZ standby's instance hours and storage like the primary's "
    "(https://docs.aws.amazon.com/AmazonRDS/latest/UserGuide/USER_OnDemandDBInstances.html)"
)


def describe(t: RdsTarget) -> str:
    s = t.storage
    iops = f" {s.iops} IOPS" if s.iops else ""
    return f"{t.instance_class} {s.type} {s.size_gb} GB{iops}" + (" Multi-AZ" if t.multi_az else "")


def rate(pricer: MonthlyPricer, multi_az: bool, **attributes: str) -> tuple[float, str]:
    """An RDS storage/IOPS row at the deployment option; a Multi-AZ price the list lacks is
    twice the Single-AZ row, saying so."""
    az = "Multi-AZ" if multi_az else "Single-AZ"
    try:
        return pricer.row("AmazonRDS", deploymentOption=az, **attributes)
    except PriceNotFound:
        if not multi_az:
            raise
    try:
        usd, source = pricer.row("AmazonRDS", deploymentOption="Single-AZ", **attributes)
    except PriceNotFound as exc:
        raise PriceNotFound(f"no Multi-AZ row, nor a Single-AZ one: {exc}") from None
    return 2 * usd, f"2 x {source} (the list has no Multi-AZ row; {MULTI_AZ_DOC})"


def monthly(pricer: MonthlyPricer, t: RdsTarget, out: MonthlyPrice, io_per_s: float | None) -> None:
    engine, az, cls = RDS_ENGINE[t.engine], "Multi-AZ" if t.multi_az else "Single-AZ", t.instance_class
    p = pricer.prefix()

    def instance() -> tuple[float, str]:
        usage = "Multi-AZUsage" if t.multi_az else "InstanceUsage"
        attrs = {"instanceType": cls, "databaseEngine": engine}
        try:
            usd, src = pricer.row("AmazonRDS", deploymentOption=az, usagetype=f"{p}{usage}:{cls}", **attrs)
        except PriceNotFound:
            if not t.multi_az:
                raise
            usd, src = pricer.row(
                "AmazonRDS", deploymentOption="Single-AZ", usagetype=f"{p}InstanceUsage:{cls}", **attrs
            )
            usd, src = 2 * usd, f"2 x {src} (the list has no Multi-AZ row; {MULTI_AZ_DOC})"
        return usd * HOURS_PER_MONTH, f"{src}; x {HOURS_NOTE}"

    pricer.line(out, "server", f"rds {cls} {az}", instance)
    s = t.storage
    common = {"databaseEngine": engine, "volumeType": RDS_VOLUME[s.type]}

    def storage() -> tuple[float, str]:
        usd, src = rate(pricer, t.multi_az, productFamily="Database Storage", **common)
        return s.size_gb * usd, f"{src}; {s.size_gb} GB-month"

    pricer.line(out, "disk", f"storage {s.type} {s.size_gb} GB", storage)
    free_iops = next(i for gb, i in RDS_GP3_FREE_IOPS if s.size_gb >= gb) if s.type == "gp3" else 0.0
    billable = float(s.iops or 0) - free_iops
    if billable > 0 and s.type in RDS_IOPS_FAMILY:

        def iops() -> tuple[float, str]:
            usd, src = rate(pricer, t.multi_az, productFamily="Provisioned IOPS", **common)
            above = f" above the {free_iops:g} gp3 includes" if free_iops else ""
            return billable * usd, f"{src}; {billable:g} IOPS-month{above}"

        pricer.line(out, "io", f"provisioned IOPS {billable:g}", iops)
    free_mibps = next(m for gb, m in RDS_GP3_FREE_MIBPS if s.size_gb >= gb)
    extra = float(s.throughput_mbps or 0) - free_mibps
    if s.type == "gp3" and extra > 0:

        def throughput() -> tuple[float, str]:
            usd, src = rate(pricer, t.multi_az, productFamily="Provisioned Throughput", **common)
            return extra * usd, f"{src}; {extra:g} MiB/s-month above the {free_mibps:g} gp3 includes"

        pricer.line(out, "io", f"gp3 throughput {extra:g} MiB/s", throughput)
    if s.type == "magnetic":
        pricer.io_requests(out, "AmazonRDS", f"{p}RDS:StorageIOUsage", io_per_s, t.multi_az)
    _backups(t, out)


def _backups(t: RdsTarget, out: MonthlyPrice) -> None:
    if t.backup_retention_days == 0:
        out.notes.append("backups: off (backup_retention_days 0), nothing billed")
        return
    out.notes.append(
        f"backups: {t.backup_retention_days} days kept; backup storage up to the provisioned "
        f"{t.storage.size_gb} GB is free, beyond it not priced (it depends on how much the data changes)"
    )


def io_requests(book: AwsPriceBook, spec: Any, cell: Any, duration_s: float, lines: Lines) -> None:
    """Magnetic storage bills each I/O request (providers/aws/magnetic_io.py prices them)."""
    t = spec.target
    assert isinstance(t, RdsTarget)  # its kind's own spec
    if t.storage.type == "magnetic":
        magnetic_io_lines(book, t, cell, duration_s, lines)


def zones(t: RdsTarget) -> list[str]:
    return [t.availability_zone] if t.availability_zone else []


def find(clients: Any) -> Iterator[Resource]:
    """Instances (an Aurora cluster's members marked as such), manual snapshots, parameter groups."""
    rds = clients("rds")
    for db, tags in tagged(
        rds,
        "describe_db_instances",
        "DBInstances",
        "DBInstanceIdentifier",
        "DBInstanceArn",
        status="DBInstanceStatus",
    ):
        member = {"cluster": db["DBClusterIdentifier"]} if db.get("DBClusterIdentifier") else {}
        yield Resource("rds-instance", db["DBInstanceIdentifier"], tags, member)
    for snap, tags in tagged(
        rds,
        "describe_db_snapshots",
        "DBSnapshots",
        "DBSnapshotIdentifier",
        "DBSnapshotArn",
        RESOURCE_PREFIX,
        "Status",
        SnapshotType="manual",
    ):
        yield Resource("rds-snapshot", snap["DBSnapshotIdentifier"], tags)
    for group, tags in tagged(
        rds,
        "describe_db_parameter_groups",
        "DBParameterGroups",
        "DBParameterGroupName",
        "DBParameterGroupArn",
        RESOURCE_PREFIX,
    ):
        yield Resource("rds-parameter-group", group["DBParameterGroupName"], tags)


KIND = AwsTargetKind(
    name="rds",
    provider="rds",
    target="benchwright.providers.aws.targets.kinds.rds.target:RdsTarget",
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
    iam_describe=(
        "rds:DescribeDBInstances", "rds:DescribeDBParameterGroups", "rds:DescribeDBSnapshots",
        "rds:ListTagsForResource",
    ),
    iam_create=("rds:CreateDBInstance", "rds:CreateDBParameterGroup", "rds:AddTagsToResource"),
    iam_modify=("rds:ModifyDBParameterGroup",),
    iam_events=("rds:RebootDBInstance", "rds:ModifyDBInstance"),  # failover is a reboot with failover
    # snapshot_restore and pitr (targets/operations.py), and deleting what they made
    iam_operations=(
        "rds:CreateDBSnapshot", "rds:RestoreDBInstanceFromDBSnapshot", "rds:RestoreDBInstanceToPointInTime",
        "rds:AddTagsToResource",
    ),
    iam_operations_delete=("rds:DeleteDBInstance", "rds:DeleteDBSnapshot"),
    price=price,
    price_services=("AmazonRDS", "AmazonCloudWatch"),
    rehearsal=Rehearsal(
        ("benchwright.rehearse.services.rds", "benchwright.rehearse.services.rds_restore", "benchwright.rehearse.events"),
        "PostgreSQL or MariaDB on 127.0.0.1 per instance; snapshots and restores copy its data; reboot and failover restart it",
    ),
    # prices and resources
    monthly=monthly,
    describe=describe,
    io_requests=io_requests,
    zones=zones,
    find=find,
    burst_start_field="storage",
    spec=RdsTarget,  # its spec model, which declares its timings and experiments
    events=(  # the API call of each event it allows
        ("failover", events.rds_failover), ("reboot", events.rds_reboot), ("scale", events.rds_scale),
    ),
)  # fmt: skip
