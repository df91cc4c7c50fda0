"""Per-run isolation by attribute-based access control (issue 30 item 5): run-scoped roles.

The stack's standing roles serve every run at once (one runner task role, one instance profile, one
Teardown function), so their own policies can only say "a resource of SOME run" (the run-id tag is
present). A run-scoped role says "a resource of THIS run": the per-run work assumes it with the
session tag ``benchwright:run-id`` (``sts:TagSession``), and its statements compare each resource
with that tag, ``${aws:PrincipalTag/benchwright:run-id}``:

- ``RunnerRunRole`` (assumed by the runner task role and the EC2 runner's instance role): reads only
  the secret tagged with its run, and reads and writes only its run's prefix ``runs/<run id>/`` of
  the results bucket (listing only under it, ``s3:prefix``).
- ``TeardownRunRole`` (assumed by the Teardown and AbortTeardown functions): deletes and stops only
  resources tagged with its run.
- ``OperationsRunRole`` (assumed by the CheckOperations function): reads only the secret tagged with
  its run (the operation probe's login) and deletes only what carries its run's tag (the restored
  databases and snapshots its operations made, node_replace's replaced node).
- ``ResultsRunRole`` (assumed by the stages that write a run's objects: LaunchRunner, CheckRunner,
  CollectMetrics, JudgeResults, StoreResults, PriceRun and the finishing stages FinishRun,
  SummarizeSuite, AbortTeardown): reads and writes only its run's prefix ``runs/<run id>/`` (listing
  only under it). Those stages' own roles write nothing under ``runs/`` (infra/bucket_access.py).

No run-scoped role may write a run's ``owner.json`` (explicit deny): that record is the API's.

The trust policies admit exactly those callers, and a session only with the run-id tag and no other
(``aws:TagKeys``). benchwright.rehearse.abac evaluates these statements (moto cannot);
tests/infra/test_run_isolation.py feeds it the synthesized documents.
"""

from __future__ import annotations

from collections.abc import Sequence

from aws_cdk import aws_iam as iam
from aws_cdk import aws_s3 as s3
from constructs import Construct

from benchwright.providers.aws.names import RUN_ID_TAG
from benchwright.providers.aws.run_session import operations_actions, teardown_actions
from infra.bucket_access import OWNER

RUN_TAG_VARIABLE = "${aws:PrincipalTag/" + RUN_ID_TAG + "}"
RUN_PREFIX = f"runs/{RUN_TAG_VARIABLE}/"


def _own(key: str) -> dict[str, object]:
    """The resource's run tag (by ``key``) equals the session's."""
    return {"StringEquals": {f"{key}/{RUN_ID_TAG}": RUN_TAG_VARIABLE}}


def results_statements(results: s3.IBucket) -> list[iam.PolicyStatement]:
    """Its run's prefix of the results bucket: read, write and list under ``runs/<run id>/`` only,
    never the API's ``owner.json`` of the run."""
    return [
        iam.PolicyStatement(
            actions=["s3:GetObject", "s3:PutObject"],
            resources=[results.arn_for_objects(f"{RUN_PREFIX}*")],
        ),
        iam.PolicyStatement(
            actions=["s3:ListBucket"],
            resources=[results.bucket_arn],
            conditions={"StringLike": {"s3:prefix": f"{RUN_PREFIX}*"}},
        ),
        iam.PolicyStatement(
            effect=iam.Effect.DENY, actions=["s3:PutObject"], resources=[results.arn_for_objects(OWNER)]
        ),
    ]


def runner_statements(results: s3.IBucket) -> list[iam.PolicyStatement]:
    """The runner's run-scoped grants: its run's secret, its run's prefix of the results bucket."""
    return [
        iam.PolicyStatement(
            actions=["secretsmanager:GetSecretValue"],
            resources=["*"],
            conditions=_own("secretsmanager:ResourceTag"),
        ),
        *results_statements(results),
    ]


def teardown_statements() -> list[iam.PolicyStatement]:
    """The teardown's run-scoped grant: delete or stop what carries its run's tag, nothing else."""
    return [
        iam.PolicyStatement(actions=teardown_actions(), resources=["*"], conditions=_own("aws:ResourceTag"))
    ]


def operations_statements() -> list[iam.PolicyStatement]:
    """The operation benchmarks' run-scoped grant: read the secret and delete what carries its run's tag."""
    actions = operations_actions()
    secrets = [a for a in actions if a.startswith("secretsmanager:")]
    deletes = [a for a in actions if a not in secrets]
    return [
        iam.PolicyStatement(actions=secrets, resources=["*"], conditions=_own("secretsmanager:ResourceTag")),
        iam.PolicyStatement(actions=deletes, resources=["*"], conditions=_own("aws:ResourceTag")),
    ]


TRUST_CONDITIONS: dict[str, object] = {
    # a session only with the run-id tag set, and no other session tag
    "Null": {f"aws:RequestTag/{RUN_ID_TAG}": "false"},
    "ForAllValues:StringEquals": {"aws:TagKeys": [RUN_ID_TAG]},
}


class RunIsolation(Construct):
    """The run-scoped roles and the callers' right to assume them (with their run's tag)."""

    def __init__(
        self,
        scope: Construct,
        cid: str,
        *,
        results: s3.IBucket,
        runners: Sequence[iam.IRole],
        teardowns: Sequence[iam.IRole],
        operations: Sequence[iam.IRole],
        writers: Sequence[iam.IRole],
    ) -> None:
        super().__init__(scope, cid)
        self.runner_role = self._role("RunnerRunRole", runners, runner_statements(results))
        self.teardown_role = self._role("TeardownRunRole", teardowns, teardown_statements())
        self.operations_role = self._role("OperationsRunRole", operations, operations_statements())
        self.results_role = self._role("ResultsRunRole", writers, results_statements(results))

    def _role(
        self, cid: str, callers: Sequence[iam.IRole], statements: list[iam.PolicyStatement]
    ) -> iam.Role:
        first, *rest = callers
        role = iam.Role(
            self,
            cid,
            assumed_by=iam.ArnPrincipal(first.role_arn).with_conditions(TRUST_CONDITIONS).with_session_tags(),
            description="a session of one run (session tag benchwright:run-id): that run's resources only",
        )
        for caller in rest:
            role.assume_role_policy.add_statements(  # type: ignore[union-attr]
                iam.PolicyStatement(
                    actions=["sts:AssumeRole", "sts:TagSession"],
                    principals=[iam.ArnPrincipal(caller.role_arn)],
                    conditions=TRUST_CONDITIONS,
                )
            )
        for statement in statements:
            role.add_to_principal_policy(statement)
        for caller in callers:
            caller.add_to_principal_policy(
                iam.PolicyStatement(actions=["sts:AssumeRole", "sts:TagSession"], resources=[role.role_arn])
            )
        return role
