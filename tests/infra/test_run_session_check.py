"""The rehearsal's check of run-scoped sessions (rehearse/run_sessions.py) on a moto server, with the
run-scoped roles' statements from the synthesized stack: run A's sessions, made by the same code the
runner, Teardown and CheckOperations use (providers/aws/run_session.py), read and delete their own
run's resources, and are denied run B's secret, prefix, database, instance and network interface: AccessDenied to the caller, and a denial in
``hooks.denials``, which fails a rehearsal (tests/rehearse/conftest.py asserts none).

moto alone would allow all of it (it keeps no session tags and takes every condition as met): the
last test shows the same calls pass when the hook is not installed, so it is the check that denies.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError

from benchwright.providers.aws.names import RUN_ID_TAG
from benchwright.providers.aws.run_session import run_session
from benchwright.rehearse import run_sessions
from benchwright.rehearse.account import Account
from benchwright.rehearse.hooks import Hooks, configure_moto
from benchwright.rehearse.services import iam as iam_checks
from benchwright.rehearse.stack import ACCOUNT, REGION, Resolver
from tests.aws_world import moto_endpoint
from tests.infra.test_stack import resources

RUN_A, RUN_B = "20261129-030000-aaaaaa", "20261129-030000-bbbbbb"
BUCKET = "bw-results"


def resolver_of(doc: dict[str, Any]) -> Resolver:
    """Roles named by their logical ids, the results bucket as BUCKET."""
    attrs = {
        (logical, "Arn"): f"arn:aws:iam::{ACCOUNT}:role/{logical}"
        for logical in resources(doc, "AWS::IAM::Role")
    }
    (bucket,) = [k for k in resources(doc, "AWS::S3::Bucket") if k.startswith("StorageResults")]
    attrs[(bucket, "Arn")] = f"arn:aws:s3:::{BUCKET}"
    return Resolver(template=doc, attrs=attrs)


def template_roles(doc: dict[str, Any]) -> tuple[dict[str, list[dict[str, Any]]], str, str]:
    """The run-scoped roles' statements as the rehearsal reads them; the runner's and teardown's ARNs."""
    roles = run_sessions.run_roles(doc, resolver_of(doc))
    (runner,) = [arn for arn in roles if "IsolationRunnerRunRole" in arn]
    (teardown,) = [arn for arn in roles if "IsolationTeardownRunRole" in arn]
    return roles, runner, teardown


@pytest.fixture
def moto(
    stack: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[Hooks, str, str]]:
    """A moto server with the rehearsal's IAM hooks and the stack's run-scoped roles."""
    sign_as_the_rehearsal(monkeypatch)
    configure_moto()
    with moto_endpoint(reset=True) as endpoint:
        monkeypatch.setenv("AWS_ENDPOINT_URL", endpoint)
        account = Account(endpoint=endpoint, resolver=Resolver(template={}))
        hooks = Hooks(account=account, containers=None, image="", out_dir=tmp_path)  # type: ignore[arg-type]
        hooks.run_roles, runner, teardown = template_roles(stack)
        hooks.account.resolver = resolver_of(stack)
        try:
            iam_checks.install(hooks)
            run_sessions.install(hooks)
            yield hooks, runner, teardown
        finally:
            hooks.uninstall()


def sign_as_the_rehearsal(monkeypatch: pytest.MonkeyPatch) -> None:
    """The keys the rehearsal itself signs with, in its region."""
    for key in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        monkeypatch.setenv(key, "rehearsal")
    monkeypatch.delenv("AWS_SESSION_TOKEN", raising=False)
    monkeypatch.setenv("AWS_DEFAULT_REGION", REGION)


def tagged(run: str) -> list[dict[str, str]]:
    return [{"Key": RUN_ID_TAG, "Value": run}]


def two_runs() -> dict[str, dict[str, str]]:
    """A secret, a database, an instance and a network interface of each run, made with the
    rehearsal's own keys."""
    made: dict[str, dict[str, str]] = {}
    ec2 = boto3.client("ec2")
    vpc = ec2.create_vpc(CidrBlock="10.9.0.0/16")["Vpc"]["VpcId"]
    subnet = ec2.create_subnet(VpcId=vpc, CidrBlock="10.9.1.0/24")["Subnet"]["SubnetId"]
    for run in (RUN_A, RUN_B):
        name = run[-6:]
        secret = boto3.client("secretsmanager").create_secret(
            Name=f"db-{name}", SecretString="{}", Tags=tagged(run)
        )
        boto3.client("rds").create_db_instance(
            DBInstanceIdentifier=f"bw-{name}", DBInstanceClass="db.t3.micro", Engine="postgres",
            MasterUsername="u", MasterUserPassword="password1", AllocatedStorage=20, Tags=tagged(run),
        )  # fmt: skip
        instance = boto3.client("ec2").run_instances(
            ImageId="ami-12c6146b", MinCount=1, MaxCount=1,
            TagSpecifications=[{"ResourceType": "instance", "Tags": tagged(run)}],
        )["Instances"][0]["InstanceId"]  # fmt: skip
        eni = ec2.create_network_interface(
            SubnetId=subnet, TagSpecifications=[{"ResourceType": "network-interface", "Tags": tagged(run)}]
        )["NetworkInterface"]["NetworkInterfaceId"]
        made[run] = {"secret": secret["ARN"], "db": f"bw-{name}", "instance": instance, "eni": eni}
    boto3.client("s3").create_bucket(Bucket=BUCKET)
    return made


