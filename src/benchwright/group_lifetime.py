"""How long each target group of a cloud spec lives, against how long the stage lets it live.

A suite's cells share a target (benchwright.sharing): it lives from the first cell's provisioning
to the last cell's teardown. Its ``expires-at`` tag (providers/aws/common.target_ttl_hours) and the
state machine's timeout (``max_run_hours``, a suite's x SUITE_TIMEOUT_RUNS) must both cover that,
or the janitor or the timeout ends the run mid-way: `validate` and `submit` refuse such a group.
"""

from __future__ import annotations

from dataclasses import dataclass

from benchwright.errors import SpecError
from benchwright.providers.aws.common import target_ttl_hours
from benchwright.providers.aws.config import AwsSettings
from benchwright.providers.aws.names import SUITE_TIMEOUT_RUNS
from benchwright.sharing import item_seconds, plan
from benchwright.spec import BenchmarkSpec, expand_matrix

DEFAULT_MAX_RUN_HOURS = AwsSettings().max_run_hours  # the stage's default (infra/config.py)
TTL_MARGIN_H = 4.0  # the stack's ttl_hours is max_run_hours + 4


@dataclass(frozen=True)
class GroupLifetime:
    spec: str
    group: str  # g1
    cells: list[str]  # "<cell id> #<repeat>"
    seconds: float  # estimated, from provisioning to teardown
    expiry_h: float  # the target's expires-at, hours after creation
    limit_h: float  # the execution's timeout

    @property
    def allowed_h(self) -> float:
        return min(self.expiry_h, self.limit_h)

    def describe(self) -> str:
        est = self.seconds / 3600
        return (
            f"{self.spec} target group {self.group} ({len(self.cells)} cell(s)): estimated {est:.1f} h, "
            f"expires after {self.expiry_h:g} h, the execution may run {self.limit_h:g} h"
        )


def group_lifetimes(spec: BenchmarkSpec, max_run_hours: float = DEFAULT_MAX_RUN_HOURS) -> list[GroupLifetime]:
    """Each target group of a cloud spec (none for a local one) with its estimate and its limits."""
    if spec.is_local:
        return []
    cells = [(c, r) for c in expand_matrix(spec) for r in range(spec.repeats)]
    settings = AwsSettings(ttl_hours=max_run_hours + TTL_MARGIN_H, max_run_hours=max_run_hours)
    suite = len(cells) > 1  # the API runs a matrix or repeats on the suite workflow
    limit = max_run_hours * (SUITE_TIMEOUT_RUNS if suite else 1)
    groups = plan(cells)
    seconds: dict[str, float] = {}
    for item, share, _ in item_seconds(groups):
        group = next(g.name for g in groups if item in g.items)
        seconds[group] = seconds.get(group, 0.0) + share
    return [
        GroupLifetime(
            spec.name,
            g.name,
            [i.label for i in g.items],
            seconds[g.name],
            target_ttl_hours(settings, len(g.items)),
            limit,
        )
        for g in groups
    ]


def check_group_lifetimes(
    spec: BenchmarkSpec, max_run_hours: float = DEFAULT_MAX_RUN_HOURS
) -> list[GroupLifetime]:
    """The groups, or a SpecError naming the first group whose estimate outlives its expiry or the
    execution's timeout (before anything is created)."""
    lifetimes = group_lifetimes(spec, max_run_hours)
    for g in lifetimes:
        if g.seconds / 3600 > g.allowed_h:
            shown = ", ".join(g.cells[:4]) + (" ..." if len(g.cells) > 4 else "")
            raise SpecError(
                "matrix" if spec.matrix or spec.repeats > 1 else "workload.phases",
                f"{g.describe()}: the group ({shown}) would be cut off at {g.allowed_h:g} h; split the "
                f"matrix into several specs, shorten the phases, or deploy with a larger max_run_hours "
                f"(--max-run-hours)",
            )
    return lifetimes
