"""CDK assertions on the InfluxDB sink of a new account (item 4): the instance gets the admin password
CreateDbInstance requires (generated, a dynamic reference), and a custom resource creates the operator
token the ingest Lambda reads from its own secret ({"token": ...}); the admin secret stays with the
custom resource. The synth is conftest's shared one (which opts into influxdb; the default sink is none)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.infra.test_stack import SUITE, _with_node, actions_of, resources, statements_of


@pytest.mark.slow  # a synth of its own: its warnings are not in the cached template
def test_the_default_sink_is_none_and_influxdb_states_its_fixed_cost() -> None:
    """A first deploy creates no fixed-cost sink; opting into InfluxDB prints its cost at synth."""
    import aws_cdk as cdk
    from aws_cdk.assertions import Annotations, Match

    from infra.app import build
    from infra.config import parse_stage

    assert parse_stage({}).sink.kind == "none"
    _with_node()
    app = cdk.App(
        context={
            "benchwright:bundle": "false",
            "benchwright:nag": "false",
            "benchwright": {"sink": {"kind": "influxdb"}, "schedule": {"suite": [SUITE]}},
        }
    )
    stack = build(app)
    warnings = Annotations.from_stack(stack).find_warning("*", Match.string_like_regexp("InfluxDB"))
    (text,) = [str(w.entry.data) for w in warnings]
    assert "db.influx.medium" in text and "100 USD a month" in text and "'none' is the default" in text


def secret_named(doc: dict[str, Any], words: str) -> str:
    return next(
        name
        for name, s in resources(doc, "AWS::SecretsManager::Secret").items()
        if words in s["Properties"].get("Description", "")
    )


def test_the_instance_gets_a_generated_admin_password_as_a_dynamic_reference(stack: Any) -> None:
    doc = stack
    (influx,) = resources(doc, "AWS::Timestream::InfluxDBInstance").values()
    props = influx["Properties"]
    admin = secret_named(doc, "InfluxDB admin user")
    password = json.dumps(props["Password"])
    assert props["Username"] == "admin"
    assert "{{resolve:secretsmanager:" in password and admin in password
    generated = resources(doc, "AWS::SecretsManager::Secret")[admin]["Properties"]["GenerateSecretString"]
    assert generated["GenerateStringKey"] == "password" and generated["PasswordLength"] >= 16


def test_a_custom_resource_creates_the_operator_token_after_the_instance(stack: Any) -> None:
    doc = stack
    admin = secret_named(doc, "InfluxDB admin user")
    token = secret_named(doc, "InfluxDB operator token")
    (custom,) = [r for r in doc["Resources"].values() if r["Type"] == "Custom::InfluxToken"]
    influx = next(iter(resources(doc, "AWS::Timestream::InfluxDBInstance")))
    fn = next(
        n for n, f in resources(doc, "AWS::Lambda::Function").items()
        if f["Properties"]["Handler"] == "functions.influx_token.handler"
    )  # fmt: skip
    props = custom["Properties"]
    assert props["ServiceToken"] == {"Fn::GetAtt": [fn, "Arn"]}
    assert props["AdminSecretArn"] == {"Ref": admin} and props["TokenSecretArn"] == {"Ref": token}
    assert influx in custom.get("DependsOn", []) and "Endpoint" in json.dumps(props["Url"])
    vpc = resources(doc, "AWS::Lambda::Function")[fn]["Properties"].get("VpcConfig")
    assert vpc and vpc["SubnetIds"]  # it must reach the private instance on 8086
    statements = statements_of(doc, "influx_token")
    writes = [s for s in statements if "secretsmanager:PutSecretValue" in actions_of([s])]
    assert [s["Resource"] for s in writes] == [{"Ref": token}]
    assert not any(a.startswith("s3:") for a in actions_of(statements))  # the secrets only


def test_the_ingest_lambda_reads_the_token_secret_and_not_the_admin_password(stack: Any) -> None:
    doc = stack
    admin = secret_named(doc, "InfluxDB admin user")
    token = secret_named(doc, "InfluxDB operator token")
    fn = next(
        f for f in resources(doc, "AWS::Lambda::Function").values()
        if f["Properties"]["Handler"] == "functions.store_results.handler"
    )  # fmt: skip
    env = fn["Properties"]["Environment"]["Variables"]
    assert env["BENCHWRIGHT_INFLUX_TOKEN_SECRET_ARN"] == {"Ref": token}
    readable = json.dumps(
        [
            s["Resource"]
            for s in statements_of(doc, "store_results")
            if "secretsmanager:GetSecretValue" in actions_of([s])
        ]
    )
    assert token in readable and admin not in readable
    assert "InfluxAuthParametersSecretArn" not in readable
