"""The rehearsal's small models, without containers: credit buckets, EventBridge matching, the
template resolver (the rehearsal end to end is tests/rehearse/)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from benchwright.rehearse.eventbridge import matches
from benchwright.rehearse.metrics import GP2_BUCKET, CreditModel, gp2_baseline
from benchwright.rehearse.stack import Resolver, depends_order


def test_gp2_bucket_drains_at_burst_minus_baseline_and_refills_at_baseline() -> None:
    assert gp2_baseline(20) == 100 and gp2_baseline(1000) == 3000 and gp2_baseline(10_000) == 16000
    model = CreditModel("db.m6i.large", "gp2", 20)
    model.advance(60, iops=3000, cpu_fraction=0.0)
    assert model.burst_credits == pytest.approx(GP2_BUCKET - 2900 * 60)
    model.advance(60, iops=0, cpu_fraction=0.0)
    assert model.burst_credits == pytest.approx(GP2_BUCKET - 2800 * 60)
    # a full bucket lasts 5.4 M / 2,900 s at 3,000 IOPS: about 31 minutes, as AWS documents
    model = CreditModel("db.m6i.large", "gp2", 20)
    model.advance(5_400_000 / 2900 + 1, iops=3000, cpu_fraction=0.0)
    assert model.balances()["BurstBalance"][0] == 0.0
    model.advance(1, iops=3000, cpu_fraction=0.0)  # empty: I/O is held to the baseline, nothing left to spend
    assert model.burst_credits == 0.0


def test_t_class_cpu_credits_spent_above_baseline_and_earned_per_hour() -> None:
    model = CreditModel("db.t3.micro", "gp3", 20, start_fraction=0.5)
    assert model.cpu_credits == 144.0 and "BurstBalance" not in model.balances()
    model.advance(60, iops=0, cpu_fraction=1.0)  # 2 vCPUs at 100 % for a minute, baseline 10 %
    assert model.cpu_credits == pytest.approx(144.0 - 0.9 * 2 + 12.0 / 60)
    assert CreditModel("db.m6i.large", "gp2", 20).balances().keys() == {"BurstBalance"}


def test_eventbridge_pattern_matching() -> None:
    event = {"source": "aws.states", "detail-type": "Step Functions Execution Status Change",
             "detail": {"status": "ABORTED", "stateMachineArn": "arn:sm"}}  # fmt: skip
    assert matches({"source": ["aws.states"], "detail": {"status": ["ABORTED", "TIMED_OUT"]}}, event)
    assert not matches({"source": ["aws.states"], "detail": {"status": ["FAILED"]}}, event)
    assert not matches({"detail": {"missing": ["x"]}}, event)


def test_resolver_and_dependency_order() -> None:
    template = {
        "Resources": {
            "B": {"Type": "X", "Properties": {"Parent": {"Ref": "A"}}},
            "A": {"Type": "X", "Properties": {}},
        }
    }
    assert depends_order(template, ["B", "A"]) == ["A", "B"]
    r = Resolver(template, refs={"A": "a-1"}, attrs={("A", "Arn"): "arn:a"})
    joined = {"Fn::Join": ["", [{"Ref": "A"}, "/", {"Fn::GetAtt": ["A", "Arn"]}, {"Ref": "AWS::Region"}]]}
    assert r.resolve(joined) == "a-1/arn:aus-east-1"
    assert r.resolve({"Fn::Sub": "${A}:${AWS::AccountId}"}) == "a-1:123456789012"


@pytest.mark.parametrize(
    ("target", "field"),
    [
        ({"provider": "local", "engine": "postgres"}, "runner.platform"),  # the spec's own check first
    ],
)
def test_rehearse_refuses_what_it_cannot_rehearse_before_anything_is_created(
    tmp_path: Path, target: dict[str, Any], field: str
) -> None:
    from benchwright.errors import SpecError
    from benchwright.rehearse.run import rehearse

    spec = {"name": "x", "target": target, "runner": {"platform": "fargate"},
            "workload": {"name": "ycsb", "files": ["workloada"]}}  # fmt: skip
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(spec))
    out = tmp_path / "out"
    with pytest.raises(SpecError) as err:
        rehearse(path, out, image="unused")
    assert field in str(err.value)
    assert not out.exists()  # nothing written, nothing started


def test_an_ec2_runner_s_user_data_is_run_as_its_docker_run_line() -> None:
    """Contract with providers/aws/userdata.py: the rehearsal runs exactly the image, arguments and
    variables the real boot script would hand to docker."""
    from benchwright.providers.aws.userdata import runner_user_data
    from benchwright.rehearse.hooks import docker_run_of

    script = runner_user_data(
        "123456789012.dkr.ecr.us-east-1.amazonaws.com/bw:1",
        ["--plan", "s3://b/p.json", "--out", "s3://b/r.json"],
        {"BENCHWRIGHT_DB_SECRET_ARN": "arn:aws:secretsmanager:us-east-1:123456789012:secret:x"},
        "us-east-1",
    )
    found = docker_run_of(script)
    assert found is not None
    image, command, env = found
    assert image == "123456789012.dkr.ecr.us-east-1.amazonaws.com/bw:1"
    assert command == ["--plan", "s3://b/p.json", "--out", "s3://b/r.json"]
    assert env["BENCHWRIGHT_DB_SECRET_ARN"].endswith(":secret:x") and env["AWS_REGION"] == "us-east-1"
    assert docker_run_of("#!/bin/bash\necho no runner here\n") is None


def test_a_rehearsal_deploys_in_the_spec_s_region_and_one_region_only() -> None:
    """exp2 pins eu-west-1a: it is rehearsed in eu-west-1 (the stack synthesized for that region), as
    ``validate`` prices it; a suite whose targets are in two regions is refused, naming the zone."""
    from benchwright.errors import SpecError
    from benchwright.rehearse.prepare import check_cloud
    from benchwright.rehearse.stack import stage_settings
    from benchwright.spec import SuiteSpec, load_suite

    root = Path(__file__).resolve().parents[2]
    suite = load_suite(root / "examples" / "exp2-elasticache-ycsb.aws.yaml")
    assert check_cloud(suite) == "eu-west-1"
    assert stage_settings(None, "eu-west-1")["availability_zones"] == [
        "eu-west-1a",
        "eu-west-1b",
        "eu-west-1c",
    ]
    other = suite.benchmarks[1].model_copy(deep=True)
    other.target.availability_zone = "us-west-2a"  # type: ignore[union-attr]
    two = SuiteSpec(suite="two", benchmarks=[suite.benchmarks[0], other])
    with pytest.raises(SpecError) as err:
        check_cloud(two)
    assert "benchmarks[1].target.availability_zone" in str(err.value) and "us-west-2" in str(err.value)


def test_yugabyte_and_ardb_user_data_start_stand_ins_of_another_engine_at_the_template_s_port() -> None:
    """Contract with providers/aws/targets/kinds/ec2/target.py: the rehearsal reads the node addresses and port
    from the user-data the real target renders, and names the engine it replaces."""
    from benchwright.providers.aws.targets.kinds.ec2.target import render_user_data
    from benchwright.rehearse.services.ec2 import target_of

    values: dict[str, Any] = {
        "node_ip": "127.101.0.2",
        "master_addresses": "127.101.0.2:7100,127.101.0.3:7100,127.101.0.4:7100",
        "master_others": "127.101.0.3:7100,127.101.0.4:7100",
        "replication_factor": "3",
        "yb_version": "2024.2.0.0",
        "yb_build": "b145",
        "master_flags": [],
        "master_start": "127.101.0.2:7100,127.101.0.3:7100,127.101.0.4:7100",
        "master_leaving": "",
        "tserver_flags": [],
        "port": "5433",
        "server_args": [],
    }
    code = {
        "master_join": "",
        "packages": "gcc",
        "install_commands": "git clone --depth 1 https://github.com/yinqiwen/ardb /opt/ardb",
        "start_command": "/opt/ardb/src/ardb-server /opt/ardb/ardb.conf",
    }
    yb = target_of(render_user_data("yugabytedb-3node", values, code))
    assert yb == ("yugabytedb", ["127.101.0.2", "127.101.0.3", "127.101.0.4"], 5433, "postgres")
    # node_replace's replacement, at a new address, names the masters after the move: its first is the
    # cluster's first, so it maps to the cluster's stand-in (services/ec2.py keys it by that address)
    after = "127.101.0.2:7100,127.101.0.3:7100,127.101.0.9:7100"
    replacement = {**values, "master_start": "", "master_addresses": after, "master_leaving": "127.101.0.4"}
    found = target_of(render_user_data("yugabytedb-3node", replacement, {**code, "master_join": "# move"}))
    assert found == ("yugabytedb", ["127.101.0.2", "127.101.0.3", "127.101.0.9"], 5433, "postgres")
    ardb = target_of(render_user_data("redis-protocol", {**values, "port": "6379"}, code))
    assert ardb == ("ardb", [], 6379, "redis")


def test_what_a_stand_in_of_another_engine_cannot_honour_is_taken_out_and_said() -> None:
    """exp1's YugabyteDB ``presplit`` (SPLIT AT VALUES) has no meaning on the PostgreSQL stand-in; exp2's
    own Slack secret belongs to the account it was written for: a secret of the rehearsal's account, named
    by the same convention (benchwright/slack/<name>), holds the receiver's URL and stands in."""
    from benchwright.rehearse.prepare import route_slack, standin_adjustments
    from benchwright.spec import load_suite

    root = Path(__file__).resolve().parents[2]
    exp1 = load_suite(root / "examples" / "exp1-yugabyte-vs-rds.aws.yaml")
    assert exp1.benchmarks[0].target.presplit  # type: ignore[union-attr]
    adjusted, notes = standin_adjustments(exp1)
    assert adjusted.benchmarks[0].target.presplit is None  # type: ignore[union-attr]
    assert notes == [
        "exp1-yugabyte-3node: target.presplit not rehearsed (the PostgreSQL stand-in has no tablets)"
    ]
    assert [b.model_dump() for b in adjusted.benchmarks[1:]] == [b.model_dump() for b in exp1.benchmarks[1:]]
    exp2 = load_suite(root / "examples" / "exp2-elasticache-ycsb.aws.yaml")
    receiver = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:benchwright/slack/rehearsal-Xy12Zw"
    routed, notes = route_slack(exp2, receiver)
    assert routed.benchmarks[1].notify.slack.webhook_secret_arn == receiver  # type: ignore[union-attr]
    assert len(notes) == 1 and "exp2-elasticache-types" in notes[0]
