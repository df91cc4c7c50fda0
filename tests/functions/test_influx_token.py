"""The InfluxDB operator-token custom resource against a local HTTP server that checks the InfluxDB
v2 calls as the service answers them (basic-auth sign-in -> session cookie; authorizations only with
that cookie), Secrets Manager in moto, and CloudFormation's ResponseURL as a second local receiver."""

from __future__ import annotations

import base64
import json
import secrets
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from tests.aws_world import ENV, REGION, FakeContext

ADMIN = {"username": "admin", "password": "s3cret-Admin-pw"}


class Influx:
    """Just enough of InfluxDB 2.x's HTTP API, with its auth rules."""

    def __init__(self) -> None:
        self.authorizations: dict[str, dict[str, Any]] = {}
        self.sessions: set[str] = set()
        self.seen: list[str] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def reply(self, code: int, body: Any = None, cookie: str | None = None) -> None:
                raw = json.dumps(body).encode() if body is not None else b""
                self.send_response(code)
                if cookie:
                    self.send_header("Set-Cookie", f"{cookie}; Path=/api/v2; HttpOnly")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            def authed(self) -> bool:
                return self.headers.get("Cookie", "") in outer.sessions

            def do_POST(self) -> None:
                outer.seen.append(f"POST {self.path}")
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)) or 0)
                if self.path == "/api/v2/signin":
                    basic = base64.b64encode(f"{ADMIN['username']}:{ADMIN['password']}".encode()).decode()
                    if self.headers.get("Authorization") != f"Basic {basic}":
                        return self.reply(401, {"code": "unauthorized"})
                    session = f"influxdb-oss-session={secrets.token_hex(8)}"
                    outer.sessions.add(session)
                    return self.reply(204, cookie=session)
                if self.path == "/api/v2/authorizations" and self.authed():
                    request = json.loads(body)
                    assert all("orgID" not in p["resource"] for p in request["permissions"])
                    auth = {"id": secrets.token_hex(8), "token": secrets.token_urlsafe(32), **request}
                    outer.authorizations[auth["id"]] = auth
                    return self.reply(201, auth)
                return self.reply(401, {"code": "unauthorized"})

            def do_GET(self) -> None:
                outer.seen.append(f"GET {self.path}")
                key = self.path.rsplit("/", 1)[-1]
                if not self.authed():
                    return self.reply(401, {"code": "unauthorized"})
                if key in outer.authorizations:
                    return self.reply(200, outer.authorizations[key])
                return self.reply(404, {"code": "not found"})

            def do_DELETE(self) -> None:
                outer.seen.append(f"DELETE {self.path}")
                if not self.authed():
                    return self.reply(401, {"code": "unauthorized"})
                found = outer.authorizations.pop(self.path.rsplit("/", 1)[-1], None)
                return self.reply(204 if found else 404)

            def log_message(self, *args: Any) -> None:
                return None

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"


class CloudFormation:
    """Receives the custom resource's PUT to its presigned ResponseURL."""

    def __init__(self) -> None:
        self.responses: list[dict[str, Any]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_PUT(self) -> None:
                outer.responses.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
                self.send_response(200)
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                return None

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/cfn-response?X-Amz-Signature=x"


@pytest.fixture
def world(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Any]]:
    from moto import mock_aws

    import functions._common as common
    from benchwright.providers.aws.config import AwsSettings

    for k, v in ENV.items():
        monkeypatch.setenv(k, v)
    with mock_aws():
        import boto3

        sm = boto3.client("secretsmanager", region_name=REGION)
        admin = sm.create_secret(Name="bw-influx-admin", SecretString=json.dumps(ADMIN))["ARN"]
        token = sm.create_secret(Name="bw-influx-token", SecretString="{}")["ARN"]
        monkeypatch.setattr(common, "_settings", AwsSettings(region=REGION))
        monkeypatch.setattr(common, "_clients", None)
        influx, cfn = Influx(), CloudFormation()
        yield {"sm": sm, "admin": admin, "token": token, "influx": influx, "cfn": cfn}
        influx.server.shutdown()
        cfn.server.shutdown()


def request(w: dict[str, Any], kind: str, physical: str | None = None, url: str | None = None) -> dict:
    event = {
        "RequestType": kind,
        "ResponseURL": w["cfn"].url,
        "StackId": "arn:aws:cloudformation:us-east-1:123456789012:stack/benchwright-dev/x",
        "RequestId": f"req-{kind}",
        "LogicalResourceId": "InfluxToken",
        "ResourceType": "Custom::InfluxToken",
        "ResourceProperties": {
            "ServiceToken": "arn:aws:lambda:us-east-1:123456789012:function:t",
            "Url": url or w["influx"].url,
            "AdminSecretArn": w["admin"],
            "TokenSecretArn": w["token"],
        },
    }
    if physical:
        event["PhysicalResourceId"] = physical
    return event


def stored_token(w: dict[str, Any]) -> str:
    return str(json.loads(w["sm"].get_secret_value(SecretId=w["token"])["SecretString"])["token"])


def test_create_signs_in_once_and_keeps_an_operator_token_in_its_secret(world: dict[str, Any]) -> None:
    from functions.influx_token import handler

    handler(request(world, "Create"), FakeContext())

    (response,) = world["cfn"].responses
    assert response["Status"] == "SUCCESS" and response["NoEcho"] is True
    (auth,) = world["influx"].authorizations.values()
    assert stored_token(world) == auth["token"]
    assert response["PhysicalResourceId"] == f"auth-{auth['id']}"
    assert auth["token"] not in json.dumps(response)  # the token is only in the secret
    kinds = {p["resource"]["type"] for p in auth["permissions"] if p["action"] == "write"}
    assert {"buckets", "orgs", "authorizations", "users"} <= kinds  # operator scope
    assert world["influx"].seen == ["POST /api/v2/signin", "POST /api/v2/authorizations"]


def test_update_keeps_a_live_token_and_delete_revokes_it(world: dict[str, Any]) -> None:
    from functions.influx_token import handler

    handler(request(world, "Create"), FakeContext())
    physical = world["cfn"].responses[-1]["PhysicalResourceId"]
    token = stored_token(world)

    handler(request(world, "Update", physical), FakeContext())
    assert world["cfn"].responses[-1]["PhysicalResourceId"] == physical and stored_token(world) == token

    handler(request(world, "Delete", physical), FakeContext())
    assert world["cfn"].responses[-1]["Status"] == "SUCCESS" and world["influx"].authorizations == {}


def test_a_failure_is_reported_to_cloudformation_instead_of_hanging_the_stack(world: dict[str, Any]) -> None:
    from functions.influx_token import handler

    world["sm"].put_secret_value(SecretId=world["admin"], SecretString=json.dumps({**ADMIN, "password": "x"}))
    handler(request(world, "Create"), FakeContext())

    (response,) = world["cfn"].responses
    assert response["Status"] == "FAILED" and "401" in response["Reason"]
    assert (
        "s3cret" not in response["Reason"]
        and json.loads(world["sm"].get_secret_value(SecretId=world["token"])["SecretString"]) == {}
    )
