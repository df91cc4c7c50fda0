"""Per-run isolation (issue 30 item 5) over the synthesized stack: the run-scoped roles' own policy
documents, resolved from the template, fed to benchwright.rehearse.abac. A session tagged with one
run reads that run's secret, writes and lists that run's results prefix and deletes that run's
targets; the same calls on another run's resources are denied."""

from __future__ import annotations

from typing import Any

import pytest

from benchwright.rehearse.abac import OPERATORS, Request, evaluate, operators_of
from benchwright.rehearse.stack import Resolver
from infra.isolation import TEARDOWN_ACTIONS
from tests.infra.test_stack import resources

BUCKET = "arn:aws:s3:::bw-results"
RUN_A, RUN_B = "20261129-030000-aaaa", "20261129-030000-bbbb"
TAG = "benchwright:run-id"


def _logical(doc: dict[str, Any], kind: str, prefix: str) -> str:
    (found,) = [k for k in resources(doc, kind) if k.startswith(prefix)]
    return found


def role_statements(doc: dict[str, Any], role_prefix: str) -> list[dict[str, Any]]:
    """Every identity-policy statement attached to the role, resolved (the bucket to BUCKET)."""
    role = _logical(doc, "AWS::IAM::Role", role_prefix)
    bucket = _logical(doc, "AWS::S3::Bucket", "StorageResults")
    resolver = Resolver(template=doc, attrs={(bucket, "Arn"): BUCKET})
    statements: list[dict[str, Any]] = []
    for policy in resources(doc, "AWS::IAM::Policy").values():
        if {"Ref": role} in policy["Properties"]["Roles"]:
            statements += policy["Properties"]["PolicyDocument"]["Statement"]
    for inline in doc["Resources"][role]["Properties"].get("Policies", []):
        statements += inline["PolicyDocument"]["Statement"]
    assert statements, f"no policy attached to {role}"
    return list(resolver.resolve(statements))


@pytest.fixture(scope="module")
def runner(stack: tuple[Any, dict[str, Any]]) -> list[dict[str, Any]]:
    return role_statements(stack[1], "IsolationRunnerRunRole")


@pytest.fixture(scope="module")
def teardown(stack: tuple[Any, dict[str, Any]]) -> list[dict[str, Any]]:
    return role_statements(stack[1], "IsolationTeardownRunRole")


def as_run(run: str, action: str, resource: str, **kw: Any) -> Request:
    return Request(action, resource, principal_tags={TAG: run}, **kw)


def test_every_condition_the_run_roles_use_is_one_the_evaluator_implements(
    runner: list[dict[str, Any]], teardown: list[dict[str, Any]]
) -> None:
    used = operators_of(runner + teardown)
    assert used and used <= set(OPERATORS), used
    text = repr(runner + teardown)
    assert "${aws:PrincipalTag/benchwright:run-id}" in text and "Fn::" not in text


def test_a_runner_session_reads_only_its_own_run_s_secret(runner: list[dict[str, Any]]) -> None:
    secret = "arn:aws:secretsmanager:us-east-1:123456789012:secret:bw-aaaa-db-AbCdEf"

    def read(run: str, tags: dict[str, str]) -> str:
        return evaluate(runner, as_run(run, "secretsmanager:GetSecretValue", secret, resource_tags=tags))

    assert read(RUN_A, {TAG: RUN_A}) == "allow"
    assert read(RUN_B, {TAG: RUN_A}) == "implicit-deny"
    assert read(RUN_A, {}) == "implicit-deny"
    untagged = Request("secretsmanager:GetSecretValue", secret, resource_tags={TAG: RUN_A})
    assert evaluate(runner, untagged) == "implicit-deny"  # a session without its run tag reads nothing


def test_a_runner_session_writes_and_lists_only_its_own_run_s_prefix(runner: list[dict[str, Any]]) -> None:
    own = f"{BUCKET}/runs/{RUN_A}/cell-1/repeat-0/runner-0"
    other = f"{BUCKET}/runs/{RUN_B}/cell-1/repeat-0/runner-0"
    assert evaluate(runner, as_run(RUN_A, "s3:PutObject", own)) == "allow"
    assert evaluate(runner, as_run(RUN_A, "s3:GetObject", own)) == "allow"
    assert evaluate(runner, as_run(RUN_A, "s3:PutObject", other)) == "implicit-deny"
    assert evaluate(runner, as_run(RUN_A, "s3:GetObject", other)) == "implicit-deny"
    assert evaluate(runner, as_run(RUN_A, "s3:PutObject", f"{BUCKET}/history/spec/x")) == "implicit-deny"
    assert evaluate(runner, as_run(RUN_A, "s3:DeleteObject", own)) == "implicit-deny"

    def ls(prefix: str) -> str:
        return evaluate(runner, as_run(RUN_A, "s3:ListBucket", BUCKET, context={"s3:prefix": prefix}))

    assert ls(f"runs/{RUN_A}/cell-1/") == "allow"
    assert ls(f"runs/{RUN_B}/") == "implicit-deny"
    assert ls("runs/") == "implicit-deny"


