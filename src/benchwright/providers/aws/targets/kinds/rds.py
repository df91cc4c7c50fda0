"""RDS instances, their manual snapshots (snapshot_restore) and parameter groups."""

from __future__ import annotations

from benchwright.providers.aws.deletion import (
    delete_db_instance,
    delete_db_snapshot,
    delete_parameter_group_later_ok,
)
from benchwright.providers.aws.targets.kinds.base import GROUPS, TARGETS, AwsTargetKind, ResourceKind

KIND = AwsTargetKind(
    name="rds",
    provider="rds",
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
)  # fmt: skip
