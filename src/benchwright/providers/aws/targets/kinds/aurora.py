"""Aurora clusters (their member instances are rds-instances, owned by the rds kind), their manual
snapshots and cluster parameter groups; listed by the janitor's RDS lister."""

from __future__ import annotations

from benchwright.providers.aws.deletion import (
    delete_db_cluster,
    delete_db_snapshot,
    delete_parameter_group_later_ok,
)
from benchwright.providers.aws.targets.kinds.base import GROUPS, TARGETS, AwsTargetKind, ResourceKind

KIND = AwsTargetKind(
    name="aurora",
    provider="aurora",
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
)  # fmt: skip
