"""CDK assertions on what keeps a run from leaking or repeating: the abort/timeout teardown rule,
its Lambda's least privilege, and launch idempotency's IAM (the tests share conftest's synth)."""

from __future__ import annotations

from typing import Any

from tests.infra.test_stack import actions_of, resources, statements_of


def logical_of_handler(doc: dict[str, Any], handler: str) -> str:
    return next(
        name
        for name, f in resources(doc, "AWS::Lambda::Function").items()
        if f["Properties"]["Handler"] == handler
    )


def test_aborted_and_timed_out_executions_of_both_machines_reach_the_teardown_lambda(stack: Any) -> None:
    _, doc = stack
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
    _, doc = stack
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
    _, doc = stack
    statements = statements_of(doc, "launch_runner")
    (list_tasks,) = [st for st in statements if "ecs:ListTasks" in actions_of([st])]
    assert "ecs:cluster" in str(list_tasks["Condition"])
    assert "ec2:DescribeInstances" in actions_of(statements)
