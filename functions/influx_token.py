"""InfluxToken: a CloudFormation custom resource that gives the stack's Timestream for InfluxDB
instance an operator token, once, and keeps it in Secrets Manager as ``{"token": "..."}``.

CreateDbInstance takes an admin user name and password (the stack generates the password into its
own secret); the InfluxDB v2 API then wants a token for every write. Nobody should paste one in by
hand after deploy, so on Create this function signs in with the admin credentials
(``POST /api/v2/signin``), creates an operator authorization (``POST /api/v2/authorizations``,
every permission, no org: what ``influx auth create --operator`` makes) and writes its token to the
token secret the ingest Lambda reads. Update keeps a token that still exists; Delete revokes it.

The response to CloudFormation goes to the presigned ``ResponseURL`` (an S3 URL: the VPC's S3
gateway endpoint carries it). Nothing secret is logged or returned in ``Data``.
"""

from __future__ import annotations

import base64
import json
import ssl
import urllib.error
import urllib.request
from typing import Any

from functions._common import clients, logger

RESOURCE_TYPES = (
    "authorizations", "buckets", "dashboards", "orgs", "sources", "tasks", "telegrafs", "users",
    "variables", "scrapers", "secrets", "labels", "views", "documents", "notificationRules",
    "notificationEndpoints", "checks", "dbrp", "annotations", "remotes", "replications",
)  # fmt: skip
DESCRIPTION = "benchwright operator token (stack custom resource)"
TIMEOUT_S = 20


class InfluxApi:
    """The few InfluxDB v2 calls this needs, over urllib (no client library in the Lambda)."""

    def __init__(self, url: str, context: ssl.SSLContext | None = None) -> None:
        self.url = url.rstrip("/")
        self.context = context
        self.session: str | None = None

    def call(self, method: str, path: str, body: Any = None, headers: dict[str, str] | None = None) -> Any:
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(self.url + path, data=data, method=method)
        request.add_header("Content-Type", "application/json")
        if self.session:
            request.add_header("Cookie", self.session)
        for key, value in (headers or {}).items():
            request.add_header(key, value)
        with urllib.request.urlopen(request, timeout=TIMEOUT_S, context=self.context) as response:
            cookie = response.headers.get("Set-Cookie")
            if cookie:
                self.session = cookie.split(";", 1)[0]
            raw = response.read()
        return json.loads(raw) if raw else None

    def sign_in(self, username: str, password: str) -> None:
        basic = base64.b64encode(f"{username}:{password}".encode()).decode()
        self.call("POST", "/api/v2/signin", headers={"Authorization": f"Basic {basic}"})
        if not self.session:
            raise RuntimeError("InfluxDB sign-in returned no session")

    def create_operator_token(self) -> tuple[str, str]:
        permissions = [
            {"action": action, "resource": {"type": kind}}
            for kind in RESOURCE_TYPES
            for action in ("read", "write")
        ]
        body = {"description": DESCRIPTION, "status": "active", "permissions": permissions}
        made = self.call("POST", "/api/v2/authorizations", body)
        return str(made["id"]), str(made["token"])

    def exists(self, authorization_id: str) -> bool:
        try:
            self.call("GET", f"/api/v2/authorizations/{authorization_id}")
            return True
        except urllib.error.HTTPError as exc:
            if exc.code == 404:
                return False
            raise

    def delete(self, authorization_id: str) -> None:
        try:
            self.call("DELETE", f"/api/v2/authorizations/{authorization_id}")
        except urllib.error.HTTPError as exc:
            if exc.code != 404:
                raise


def _admin(secret_arn: str) -> tuple[str, str]:
    data = json.loads(clients()("secretsmanager").get_secret_value(SecretId=secret_arn)["SecretString"])
    return str(data["username"]), str(data["password"])


def apply(event: dict[str, Any], api: InfluxApi | None = None) -> tuple[str, dict[str, str]]:
    """Do what the request asks; (physical resource id, data)."""
    props = event.get("ResourceProperties") or {}
    api = api or InfluxApi(str(props["Url"]))
    request = event["RequestType"]
    physical = str(event.get("PhysicalResourceId") or "")
    if request == "Delete":
        if physical.startswith("auth-"):
            api.sign_in(*_admin(str(props["AdminSecretArn"])))
            api.delete(physical.removeprefix("auth-"))
        return physical or "none", {}
    api.sign_in(*_admin(str(props["AdminSecretArn"])))
    if request == "Update" and physical.startswith("auth-") and api.exists(physical.removeprefix("auth-")):
        return physical, {"AuthorizationId": physical.removeprefix("auth-")}
    authorization_id, token = api.create_operator_token()
    clients()("secretsmanager").put_secret_value(
        SecretId=str(props["TokenSecretArn"]), SecretString=json.dumps({"token": token})
    )
    return f"auth-{authorization_id}", {"AuthorizationId": authorization_id}


def respond(event: dict[str, Any], status: str, physical: str, data: dict[str, str], reason: str) -> None:
    """PUT the result to CloudFormation's presigned ResponseURL (the custom-resource protocol)."""
    body = json.dumps(
        {
            "Status": status,
            "Reason": reason[:3000],
            "PhysicalResourceId": physical,
            "StackId": event["StackId"],
            "RequestId": event["RequestId"],
            "LogicalResourceId": event["LogicalResourceId"],
            "NoEcho": True,
            "Data": data,
        }
    ).encode()
    request = urllib.request.Request(event["ResponseURL"], data=body, method="PUT")
    request.add_header("Content-Type", "")
    request.add_header("Content-Length", str(len(body)))
    with urllib.request.urlopen(request, timeout=TIMEOUT_S) as response:
        response.read()


@logger.inject_lambda_context(log_event=False)
def handler(event: dict[str, Any], context: Any) -> None:
    physical = str(event.get("PhysicalResourceId") or event.get("LogicalResourceId") or "influx-token")
    try:
        physical, data = apply(event)
    except Exception as exc:  # every failure must reach CloudFormation, or the stack waits an hour
        logger.error("influx token failed", extra={"error_type": type(exc).__name__})
        respond(event, "FAILED", physical, {}, f"{type(exc).__name__}: {exc}")
        return
    logger.info("influx token", extra={"request": event.get("RequestType"), "physical": physical})
    respond(event, "SUCCESS", physical, data, "ok")
