"""Run-scoped sessions (issue 30 item 5) on a moto server: the runner reads its plan, its secret and
writes its output, and Teardown deletes, through AssumeRole on the run-scoped role with the session
tag ``benchwright:run-id``; LaunchRunner tags the database secret with the run it launches for.

moto answers AssumeRole but neither checks trust policies nor keeps session tags, so what is asserted
here is what the code sends (the AssumeRole request, seen by botocore's own event hook) and which
session each call is signed with (the access key id in the request's signature); that the run role
then denies another run's resources is tests/infra/test_run_isolation.py and the rehearsal's check.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from benchwright.errors import SpecError, TargetUnreachable
from benchwright.providers.aws.common import Clients
from benchwright.providers.aws.config import AwsSettings
from benchwright.providers.aws.launcher import AwsRunnerLauncher
from benchwright.providers.aws.names import RUN_ID_TAG
from benchwright.providers.aws.run_session import (
    RUN_ID_ENV,
    RUN_ROLE_ENV,
    RunScopedClients,
    run_scoped_clients,
    run_session,
    run_tags,
    teardown_clients,
)
from benchwright.providers.base import Credentials
from benchwright.runner import main as runner_main
from benchwright.runner.entry import PASSWORD_ENV, SECRET_ARN_ENV
from benchwright.runner.plan import RunnerPlan
from benchwright.spec.runners import RunnerSpec
from tests.aws_world import moto_endpoint
from tests.conftest import FAKE_AWS_ENV

RUN_A, RUN_B = "20261129-030000-aaaaaa", "20261129-030000-bbbbbb"
TRUST = {
    "Version": "2012-10-17",
    "Statement": [
        {"Effect": "Allow", "Principal": {"AWS": "*"}, "Action": ["sts:AssumeRole", "sts:TagSession"]}
    ],
}


@pytest.fixture
def moto(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A moto server on 127.0.0.1 with a run-scoped role; its ARN."""
    import boto3

    with moto_endpoint(reset=True) as endpoint:
        for key, value in FAKE_AWS_ENV.items():
            monkeypatch.setenv(key, value)
        monkeypatch.setenv("AWS_ENDPOINT_URL", endpoint)
        runner_main._RUN_SESSION.clear()
        runner_main._RUN_CLIENTS.clear()
        try:
            role = boto3.client("iam").create_role(
                RoleName="RunnerRunRole", AssumeRolePolicyDocument=json.dumps(TRUST)
            )
            yield str(role["Role"]["Arn"])
        finally:
            runner_main._RUN_SESSION.clear()
            runner_main._RUN_CLIENTS.clear()


def watch(session: Any, seen: list[tuple[str, dict[str, Any]]]) -> None:
    """Record every request made through ``session``: the operation and its parameters."""
    session.events.register(
        "provide-client-params.*.*", lambda params, model, **_: seen.append((model.name, dict(params)))
    )


def signer_key(client: Any) -> str:
    """The access key id a client signs with."""
    return str(client._request_signer._credentials.get_frozen_credentials().access_key)


def test_a_run_session_is_assumed_with_the_run_tag_and_signs_as_the_role(moto: str) -> None:
    import boto3

    base = boto3.session.Session()
    seen: list[tuple[str, dict[str, Any]]] = []
    watch(base, seen)
    session = run_session(moto, RUN_A, "runner", base=base)
    identity = session.client("sts").get_caller_identity()
    assert ":assumed-role/RunnerRunRole/bw-runner-" + RUN_A in identity["Arn"]
    (assumed,) = [params for op, params in seen if op == "AssumeRole"]
    assert assumed["RoleArn"] == moto
    assert assumed["Tags"] == [{"Key": RUN_ID_TAG, "Value": RUN_A}]
    assert "TransitiveTagKeys" not in assumed
    assert signer_key(session.client("s3")) != signer_key(base.client("s3"))


@pytest.mark.parametrize("bad", ["", "a b;c", "x" * 257, "run\n1", "run$(id)"])
def test_a_run_id_iam_would_refuse_as_a_tag_is_refused_by_name(bad: str) -> None:
    with pytest.raises(SpecError, match="run_id"):
        run_tags(bad)


