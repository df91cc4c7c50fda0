"""EC2 hosts (a target's nodes and a measured runner's instance) and their network interfaces."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from benchwright.providers.aws.common import paginate
from benchwright.providers.aws.deletion import delete_eni_later_ok, terminate_instances
from benchwright.providers.aws.names import RUN_ID_TAG
from benchwright.providers.aws.pricelist import (
    EBS_IOPS_USAGE,
    GP3_FREE_IOPS,
    GP3_FREE_MIBPS,
    HOURS_NOTE,
    HOURS_PER_MONTH,
)
from benchwright.providers.aws.tagged import Resource, kv
from benchwright.providers.aws.targets.kinds.base import (
    INTERFACES,
    NODES,
    AwsTargetKind,
    Rehearsal,
    ResourceKind,
)
from benchwright.providers.aws.targets.kinds.ec2 import events
from benchwright.providers.aws.targets.kinds.ec2.spec import Ec2Target

if TYPE_CHECKING:  # the price book prices through the kinds: only its types are needed here
    from benchwright.providers.aws.monthly import MonthlyPrice, MonthlyPricer
    from benchwright.providers.aws.pricing import AwsPriceBook, Lines


def price(book: AwsPriceBook, t: Ec2Target, hours: float, lines: Lines) -> None:
    unit = book.ec2_hourly(t.instance_type)
    lines.add(f"ec2 {t.nodes} x {t.instance_type}", hours * t.nodes * unit.usd, [unit])
    volume = t.volume
    if volume is None:
        return
    gb_month = book.rate("AmazonEC2", productFamily="Storage", volumeApiName=volume.type)
    lines.add(
        f"ebs {t.nodes} x {volume.size_gb} GB {volume.type}",
        t.nodes * volume.size_gb * gb_month.usd * hours / HOURS_PER_MONTH,
        [gb_month],
    )
    book.ebs_performance_lines(volume, t.nodes, hours, lines)


# prices and resources ---------------------------------------------------------------
IO2_FIRST_TIER = 32000  # EBS io2 bills provisioned IOPS in tiers; the list's first row is the first tier


def describe(t: Ec2Target) -> str:
    v = t.volume
    disk = f"{v.type} {v.size_gb} GB" + (f" {v.iops} IOPS" if v.iops else "") if v else "instance store"
    return f"{t.nodes} x {t.instance_type} {disk}"


def monthly(pricer: MonthlyPricer, t: Ec2Target, out: MonthlyPrice, io_per_s: float | None) -> None:
    def instance() -> tuple[float, str]:
        usd, src = pricer.row(
            "AmazonEC2",
            instanceType=t.instance_type,
            operatingSystem="Linux",
            tenancy="Shared",
            preInstalledSw="NA",
            capacitystatus="Used",
        )
        return t.nodes * usd * HOURS_PER_MONTH, f"{src}; {t.nodes} x {HOURS_NOTE}"

    pricer.line(out, "server", f"ec2 {t.nodes} x {t.instance_type}", instance)
    v = t.volume
    if v is None:
        out.notes.append("disk: the instance's own storage, in the instance price (root volume not priced)")
        return
    n, p = t.nodes, pricer.prefix()

    def storage() -> tuple[float, str]:
        usd, src = pricer.row("AmazonEC2", productFamily="Storage", volumeApiName=v.type)
        return n * v.size_gb * usd, f"{src}; {n} x {v.size_gb} GB-month"

    pricer.line(out, "disk", f"ebs {n} x {v.type} {v.size_gb} GB", storage)
    iops = float(v.iops or 0) - (GP3_FREE_IOPS if v.type == "gp3" else 0.0)
    if iops > 0 and v.type in EBS_IOPS_USAGE:

        def piops() -> tuple[float, str]:
            usd, src = pricer.row(
                "AmazonEC2",
                productFamily="System Operation",
                volumeApiName=v.type,
                usagetype=f"{p}EBS:VolumeP-IOPS.{EBS_IOPS_USAGE[v.type]}",
            )
            return n * iops * usd, f"{src}; {n} x {iops:g} IOPS-month"

        pricer.line(out, "io", f"provisioned IOPS {n} x {iops:g}", piops)
        if v.type == "io2" and iops > IO2_FIRST_TIER:
            out.notes.append(
                f"io2 IOPS above {IO2_FIRST_TIER:,} are billed at lower tiers: all priced at the first"
            )
    mibps = float(v.throughput_mbps or 0) - GP3_FREE_MIBPS
    if v.type == "gp3" and mibps > 0:

        def throughput() -> tuple[float, str]:
            usd, src = pricer.row(
                "AmazonEC2",
                productFamily="Provisioned Throughput",
                volumeApiName="gp3",
                usagetype=f"{p}EBS:VolumeP-Throughput.gp3",
            )
            return n * mibps * usd, f"{src}; {n} x {mibps:g} MiB/s-month above the 125 gp3 includes"

        pricer.line(out, "io", f"gp3 throughput {n} x {mibps:g} MiB/s", throughput)
    if v.type == "standard" and n > 1:  # one series per run does not tell the nodes' volumes apart
        out.unpriced("io", "magnetic I/O requests", "not priced: one I/O series for several nodes' volumes")
    elif v.type == "standard":
        pricer.io_requests(out, "AmazonEC2", f"{p}EBS:VolumeIOUsage", io_per_s)


def zones(t: Ec2Target) -> list[str]:
    return list(t.availability_zones or [])


def find(clients: Any) -> Iterator[Resource]:
    """Instances not yet terminating and network interfaces, filtered by the run tag's key."""
    ec2 = clients("ec2")
    filters = [{"Name": "tag-key", "Values": [RUN_ID_TAG]}]
    alive = ["pending", "running", "stopping", "stopped"]
    for reservation in paginate(
        ec2,
        "describe_instances",
        "Reservations",
        Filters=[*filters, {"Name": "instance-state-name", "Values": alive}],
    ):
        for instance in reservation["Instances"]:
            yield Resource("ec2-instance", instance["InstanceId"], kv(instance.get("Tags")))
    for eni in paginate(ec2, "describe_network_interfaces", "NetworkInterfaces", Filters=filters):
        yield Resource("ec2-network-interface", eni["NetworkInterfaceId"], kv(eni.get("TagSet")))


