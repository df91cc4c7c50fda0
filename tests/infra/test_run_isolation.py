"""Per-run isolation (issue 30 item 5) over the synthesized stack: the run-scoped roles' own policy
documents, resolved from the template, fed to benchwright.rehearse.abac. A session tagged with one
run reads that run's secret, writes and lists that run's results prefix and deletes that run's
targets; the same calls on another run's resources are denied. No stage's own role deletes or reads
a run's secret on any resource, but the two sweepers of runs whose state is lost, and none writes
under ``runs/``: the stages write their run's objects as a session of ResultsRunRole."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from benchwright.providers.aws.run_session import operations_actions, teardown_actions
from benchwright.rehearse.abac import OPERATORS, Request, evaluate, operators_of
from benchwright.rehearse.stack import Resolver
from tests.infra.test_stack import resources, statements_of

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
def runner(stack: dict[str, Any]) -> list[dict[str, Any]]:
    return role_statements(stack, "IsolationRunnerRunRole")


@pytest.fixture(scope="module")
def teardown(stack: dict[str, Any]) -> list[dict[str, Any]]:
    return role_statements(stack, "IsolationTeardownRunRole")


@pytest.fixture(scope="module")
def operations(stack: dict[str, Any]) -> list[dict[str, Any]]:
    return role_statements(stack, "IsolationOperationsRunRole")


@pytest.fixture(scope="module")
def results(stack: dict[str, Any]) -> list[dict[str, Any]]:
    return role_statements(stack, "IsolationResultsRunRole")


def as_run(run: str, action: str, resource: str, **kw: Any) -> Request:
    return Request(action, resource, principal_tags={TAG: run}, **kw)


def test_every_condition_the_run_roles_use_is_one_the_evaluator_implements(
    runner: list[dict[str, Any]],
    teardown: list[dict[str, Any]],
    operations: list[dict[str, Any]],
    results: list[dict[str, Any]],
) -> None:
    used = operators_of(runner + teardown + operations + results)
    assert used and used <= set(OPERATORS), used
    text = repr(runner + teardown + operations + results)
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


def assert_only_its_own_prefix(statements: list[dict[str, Any]], key: str) -> None:
    """Run A's session reads, writes and lists ``runs/<run A>/key`` and nothing of run B, of another
    prefix or of the API's ``owner.json``; it deletes nothing."""
    own, other = f"{BUCKET}/runs/{RUN_A}/{key}", f"{BUCKET}/runs/{RUN_B}/{key}"
    assert evaluate(statements, as_run(RUN_A, "s3:PutObject", own)) == "allow"
    assert evaluate(statements, as_run(RUN_A, "s3:GetObject", own)) == "allow"
    assert evaluate(statements, as_run(RUN_A, "s3:PutObject", other)) == "implicit-deny"
    assert evaluate(statements, as_run(RUN_A, "s3:GetObject", other)) == "implicit-deny"
    assert evaluate(statements, as_run(RUN_B, "s3:PutObject", other)) == "allow"  # B's own session
    # a run id that only starts like run A's is another run
    assert evaluate(statements, as_run(RUN_A, "s3:PutObject", f"{BUCKET}/runs/{RUN_A}x/{key}")) != "allow"
    for elsewhere in ("history/spec/x", "suites/s/x", "site/index.html", "quota/c/x"):
        assert evaluate(statements, as_run(RUN_A, "s3:PutObject", f"{BUCKET}/{elsewhere}")) == "implicit-deny"
    assert evaluate(statements, as_run(RUN_A, "s3:DeleteObject", own)) == "implicit-deny"
    owner = as_run(RUN_A, "s3:PutObject", f"{BUCKET}/runs/{RUN_A}/owner.json")
    assert evaluate(statements, owner) == "explicit-deny"  # the API's record of who submitted the run
    untagged = Request("s3:PutObject", own)
    assert evaluate(statements, untagged) == "implicit-deny"  # a session without its run tag writes nothing

    def ls(prefix: str) -> str:
        return evaluate(statements, as_run(RUN_A, "s3:ListBucket", BUCKET, context={"s3:prefix": prefix}))

    assert ls(f"runs/{RUN_A}/cell-1/") == "allow"
    assert ls(f"runs/{RUN_B}/") == "implicit-deny"
    assert ls("runs/") == "implicit-deny"


def test_a_runner_session_writes_and_lists_only_its_own_run_s_prefix(runner: list[dict[str, Any]]) -> None:
    assert_only_its_own_prefix(runner, "cell-1/repeat-0/runner-0")