def test_teardown_deletes_through_the_run_session_and_describes_as_itself(moto: str) -> None:
    import boto3

    standing = Clients(AwsSettings(region="us-east-1", teardown_run_role_arn=moto), boto3.session.Session())
    assert teardown_clients(Clients(AwsSettings(region="us-east-1")), RUN_A).__class__ is Clients
    scoped = teardown_clients(standing, RUN_A)
    assert isinstance(scoped, RunScopedClients)
    rds, ec2, s3 = scoped("rds"), scoped("ec2"), scoped("s3")
    own = signer_key(standing("rds"))
    deletes = (rds.delete_db_instance, rds.delete_db_parameter_group, ec2.terminate_instances,
               ec2.delete_network_interface)  # fmt: skip
    for deleting in deletes:
        assert signer_key(deleting.__self__) != own, deleting
    assert signer_key(rds.describe_db_instances.__self__) == own
    assert signer_key(ec2.describe_instances.__self__) == own
    assert s3 is standing("s3")  # nothing of S3 is deleted by a teardown: the standing client itself
    # a real call through each path reaches moto (nothing to delete: the run session is accepted)
    assert rds.describe_db_instances()["DBInstances"] == []
    with pytest.raises(Exception, match="DBInstanceNotFound"):
        rds.delete_db_instance(DBInstanceIdentifier="bw-nothing", SkipFinalSnapshot=True)


def test_check_operations_reads_the_secret_and_deletes_through_its_run_session(moto: str) -> None:
    """CheckOperations' probe secret and deletes go through the operations role's session; its
    creates, describes and commands stay its own; a stage without a run role keeps its clients."""
    import boto3

    settings = AwsSettings(region="us-east-1", operations_run_role_arn=moto, teardown_run_role_arn=moto)
    standing = Clients(settings, boto3.session.Session())
    assert run_scoped_clients(standing, RUN_A, "check_target") is standing
    scoped = run_scoped_clients(standing, RUN_A, "check_operations")
    rds, ec2, sm = scoped("rds"), scoped("ec2"), scoped("secretsmanager")
    own = signer_key(standing("rds"))
    for run_call in (
        sm.get_secret_value,
        rds.delete_db_snapshot,
        rds.delete_db_instance,
        ec2.terminate_instances,
    ):
        assert signer_key(run_call.__self__) != own, run_call
    for own_call in (
        rds.create_db_snapshot,
        ec2.run_instances,
        ec2.create_network_interface,
        sm.describe_secret,
    ):
        assert signer_key(own_call.__self__) == own, own_call
    assert ec2.delete_network_interface.__self__ is standing("ec2")  # not the operations' job
    secret = boto3.client("secretsmanager").create_secret(Name="db-a", SecretString='{"password": "p"}')
    assert sm.get_secret_value(SecretId=secret["ARN"])["SecretString"] == '{"password": "p"}'
    assert "/bw-check-operations-" + RUN_A in scoped._session.client("sts").get_caller_identity()["Arn"]


def test_the_runner_reads_its_secret_and_plan_as_its_run(moto: str, monkeypatch: pytest.MonkeyPatch) -> None:
    import boto3

    secret = boto3.client("secretsmanager").create_secret(
        Name="db", SecretString=json.dumps({"username": "u", "password": "pw-of-a"})
    )["ARN"]
    env = {SECRET_ARN_ENV: secret, RUN_ROLE_ENV: moto, RUN_ID_ENV: RUN_A}
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    monkeypatch.delenv(PASSWORD_ENV, raising=False)
    runner_main.resolve_secret(env)
    assert env[PASSWORD_ENV] == "pw-of-a"
    (session,) = runner_main._RUN_SESSION
    assert "/bw-runner-" + RUN_A in session.client("sts").get_caller_identity()["Arn"]
    plan = RunnerPlan.model_validate({"run_id": RUN_B, "cell_id": "c", "phases": []})
    with pytest.raises(SpecError, match=RUN_ID_ENV):
        runner_main.check_run(plan, env)
    runner_main.check_run(plan.model_copy(update={"run_id": RUN_A}), env)


def test_the_runner_without_a_run_id_does_not_start(moto: str, monkeypatch: pytest.MonkeyPatch) -> None:
    env = {SECRET_ARN_ENV: "arn:aws:secretsmanager:us-east-1:123456789012:secret:x", RUN_ROLE_ENV: moto}
    monkeypatch.setenv(RUN_ROLE_ENV, moto)
    monkeypatch.delenv(RUN_ID_ENV, raising=False)
    with pytest.raises((SpecError, TargetUnreachable), match="run_id"):
        runner_main.resolve_secret(env)