def test_a_teardown_session_deletes_only_what_carries_its_run_tag(teardown: list[dict[str, Any]]) -> None:
    targets = {
        "rds:DeleteDBInstance": "arn:aws:rds:us-east-1:123456789012:db:bw-aaaa",
        "elasticache:DeleteReplicationGroup": "arn:aws:elasticache:us-east-1:123456789012:replicationgroup:bw-a",
        "ec2:TerminateInstances": "arn:aws:ec2:us-east-1:123456789012:instance/i-0123456789abcdef0",
        "ecs:StopTask": "arn:aws:ecs:us-east-1:123456789012:task/benchwright/0123456789abcdef",
    }
    assert set(targets) <= set(TEARDOWN_ACTIONS)
    for action, arn in targets.items():
        assert evaluate(teardown, as_run(RUN_A, action, arn, resource_tags={TAG: RUN_A})) == "allow", action
        assert evaluate(teardown, as_run(RUN_A, action, arn, resource_tags={TAG: RUN_B})) == "implicit-deny"
        assert evaluate(teardown, as_run(RUN_A, action, arn)) == "implicit-deny", action  # untagged


def test_each_run_role_does_its_own_job_only(
    runner: list[dict[str, Any]], teardown: list[dict[str, Any]]
) -> None:
    db = "arn:aws:rds:us-east-1:123456789012:db:bw-aaaa"
    secret = "arn:aws:secretsmanager:us-east-1:123456789012:secret:bw-aaaa-db-AbCdEf"
    tags = {TAG: RUN_A}
    assert evaluate(runner, as_run(RUN_A, "rds:DeleteDBInstance", db, resource_tags=tags)) == "implicit-deny"
    read = as_run(RUN_A, "secretsmanager:GetSecretValue", secret, resource_tags=tags)
    assert evaluate(teardown, read) == "implicit-deny"
    assert evaluate(teardown, as_run(RUN_A, "s3:PutObject", f"{BUCKET}/runs/{RUN_A}/x")) == "implicit-deny"


def test_only_the_stack_s_runners_and_teardowns_may_open_a_run_session_and_only_with_the_run_tag(
    stack: tuple[Any, dict[str, Any]],
) -> None:
    doc = stack[1]
    expected = {
        "IsolationRunnerRunRole": {"ComputeRunnerTaskRole", "ComputeRunnerInstanceRole"},
        "IsolationTeardownRunRole": {
            "WorkflowTeardownFunctionServiceRole",
            "WorkflowAbortTeardownFunctionServiceRole",
        },
    }
    for prefix, callers in expected.items():
        role = _logical(doc, "AWS::IAM::Role", prefix)
        trust = doc["Resources"][role]["Properties"]["AssumeRolePolicyDocument"]["Statement"]
        principals: set[str] = set()
        for statement in trust:
            assert set(statement["Action"]) == {"sts:AssumeRole", "sts:TagSession"}, statement
            assert statement["Condition"] == {
                "Null": {f"aws:RequestTag/{TAG}": "false"},
                "ForAllValues:StringEquals": {"aws:TagKeys": [TAG]},
            }
            arns = statement["Principal"]["AWS"]
            for arn in arns if isinstance(arns, list) else [arns]:
                principals.add(arn["Fn::GetAtt"][0])
        assert {p.rstrip("0123456789ABCDEF") for p in principals} == callers, principals
        # each caller's own policy lets it assume the role (and nothing else gains that right)
        granted = set()
        for policy in resources(doc, "AWS::IAM::Policy").values():
            for statement in policy["Properties"]["PolicyDocument"]["Statement"]:
                if statement.get("Resource") == {"Fn::GetAtt": [role, "Arn"]}:
                    assert set(statement["Action"]) == {"sts:AssumeRole", "sts:TagSession"}
                    granted |= {r["Ref"] for r in policy["Properties"]["Roles"]}
        assert granted == principals
