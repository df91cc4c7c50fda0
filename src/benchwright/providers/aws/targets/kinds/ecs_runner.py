"""The Fargate runner's ECS tasks: not a target, but a kind of resource a run leaves if lost."""

from __future__ import annotations

from benchwright.providers.aws.deletion import stop_task
from benchwright.providers.aws.targets.kinds.base import RUNNERS, AwsTargetKind, Rehearsal, ResourceKind

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
    # the runner is priced by its platform (pricing.runner_lines), not as a target
    price_services=("AmazonECS",),
    rehearsal=Rehearsal(
        ("benchwright.rehearse.services.ecs",), "the runner image as a podman container on the host network"
    ),
)