def test_launch_tags_the_secret_with_its_run_and_tells_the_runner(moto: str) -> None:
    import boto3

    sm = boto3.client("secretsmanager")
    secret = sm.create_secret(Name="rds!db-1", SecretString="{}")["ARN"]
    settings = AwsSettings(region="us-east-1", runner_run_role_arn=moto)
    launcher = AwsRunnerLauncher(Clients(settings, boto3.session.Session()), settings, RunnerSpec())
    plan = RunnerPlan.model_validate({"run_id": RUN_A, "cell_id": "c", "phases": []})
    env = launcher._run_scope(plan, Credentials(secret_arn=secret))
    assert env == {RUN_ROLE_ENV: moto, RUN_ID_ENV: RUN_A}
    tags = {t["Key"]: t["Value"] for t in sm.describe_secret(SecretId=secret)["Tags"]}
    assert tags[RUN_ID_TAG] == RUN_A
    # the next cell of a suite measuring the same target owns the secret from its launch on
    launcher._run_scope(plan.model_copy(update={"run_id": RUN_B}), Credentials(secret_arn=secret))
    tags = {t["Key"]: t["Value"] for t in sm.describe_secret(SecretId=secret)["Tags"]}
    assert tags[RUN_ID_TAG] == RUN_B
    # without a run role (a stack before run-scoped roles): nothing tagged, nothing told
    plain = AwsSettings(region="us-east-1")
    other = sm.create_secret(Name="rds!db-2", SecretString="{}")["ARN"]
    launcher = AwsRunnerLauncher(Clients(plain, boto3.session.Session()), plain, RunnerSpec())
    assert launcher._run_scope(plan, Credentials(secret_arn=other)) == {}
    assert not sm.describe_secret(SecretId=other).get("Tags")


def test_a_stage_s_calls_on_its_run_s_objects_go_through_the_run_session_by_key(moto: str) -> None:
    """The stages that write a run's objects (RUN_SCOPED's results role): a key under
    ``runs/<this run>/`` is read, written, checked and listed as the run session; another run's
    key, the index keys and the site, and presigning, as the stage's own role."""
    import boto3

    settings = AwsSettings(region="us-east-1", results_run_role_arn=moto)
    standing = Clients(settings, boto3.session.Session())
    assert (
        run_scoped_clients(Clients(AwsSettings(region="us-east-1")), RUN_A, "judge_results").__class__
        is Clients
    )
    scoped = run_scoped_clients(standing, RUN_A, "store_results")
    assert isinstance(scoped, RunScopedClients)
    assert scoped("ec2") is standing("ec2")  # nothing but the bucket's run objects goes through it
    s3 = scoped("s3")
    seen: dict[str, list[tuple[str, str]]] = {"run": [], "own": []}
    for who, client in (("run", Clients.__call__(scoped, "s3")), ("own", standing("s3"))):
        client.meta.events.register(
            "provide-client-params.s3.*",
            lambda params, model, who=who, **_: seen[who].append(
                (model.name, str(params.get("Key", params.get("Prefix"))))
            ),
        )
    boto3.client("s3").create_bucket(Bucket="bw-results")
    mine, theirs = f"runs/{RUN_A}/record.json", f"runs/{RUN_B}/record.json"
    for key in (mine, theirs, f"history/spec/20261129T030000_{RUN_A}", "site/index.html"):
        s3.put_object(Bucket="bw-results", Key=key, Body=b"{}")
    assert s3.get_object(Bucket="bw-results", Key=mine)["Body"].read() == b"{}"
    s3.head_object(Bucket="bw-results", Key=theirs)
    listed = s3.list_objects_v2(Bucket="bw-results", Prefix=f"runs/{RUN_A}/")
    assert [o["Key"] for o in listed["Contents"]] == [mine]
    s3.generate_presigned_url("get_object", Params={"Bucket": "bw-results", "Key": mine})
    assert seen["run"] == [("PutObject", mine), ("GetObject", mine), ("ListObjectsV2", f"runs/{RUN_A}/")]
    assert seen["own"] == [
        ("PutObject", theirs), ("PutObject", f"history/spec/20261129T030000_{RUN_A}"),
        ("PutObject", "site/index.html"), ("HeadObject", theirs), ("GetObject", mine),
    ]  # fmt: skip
    # a run id that only starts like this run's is another run
    s3.put_object(Bucket="bw-results", Key=f"runs/{RUN_A}x/record.json", Body=b"{}")
    assert seen["own"][-1] == ("PutObject", f"runs/{RUN_A}x/record.json")
    assert "/bw-store-results-" + RUN_A in scoped._session.client("sts").get_caller_identity()["Arn"]
