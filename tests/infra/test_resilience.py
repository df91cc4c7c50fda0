"""CDK assertions on what keeps a run from leaking or repeating: the abort/timeout teardown rule,
its Lambda's least privilege, and launch idempotency's IAM (the tests share conftest's synth)."""

from __future__ import annotations

import json
from typing import Any

from benchwright.providers.aws.names import RESOURCE_PREFIX, RUN_ID_TAG
from tests.infra.test_stack import actions_of, resources, statements_of


def logical_of_handler(doc: dict[str, Any], handler: str) -> str:
    return next(
        name
        for name, f in resources(doc, "AWS::Lambda::Function").items()
        if f["Properties"]["Handler"] == handler
    )


def test_aborted_and_timed_out_executions_of_both_machines_reach_the_teardown_lambda(stack: Any) -> None:
    doc = stack
    machines = sorted(resources(doc, "AWS::StepFunctions::StateMachine"))
    function = logical_of_handler(doc, "functions.abort_teardown.handler")
    rules = [
        r["Properties"]
        for r in resources(doc, "AWS::Events::Rule").values()
        if r["Properties"].get("EventPattern", {}).get("source") == ["aws.states"]
    ]
    assert len(rules) == 1
    pattern = rules[0]["EventPattern"]
    assert pattern["detail-type"] == ["Step Functions Execution Status Change"]
    assert sorted(pattern["detail"]["status"]) == ["ABORTED", "TIMED_OUT"]
    assert sorted(ref["Ref"] for ref in pattern["detail"]["stateMachineArn"]) == machines
    (target,) = rules[0]["Targets"]
    assert target["Arn"] == {"Fn::GetAtt": [function, "Arn"]}
    assert target["RetryPolicy"]["MaximumRetryAttempts"] >= 2
    permissions = [
        p["Properties"]
        for p in resources(doc, "AWS::Lambda::Permission").values()
        if p["Properties"]["FunctionName"] == {"Fn::GetAtt": [function, "Arn"]}
    ]
    assert [p["Principal"] for p in permissions] == ["events.amazonaws.com"]


def test_the_abort_lambda_tears_down_by_tag_and_reads_only_our_executions(stack: Any) -> None:
    doc = stack
    statements = statements_of(doc, "abort_teardown")
    actions = actions_of(statements)
    assert {"states:GetExecutionHistory", "rds:DeleteDBInstance", "ecs:StopTask", "ec2:TerminateInstances",
            "elasticache:DeleteReplicationGroup", "memorydb:DeleteCluster", "ecs:ListTasks"} <= actions  # fmt: skip
    assert not {"rds:CreateDBInstance", "ecs:RunTask", "states:StartExecution"} & actions
    for st in statements:
        if "rds:DeleteDBInstance" in actions_of([st]):
            assert st["Condition"] == {"Null": {"aws:ResourceTag/benchwright:run-id": "false"}}
        if "states:GetExecutionHistory" in actions_of([st]):
            assert ":execution:" in str(st["Resource"])


def test_a_retried_launch_may_look_for_its_runner_in_our_cluster_only(stack: Any) -> None:
    doc = stack
    statements = statements_of(doc, "launch_runner")
    (list_tasks,) = [st for st in statements if "ecs:ListTasks" in actions_of([st])]
    assert "ecs:cluster" in str(list_tasks["Condition"])
    assert "ec2:DescribeInstances" in actions_of(statements)


def _statements(doc: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    out = []
    for name, policy in resources(doc, "AWS::IAM::Policy").items():
        out += [(name, st) for st in policy["Properties"]["PolicyDocument"]["Statement"]]
    return out


def test_no_policy_grants_every_rds_managed_secret(stack: Any) -> None:
    """Fault 9: ``secret:rds!*`` is every RDS-managed password in the account."""
    doc = stack
    assert "rds!" not in json.dumps(doc)
    readers = [(n, st) for n, st in _statements(doc) if "secretsmanager:GetSecretValue" in actions_of([st])]
    assert readers
    for name, st in readers:
        if st["Resource"] == "*":  # then only secrets tagged as ours: a run's, or our databases'
            condition = json.dumps(st["Condition"])
            assert RUN_ID_TAG in condition or f"{RESOURCE_PREFIX}*" in condition, (name, st)
            own_run = {  # a run-scoped session (infra/isolation.py): its own run's secret only
                "StringEquals": {
                    f"secretsmanager:ResourceTag/{RUN_ID_TAG}": f"${{aws:PrincipalTag/{RUN_ID_TAG}}}"
                }
            }
            assert (
                "aws:rds:primaryDB" in condition or "Null" in st["Condition"] or st["Condition"] == own_run
            ), (
                name,
                st,
            )
    creators = [(n, st) for n, st in _statements(doc) if "secretsmanager:CreateSecret" in actions_of([st])]
    assert creators
    for name, st in creators:
        assert st["Condition"] == {"Bool": {"aws:ViaAWSService": "true"}}, name


def test_the_runner_reads_only_the_secret_of_its_own_run(stack: Any) -> None:
    """The runner's task role reads no secret itself (issue 30): its run-scoped session reads the
    secret whose run tag equals its session's (infra/isolation.py), and nothing else."""
    doc = stack
    roles = [
        name
        for name, r in resources(doc, "AWS::IAM::Role").items()
        if "ecs-tasks.amazonaws.com" in json.dumps(r["Properties"]["AssumeRolePolicyDocument"])
        and "Runner" in name
        and "Execution" not in name
    ]
    assert roles
    by_role: dict[str, list[Any]] = {}
    for policy in resources(doc, "AWS::IAM::Policy").values():
        for ref in policy["Properties"]["Roles"]:
            for st in policy["Properties"]["PolicyDocument"]["Statement"]:
                if "secretsmanager:GetSecretValue" in actions_of([st]):
                    by_role.setdefault(str(ref.get("Ref")), []).append(st)
    assert roles[0] not in by_role
    (run_role,) = [r for r in by_role if r.startswith("IsolationRunnerRunRole")]
    (statement,) = by_role[run_role]
    assert statement["Condition"] == {
        "StringEquals": {f"secretsmanager:ResourceTag/{RUN_ID_TAG}": f"${{aws:PrincipalTag/{RUN_ID_TAG}}}"}
    }


def test_the_budget_filters_on_the_stage_tag_every_run_resource_carries(stack: Any) -> None:
    """Fault 10: the Budget filtered on a tag no target carried. The run's resources get their tags
    from lifecycle_tags, with the stage the stack hands every Lambda (BENCHWRIGHT_STAGE)."""
    from benchwright.providers.aws.common import lifecycle_tags
    from benchwright.providers.aws.config import AwsSettings
    from benchwright.providers.aws.names import STAGE_TAG

    doc = stack
    (budget,) = resources(doc, "AWS::Budgets::Budget").values()
    (wanted,) = budget["Properties"]["Budget"]["CostFilters"]["TagKeyValue"]
    key, stage = wanted.removeprefix("user:").split("$")
    provision = next(
        f for f in resources(doc, "AWS::Lambda::Function").values()
        if f["Properties"]["Handler"] == "functions.provision_target.handler"
    )  # fmt: skip
    settings = AwsSettings(stage=provision["Properties"]["Environment"]["Variables"]["BENCHWRIGHT_STAGE"])
    assert key == STAGE_TAG and settings.stage == stage == "dev"
    assert lifecycle_tags(settings, "run-1")[key] == stage