def denied(call: Any, **kwargs: Any) -> bool:
    try:
        call(**kwargs)
    except ClientError as exc:  # moto answers AccessDenied in one XML shape, which not every protocol
        if exc.response["ResponseMetadata"]["HTTPStatusCode"] == 403:  # parses: its status is the answer
            return True
        raise
    return False


def test_run_a_is_denied_run_b_and_allowed_its_own(moto: tuple[Hooks, str, str]) -> None:
    hooks, runner_role, teardown_role = moto
    runs = two_runs()
    runner = run_session(runner_role, RUN_A, "runner")
    teardown = run_session(teardown_role, RUN_A, "teardown")
    secrets, s3 = runner.client("secretsmanager"), runner.client("s3")
    rds, ec2 = teardown.client("rds"), teardown.client("ec2")
    a, b = runs[RUN_A], runs[RUN_B]

    assert denied(secrets.get_secret_value, SecretId=b["secret"])
    assert denied(s3.put_object, Bucket=BUCKET, Key=f"runs/{RUN_B}/c/result.json", Body=b"{}")
    assert denied(s3.list_objects_v2, Bucket=BUCKET, Prefix=f"runs/{RUN_B}/")
    assert denied(rds.delete_db_instance, DBInstanceIdentifier=b["db"], SkipFinalSnapshot=True)
    assert denied(ec2.terminate_instances, InstanceIds=[b["instance"]])
    assert denied(ec2.terminate_instances, InstanceIds=[a["instance"], b["instance"]])  # one of two is enough
    assert denied(rds.describe_db_instances)  # nothing the run role does not grant at all
    denials = {(d["action"], d["resource"]) for d in hooks.denials}
    assert ("secretsmanager:GetSecretValue", b["secret"]) in denials
    assert ("s3:PutObject", f"arn:aws:s3:::{BUCKET}/runs/{RUN_B}/c/result.json") in denials
    assert ("rds:DeleteDBInstance", f"arn:aws:rds:{REGION}:{ACCOUNT}:db:{b['db']}") in denials
    assert all(f"[{RUN_ID_TAG}={RUN_A}]" in d["principal"] for d in hooks.denials), hooks.denials
    assert not hooks.run_unchecked, hooks.run_unchecked

    hooks.denials.clear()
    assert not denied(secrets.get_secret_value, SecretId=a["secret"])
    assert not denied(s3.put_object, Bucket=BUCKET, Key=f"runs/{RUN_A}/c/result.json", Body=b"{}")
    assert not denied(s3.list_objects_v2, Bucket=BUCKET, Prefix=f"runs/{RUN_A}/")
    assert not denied(rds.delete_db_instance, DBInstanceIdentifier=a["db"], SkipFinalSnapshot=True)
    assert not denied(ec2.terminate_instances, InstanceIds=[a["instance"]])
    assert hooks.denials == [] and not hooks.run_unchecked
    # a database already gone (a repeated teardown): no tags to decide on, moto's NotFound, listed
    with pytest.raises(ClientError, match="DBInstanceNotFound"):
        rds.delete_db_instance(DBInstanceIdentifier="bw-gone", SkipFinalSnapshot=True)
    assert hooks.denials == [] and [u["action"] for u in hooks.run_unchecked] == ["rds:DeleteDBInstance"]
    assert len(hooks.run_sessions) == 2  # the runner's and the teardown's, each seen at AssumeRole


