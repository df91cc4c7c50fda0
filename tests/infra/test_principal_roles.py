"""What the rehearsal cannot check of the principals it signs as (rehearse/principals.py): moto gives
Lambda calls no resource, so the state machine roles' ``lambda:InvokeFunction`` is evaluated by action
only there. Here the template holds each state machine role to the functions its own definition
invokes (and their versions), nothing else; and every principal the rehearsal signs as is found."""

from __future__ import annotations

import re
from typing import Any

from benchwright.rehearse.principals import RUNNER_EC2, RUNNER_TASK, principal_roles
from benchwright.rehearse.stack import Resolver
from tests.infra.test_stack import resources


def _role_statements(doc: dict[str, Any], role: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for policy in resources(doc, "AWS::IAM::Policy").values():
        if {"Ref": role} in policy["Properties"]["Roles"]:
            out += policy["Properties"]["PolicyDocument"]["Statement"]
    return out


def test_each_state_machine_role_invokes_only_the_functions_of_its_definition(
    stack: dict[str, Any],
) -> None:
    doc = stack
    machines = resources(doc, "AWS::StepFunctions::StateMachine")
    assert len(machines) == 2
    for machine in machines.values():
        props = machine["Properties"]
        used = {
            value["Fn::GetAtt"][0]
            for key, value in props["DefinitionSubstitutions"].items()
            if key.endswith("FunctionArn")
        }
        placeholders = set(re.findall(r"\$\{([A-Za-z]+FunctionArn)\}", str(props["DefinitionString"])))
        assert placeholders == {k for k in props["DefinitionSubstitutions"] if k.endswith("FunctionArn")}
        role = props["RoleArn"]["Fn::GetAtt"][0]
        invoke = [s for s in _role_statements(doc, role) if "lambda:InvokeFunction" in str(s["Action"])]
        assert len(invoke) == 1 and invoke[0]["Action"] == "lambda:InvokeFunction", invoke
        granted: set[str] = set()
        for resource in invoke[0]["Resource"]:
            if "Fn::GetAtt" in resource:
                granted.add(resource["Fn::GetAtt"][0])
            else:  # the function's versions and aliases: ARN + ":*"
                parts = resource["Fn::Join"][1]
                assert parts[1] == ":*", resource
                granted.add(parts[0]["Fn::GetAtt"][0])
        assert granted == used, granted ^ used


def test_the_rehearsal_signs_as_the_runner_task_the_ec2_runner_and_both_state_machines(
    stack: dict[str, Any],
) -> None:
    doc = stack
    resolver = Resolver(template=doc)
    for logical in resources(doc, "AWS::IAM::Role"):
        resolver.refs[logical] = logical
        resolver.attrs[(logical, "Arn")] = f"arn:aws:iam::123456789012:role/{logical}"
    found = principal_roles(doc, resolver)
    kinds = sorted(found.values())
    assert kinds == sorted([RUNNER_TASK, RUNNER_EC2, "Benchmark state machine", "Suite state machine"])
    by_kind = {who: arn.rsplit("/", 1)[-1] for arn, who in found.items()}
    assert by_kind[RUNNER_TASK].startswith("ComputeRunnerTaskRole")
    assert by_kind[RUNNER_EC2].startswith("ComputeRunnerInstanceRole")


def test_the_runners_own_roles_reach_no_run_data_but_through_a_run_session(
    stack: dict[str, Any],
) -> None:
    """Issue 30: the runner task role and the EC2 runner's instance role grant no bucket object and
    no secret of any run: the runner reads its plan and secret and writes its output only as a
    session of RunnerRunRole tagged with its run (infra/isolation.py). Besides that session, the
    instance role pulls the image (ECR); the task role has nothing else (ECS pulls as the execution role)."""
    doc = stack
    roles = resources(doc, "AWS::IAM::Role")
    task = next(n for n in roles if n.startswith("ComputeRunnerTaskRole"))
    host = next(n for n in roles if n.startswith("ComputeRunnerInstanceRole"))
    for role, services in ((task, {"sts"}), (host, {"sts", "ecr"})):
        found = {str(a).split(":", 1)[0] for s in _role_statements(doc, role) for a in _actions(s)}
        assert found == services, (role, found)
        sts = [s for s in _role_statements(doc, role) if "sts:" in str(s["Action"])]
        assert [sorted(_actions(s)) for s in sts] == [["sts:AssumeRole", "sts:TagSession"]], sts
        assert str(sts[0]["Resource"]["Fn::GetAtt"][0]).startswith("IsolationRunnerRunRole"), sts


def _actions(statement: dict[str, Any]) -> list[str]:
    action = statement["Action"]
    return action if isinstance(action, list) else [action]
