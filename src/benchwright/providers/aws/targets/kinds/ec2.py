"""EC2 hosts (a target's nodes and a measured runner's instance) and their network interfaces."""

from __future__ import annotations

from benchwright.providers.aws.deletion import delete_eni_later_ok, terminate_instances
from benchwright.providers.aws.targets.kinds.base import INTERFACES, NODES, AwsTargetKind, ResourceKind

KIND = AwsTargetKind(
    name="ec2",
    provider="ec2",
    resources=(
        ResourceKind("ec2-instance", lambda c, i, x: terminate_instances(c("ec2"), [i]), NODES),
        ResourceKind("ec2-network-interface", lambda c, i, x: delete_eni_later_ok(c("ec2"), i), INTERFACES),
    ),
    lister="ec2",
    iam_list=("ec2:DescribeInstances", "ec2:DescribeNetworkInterfaces"),
    iam_delete=("ec2:TerminateInstances", "ec2:DeleteNetworkInterface"),
)