def test_the_operations_and_teardown_sessions_reach_their_run_s_secret_and_interface_only(
    moto: tuple[Hooks, str, str],
) -> None:
    """CheckOperations reads the probe's secret and terminates node_replace's old node through
    OperationsRunRole; Teardown deletes the nodes' interfaces through TeardownRunRole."""
    hooks, _, teardown_role = moto
    (operations_role,) = [arn for arn in hooks.run_roles if "IsolationOperationsRunRole" in arn]
    runs = two_runs()
    a, b = runs[RUN_A], runs[RUN_B]
    operations = run_session(operations_role, RUN_A, "check-operations")
    secrets, ops_ec2 = operations.client("secretsmanager"), operations.client("ec2")
    enis = run_session(teardown_role, RUN_A, "teardown").client("ec2")

    assert denied(secrets.get_secret_value, SecretId=b["secret"])
    assert denied(ops_ec2.terminate_instances, InstanceIds=[b["instance"]])
    assert denied(enis.delete_network_interface, NetworkInterfaceId=b["eni"])
    assert denied(ops_ec2.delete_network_interface, NetworkInterfaceId=a["eni"])  # not the operations' job
    denials = {(d["action"], d["resource"]) for d in hooks.denials}
    assert ("secretsmanager:GetSecretValue", b["secret"]) in denials
    eni_arn = f"arn:aws:ec2:{REGION}:{ACCOUNT}:network-interface/{b['eni']}"
    assert ("ec2:DeleteNetworkInterface", eni_arn) in denials
    assert ("ec2:TerminateInstances", f"arn:aws:ec2:{REGION}:{ACCOUNT}:instance/{b['instance']}") in denials
    assert not hooks.run_unchecked, hooks.run_unchecked

    hooks.denials.clear()
    assert not denied(secrets.get_secret_value, SecretId=a["secret"])
    assert not denied(ops_ec2.terminate_instances, InstanceIds=[a["instance"]])
    assert not denied(enis.delete_network_interface, NetworkInterfaceId=a["eni"])
    assert hooks.denials == [] and not hooks.run_unchecked
    assert boto3.client("ec2").describe_network_interfaces(NetworkInterfaceIds=[b["eni"]])[
        "NetworkInterfaces"
    ]


def test_without_the_check_moto_would_allow_run_b(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same session reading run B's secret, on a moto server without the hooks: allowed."""
    sign_as_the_rehearsal(monkeypatch)
    with moto_endpoint(reset=True) as endpoint:
        monkeypatch.setenv("AWS_ENDPOINT_URL", endpoint)
        secret = boto3.client("secretsmanager").create_secret(Name="b", SecretString="{}", Tags=tagged(RUN_B))
        session = run_session(f"arn:aws:iam::{ACCOUNT}:role/IsolationRunnerRunRole", RUN_A, "runner")
        assert (
            session.client("secretsmanager").get_secret_value(SecretId=secret["ARN"])["SecretString"] == "{}"
        )


def test_the_runner_task_assumes_its_run_role_as_the_trust_policy_names_it(
    moto: tuple[Hooks, str, str], stack: dict[str, Any]
) -> None:
    """The runner task role's session (how ECS hands a task its role) assumes RunnerRunRole, whose
    synthesized trust policy names the task ROLE: IAM matches a role's sessions, moto only the exact
    ARN (services/iam.py makes it match). Another role's session is denied, as on AWS."""
    import json

    hooks, runner_role, _ = moto
    doc, resolver = stack, hooks.account.resolver
    iam = boto3.client("iam")
    logical = runner_role.rsplit("/", 1)[-1]
    trust = resolver.resolve(doc["Resources"][logical]["Properties"]["AssumeRolePolicyDocument"])
    iam.create_role(RoleName=logical, AssumeRolePolicyDocument=json.dumps(trust))
    (task,) = [k for k in resources(doc, "AWS::IAM::Role") if k.startswith("ComputeRunnerTaskRole")]
    anyone = {"Effect": "Allow", "Principal": {"AWS": "*"}, "Action": "sts:AssumeRole"}
    grant = {"Effect": "Allow", "Action": ["sts:AssumeRole", "sts:TagSession"], "Resource": runner_role}
    for name in (task, "SomeOtherRole"):
        iam.create_role(
            RoleName=name,
            AssumeRolePolicyDocument=json.dumps({"Version": "2012-10-17", "Statement": [anyone]}),
        )
        iam.put_role_policy(
            RoleName=name,
            PolicyName="assume",
            PolicyDocument=json.dumps({"Version": "2012-10-17", "Statement": [grant]}),
        )

    def session_of(role: str, who: str) -> Any:
        keys = boto3.client("sts").assume_role(
            RoleArn=f"arn:aws:iam::{ACCOUNT}:role/{role}", RoleSessionName="s1"
        )
        found = keys["Credentials"]
        hooks.sessions[found["AccessKeyId"]] = who
        return boto3.session.Session(
            aws_access_key_id=found["AccessKeyId"], aws_secret_access_key=found["SecretAccessKey"],
            aws_session_token=found["SessionToken"], region_name=REGION,
        )  # fmt: skip

    session = run_session(runner_role, RUN_A, "runner", base=session_of(task, "runner task"))
    assert f"assumed-role/{logical}/bw-runner-{RUN_A}" in session.client("sts").get_caller_identity()["Arn"]
    assert hooks.denials == [], hooks.denials
    (run,) = hooks.run_sessions.values()
    assert run.tags == {RUN_ID_TAG: RUN_A} and run.caller == "runner task"
    sts = session_of("SomeOtherRole", "someone else").client("sts")
    tags = [{"Key": RUN_ID_TAG, "Value": RUN_B}]
    assert denied(sts.assume_role, RoleArn=runner_role, RoleSessionName="s2", Tags=tags)
    assert [d["action"] for d in hooks.denials] == ["sts:AssumeRole"]
