"""CDK assertions on the EC2 path (fault 7): the AMI comes from AWS's public SSM parameter and reaches
the Lambdas that launch runners and targets; target hosts may install at boot (HTTPS out) and the
nodes of a self-managed cluster may open connections to each other (security-group self-reference);
the runner host may pull the runner image. The synth is conftest's shared one."""

from __future__ import annotations

import json
from typing import Any

from tests.infra.test_stack import actions_of, resources

AL2023 = "/aws/service/ami-amazon-linux-latest/al2023-ami-kernel-"


def lambda_env(doc: dict[str, Any], handler: str) -> dict[str, Any]:
    fn = next(
        f for f in resources(doc, "AWS::Lambda::Function").values() if f["Properties"]["Handler"] == handler
    )
    return dict(fn["Properties"]["Environment"]["Variables"])


def test_runners_and_targets_boot_the_latest_al2023_from_the_public_ssm_parameter(stack: Any) -> None:
    doc = stack
    params = {
        name: p
        for name, p in doc["Parameters"].items()
        if p["Type"] == "AWS::SSM::Parameter::Value<AWS::EC2::Image::Id>"
    }
    assert len(params) == 1
    ((name, param),) = params.items()
    assert param["Default"].startswith(AL2023) and param["Default"].endswith("-x86_64")
    for handler in ("functions.launch_runner.handler", "functions.provision_target.handler"):
        env = lambda_env(doc, handler)
        assert env["BENCHWRIGHT_RUNNER_AMI"] == {"Ref": name}, handler
        assert env["BENCHWRIGHT_RUNNER_IMAGE"] and env["BENCHWRIGHT_EGRESS"] == "nat"
    (template,) = resources(doc, "AWS::EC2::LaunchTemplate").values()
    data = template["Properties"]["LaunchTemplateData"]
    assert data["ImageId"] == {"Ref": name} and data["Monitoring"] == {"Enabled": True}


def target_sg(doc: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    return next(
        (name, sg)
        for name, sg in resources(doc, "AWS::EC2::SecurityGroup").items()
        if "Benchwright targets" in sg["Properties"]["GroupDescription"]
    )


def test_target_nodes_may_install_at_boot_and_reach_each_other(stack: Any) -> None:
    doc = stack
    name, sg = target_sg(doc)
    egress = sg["Properties"]["SecurityGroupEgress"]
    assert {"CidrIp": "0.0.0.0/0", "IpProtocol": "tcp", "FromPort": 443, "ToPort": 443} in [
        {k: e[k] for k in ("CidrIp", "IpProtocol", "FromPort", "ToPort") if k in e} for e in egress
    ]
    assert not any(e.get("IpProtocol") == "-1" for e in egress)  # not "all traffic anywhere"
    own = {"Fn::GetAtt": [name, "GroupId"]}
    self_egress = [
        r["Properties"]
        for r in resources(doc, "AWS::EC2::SecurityGroupEgress").values()
        if r["Properties"]["GroupId"] == own and r["Properties"].get("DestinationSecurityGroupId") == own
    ]
    self_ingress = [
        r["Properties"]
        for r in resources(doc, "AWS::EC2::SecurityGroupIngress").values()
        if r["Properties"]["GroupId"] == own and r["Properties"].get("SourceSecurityGroupId") == own
    ]
    for rules in (self_egress, self_ingress):
        assert [(r["FromPort"], r["ToPort"]) for r in rules] == [(7000, 9100)]  # master 7100, tserver 9100


def test_the_runner_host_may_pull_the_runner_image(stack: Any) -> None:
    """The EC2 runner's instance role pulls the image and assumes the run's role; the run's plan,
    secret and output are reached only through that session (issue 30), never by the host itself."""
    doc = stack
    role = next(
        name
        for name, r in resources(doc, "AWS::IAM::Role").items()
        if "ec2.amazonaws.com" in json.dumps(r["Properties"]["AssumeRolePolicyDocument"])
        and "RunnerInstanceRole" in name
    )
    statements = [
        st
        for policy in resources(doc, "AWS::IAM::Policy").values()
        if {"Ref": role} in policy["Properties"]["Roles"]
        for st in policy["Properties"]["PolicyDocument"]["Statement"]
    ]
    granted = actions_of(statements)
    assert {"ecr:GetAuthorizationToken", "ecr:BatchGetImage", "sts:AssumeRole", "sts:TagSession"} <= granted
    assert not {"s3:PutObject", "s3:GetObject", "secretsmanager:GetSecretValue"} & granted
