"""ElastiCache replication groups and the cache parameter groups made for them."""

from __future__ import annotations

from benchwright.providers.aws.deletion import gone_ok
from benchwright.providers.aws.targets.cache_params import ELASTICACHE, delete_group_later_ok
from benchwright.providers.aws.targets.kinds.base import GROUPS, TARGETS, AwsTargetKind, ResourceKind

KIND = AwsTargetKind(
    name="elasticache",
    provider="elasticache",
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
)  # fmt: skip
