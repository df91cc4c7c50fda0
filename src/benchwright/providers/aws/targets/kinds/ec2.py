"""EC2 hosts (a target's nodes and a measured runner's instance) and their network interfaces."""

from __future__ import annotations

from typing import TYPE_CHECKING

from benchwright.providers.aws.deletion import delete_eni_later_ok, terminate_instances
from benchwright.providers.aws.pricelist import HOURS_PER_MONTH
from benchwright.providers.aws.targets.kinds.base import (
    INTERFACES,
    NODES,
    AwsTargetKind,
    Rehearsal,
    ResourceKind,
)
from benchwright.spec.targets import Ec2Target

if TYPE_CHECKING:  # the price book prices through the kinds: only its types are needed here
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


KIND = AwsTargetKind(
    name="ec2",
    provider="ec2",
    target="benchwright.providers.aws.targets.ec2:Ec2Target",
    resources=(
        ResourceKind("ec2-instance", lambda c, i, x: terminate_instances(c("ec2"), [i]), NODES),
        ResourceKind("ec2-network-interface", lambda c, i, x: delete_eni_later_ok(c("ec2"), i), INTERFACES),
    ),
    lister="ec2",
    iam_list=("ec2:DescribeInstances", "ec2:DescribeNetworkInterfaces"),
    iam_delete=("ec2:TerminateInstances", "ec2:DeleteNetworkInterface"),
    price=price,
    price_services=("AmazonEC2",),
    rehearsal=Rehearsal(
        ("benchwright.rehearse.services.ec2", "benchwright.rehearse.services.ssm"),
        "per template: PostgreSQL as YugabyteDB's YSQL on every node's 127.0.0.x address, or Redis on the"
        " node's; Run Command's yb-admin (node replace's blacklist and load move) on the YugabyteDB stand-in",
    ),
)