@pytest.mark.parametrize(
    "key", ["record.json", "report.html", "cells/default.json", "default/repeat-0/runner-0/plan.json"]
)
def test_a_stage_s_results_session_reads_and_writes_only_its_own_run_s_prefix(
    results: list[dict[str, Any]], key: str
) -> None:
    assert_only_its_own_prefix(results, key)


def assert_only_its_own_run(statements: list[dict[str, Any]], targets: dict[str, str]) -> None:
    """Run A's session may act on a resource tagged with run A, never on run B's or an untagged one."""
    for action, arn in targets.items():
        assert evaluate(statements, as_run(RUN_A, action, arn, resource_tags={TAG: RUN_A})) == "allow", action
        assert evaluate(statements, as_run(RUN_A, action, arn, resource_tags={TAG: RUN_B})) == "implicit-deny"
        assert evaluate(statements, as_run(RUN_A, action, arn)) == "implicit-deny", action  # untagged


def test_a_teardown_session_deletes_only_what_carries_its_run_tag(teardown: list[dict[str, Any]]) -> None:
    targets = {
        "rds:DeleteDBInstance": "arn:aws:rds:us-east-1:123456789012:db:bw-aaaa",
        "elasticache:DeleteReplicationGroup": "arn:aws:elasticache:us-east-1:123456789012:replicationgroup:bw-a",
        "ec2:TerminateInstances": "arn:aws:ec2:us-east-1:123456789012:instance/i-0123456789abcdef0",
        "ecs:StopTask": "arn:aws:ecs:us-east-1:123456789012:task/benchwright/0123456789abcdef",
        "ec2:DeleteNetworkInterface": "arn:aws:ec2:us-east-1:123456789012:network-interface/eni-0123456789abcdef0",
    }
    assert set(targets) <= set(teardown_actions())
    assert_only_its_own_run(teardown, targets)


def test_an_operations_session_reads_and_deletes_only_what_carries_its_run_tag(
    operations: list[dict[str, Any]],
) -> None:
    targets = {
        "secretsmanager:GetSecretValue": "arn:aws:secretsmanager:us-east-1:123456789012:secret:rds!db-1-AbCdEf",
        "rds:DeleteDBSnapshot": "arn:aws:rds:us-east-1:123456789012:snapshot:bw-aaaa-snap",
        "rds:DeleteDBInstance": "arn:aws:rds:us-east-1:123456789012:db:bw-aaaa-restored",
        "ec2:TerminateInstances": "arn:aws:ec2:us-east-1:123456789012:instance/i-0123456789abcdef0",
    }
    assert set(targets) <= set(operations_actions())
    assert_only_its_own_run(operations, targets)
    # not its job: the target itself, its interfaces, the bucket
    for action, arn in (
        ("rds:DeleteDBParameterGroup", "arn:aws:rds:us-east-1:123456789012:pg:bw-aaaa"),
        ("ec2:DeleteNetworkInterface", "arn:aws:ec2:us-east-1:123456789012:network-interface/eni-1"),
        ("s3:PutObject", f"{BUCKET}/runs/{RUN_A}/x"),
    ):
        assert evaluate(operations, as_run(RUN_A, action, arn, resource_tags={TAG: RUN_A})) == "implicit-deny"


def test_each_run_role_does_its_own_job_only(
    runner: list[dict[str, Any]], teardown: list[dict[str, Any]], results: list[dict[str, Any]]
) -> None:
    db = "arn:aws:rds:us-east-1:123456789012:db:bw-aaaa"
    secret = "arn:aws:secretsmanager:us-east-1:123456789012:secret:bw-aaaa-db-AbCdEf"
    tags = {TAG: RUN_A}
    assert evaluate(runner, as_run(RUN_A, "rds:DeleteDBInstance", db, resource_tags=tags)) == "implicit-deny"
    read = as_run(RUN_A, "secretsmanager:GetSecretValue", secret, resource_tags=tags)
    assert evaluate(teardown, read) == "implicit-deny"
    assert evaluate(teardown, as_run(RUN_A, "s3:PutObject", f"{BUCKET}/runs/{RUN_A}/x")) == "implicit-deny"
    # the stages' results session: the run's objects only, never its secret or its targets
    assert evaluate(results, read) == "implicit-deny"
    assert evaluate(results, as_run(RUN_A, "rds:DeleteDBInstance", db, resource_tags=tags)) == "implicit-deny"
    assert {a for st in results for a in ([st["Action"]] if isinstance(st["Action"], str) else st["Action"])} == {
        "s3:GetObject", "s3:PutObject", "s3:ListBucket"
    }  # fmt: skip


