"""MemoryDB clusters and the parameter groups made for them."""

from __future__ import annotations

from benchwright.providers.aws.deletion import gone_ok
from benchwright.providers.aws.targets.cache_params import MEMORYDB, delete_group_later_ok
from benchwright.providers.aws.targets.kinds.base import GROUPS, TARGETS, AwsTargetKind, ResourceKind

KIND = AwsTargetKind(
    name="memorydb",
    provider="memorydb",
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
)
