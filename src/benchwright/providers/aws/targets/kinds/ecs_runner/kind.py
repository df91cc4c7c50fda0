"""The Fargate runner's ECS tasks: not a target, but a kind of resource a run leaves if lost."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from benchwright.providers.aws.common import paginate
from benchwright.providers.aws.deletion import stop_task
from benchwright.providers.aws.tagged import Resource, kv, ours
from benchwright.providers.aws.targets.kinds.base import RUNNERS, AwsTargetKind, Rehearsal, ResourceKind


# prices and resources ---------------------------------------------------------------
def find(clients: Any) -> Iterator[Resource]:
    """The runner tasks still running in any cluster, by their run tag."""
    ecs = clients("ecs")
    for cluster in paginate(ecs, "list_clusters", "clusterArns"):
        arns = list(paginate(ecs, "list_tasks", "taskArns", cluster=cluster, desiredStatus="RUNNING"))
        for i in range(0, len(arns), 100):
            tasks = ecs.describe_tasks(cluster=cluster, tasks=arns[i : i + 100], include=["TAGS"]).get(
                "tasks", []
            )
            for task in tasks:
                tags = kv(task.get("tags"), "key", "value")
                if ours(tags) and task.get("lastStatus") != "STOPPED":
                    yield Resource("ecs-task", task["taskArn"], tags, {"cluster": cluster})


KIND = AwsTargetKind(
    name="ecs-runner",
    provider=None,
    resources=(
        ResourceKind(
            "ecs-task", lambda c, i, x: stop_task(c("ecs"), x["cluster"], i, "benchwright janitor"), RUNNERS
        ),
    ),
    lister="ecs",
    iam_list=("ecs:ListClusters", "ecs:ListTasks", "ecs:DescribeTasks"),
    iam_delete=("ecs:StopTask",),
    # the launcher (providers/aws/launcher.py): an EC2 runner's instance, and the placement's subnets
    # (placement.py); Fargate's RunTask and DescribeTasks are granted on the cluster (infra/permissions.py)
    iam_describe=("ec2:DescribeInstances", "ec2:DescribeSubnets"),
    iam_create=("ec2:RunInstances", "ec2:CreateTags"),
    # the runner is priced by its platform (pricing.runner_lines), not as a target
    price_services=("AmazonECS",),
    rehearsal=Rehearsal(
        ("benchwright.rehearse.services.ecs",), "the runner image as a podman container on the host network"
    ),
    # prices and resources
    find=find,
)