KIND = AwsTargetKind(
    name="ec2",
    provider="ec2",
    target="benchwright.providers.aws.targets.kinds.ec2.target:Ec2Target",
    resources=(
        ResourceKind("ec2-instance", lambda c, i, x: terminate_instances(c("ec2"), [i]), NODES),
        ResourceKind("ec2-network-interface", lambda c, i, x: delete_eni_later_ok(c("ec2"), i), INTERFACES),
    ),
    lister="ec2",
    iam_list=("ec2:DescribeInstances", "ec2:DescribeNetworkInterfaces"),
    iam_delete=("ec2:TerminateInstances", "ec2:DeleteNetworkInterface"),
    # target.py and node_replace.py (the subnets its nodes go to; DescribeInstanceStatus is granted
    # beside DescribeInstances, though no call of today's code needs it)
    iam_describe=(
        "ec2:DescribeInstances",
        "ec2:DescribeInstanceStatus",
        "ec2:DescribeSubnets",
        "ec2:DescribeNetworkInterfaces",
    ),
    iam_create=("ec2:RunInstances", "ec2:CreateNetworkInterface", "ec2:CreateTags"),
    iam_events=("ec2:RebootInstances",),
    # node_replace: a new node on a new interface; the old node terminated through the run session
    iam_operations=("ec2:RunInstances", "ec2:CreateNetworkInterface", "ec2:CreateTags"),
    iam_operations_delete=("ec2:TerminateInstances",),
    price=price,
    price_services=("AmazonEC2",),
    rehearsal=Rehearsal(
        ("benchwright.rehearse.services.ec2", "benchwright.rehearse.services.ssm"),
        "per template: PostgreSQL as YugabyteDB's YSQL on every node's 127.0.0.x address, or Redis on the"
        " node's; Run Command's yb-admin (node replace's blacklist and load move) on the YugabyteDB stand-in",
    ),
    # prices and resources
    monthly=monthly,
    describe=describe,
    zones=zones,
    on_ec2=True,
    find=find,
    spec=Ec2Target,  # its spec model, which declares its timings and experiments
    events=(("reboot", events.ec2_reboot),),  # the API call of each event it allows
)