def test_only_the_stack_s_run_workers_may_open_a_run_session_and_only_with_the_run_tag(
    stack: dict[str, Any],
) -> None:
    doc = stack
    expected = {
        "IsolationRunnerRunRole": {"ComputeRunnerTaskRole", "ComputeRunnerInstanceRole"},
        "IsolationTeardownRunRole": {
            "WorkflowTeardownFunctionServiceRole",
            "WorkflowAbortTeardownFunctionServiceRole",
        },
        "IsolationOperationsRunRole": {"WorkflowCheckOperationsFunctionServiceRole"},
        "IsolationResultsRunRole": {
            f"Workflow{state}FunctionServiceRole"
            for state in (
                "LaunchRunner",
                "CheckRunner",
                "CollectMetrics",
                "JudgeResults",
                "StoreResults",
                "PriceRun",
                "FinishRun",
                "SummarizeSuite",
                "AbortTeardown",
            )
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
                named = statement.get("Resource")
                if {"Fn::GetAtt": [role, "Arn"]} in (named if isinstance(named, list) else [named]):
                    assert set(statement["Action"]) == {"sts:AssumeRole", "sts:TagSession"}
                    granted |= {r["Ref"] for r in policy["Properties"]["Roles"]}
        assert granted == principals


# what destroys, or reads a secret; IAM matches actions without regard to case
DESTROYS_OR_READS = re.compile(r"^[a-z0-9-]+:(delete|terminate|stop)|^secretsmanager:getsecretvalue$", re.I)
# the sweepers delete by tag as themselves: they serve runs whose state (so whose run id) is lost
SWEEPERS = {"janitor", "abort_teardown"}


def test_no_stage_s_own_role_deletes_or_reads_a_secret_on_any_resource_but_the_sweepers(
    stack: dict[str, Any],
) -> None:
    """Issue 30: every delete, stop, terminate and run-secret read on ``*`` is a run role's (its
    condition the session's run tag); a Lambda's own role holds one only as a sweeper. The Slack
    and sink secrets a stage reads are named by ARN, not ``*``."""
    doc = stack
    modules = [
        f["Properties"]["Handler"].removeprefix("functions.").rsplit(".", 1)[0]
        for f in resources(doc, "AWS::Lambda::Function").values()
        if f["Properties"].get("Handler", "").startswith("functions.")
    ]
    assert {"teardown", "check_operations", "check_target", "janitor"} <= set(modules), modules
    holding: dict[str, set[str]] = {}
    for module in modules:
        for statement in statements_of(doc, module):
            actions = statement["Action"] if isinstance(statement["Action"], list) else [statement["Action"]]
            anything = statement["Resource"] == "*" or "*" in statement["Resource"]
            found = {a for a in actions if DESTROYS_OR_READS.match(a)} if anything else set()
            if found:
                holding.setdefault(module, set()).update(found)
    assert set(holding) == SWEEPERS, holding  # the exceptions are exactly these, and still needed
    for module in SWEEPERS:  # and they delete only what carries some run's tag
        for statement in statements_of(doc, module):
            if statement["Resource"] == "*" and "ec2:TerminateInstances" in statement["Action"]:
                assert statement["Condition"] == {"Null": {f"aws:ResourceTag/{TAG}": "false"}}, statement


TRUST_POLICY_LIMIT = 2048  # IAM's default quota for a role trust policy (characters, whitespace not counted)


@pytest.mark.parametrize("role_prefix", ["Runner", "Teardown", "Operations", "Results"])
def test_each_run_roles_trust_policy_fits_iams_quota_with_the_longest_role_arns(
    stack: dict[str, Any], role_prefix: str
) -> None:
    doc = stack
    role = _logical(doc, "AWS::IAM::Role", f"Isolation{role_prefix}RunRole")
    longest = "arn:aws:iam::123456789012:role/" + "r" * 64  # a role name is at most 64 characters
    arns = {(logical, "Arn"): longest for logical in resources(doc, "AWS::IAM::Role")}
    trust = Resolver(template=doc, attrs=arns).resolve(
        doc["Resources"][role]["Properties"]["AssumeRolePolicyDocument"]
    )
    text = json.dumps(trust, separators=(",", ":"))
    assert longest in text and "Fn::" not in text, text[:300]
    assert len(text) < TRUST_POLICY_LIMIT, (role, len(text))
