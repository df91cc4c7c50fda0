"""The API Lambda as API Gateway calls it: proxy events of a SigV4-signed request, a context, and a
backend of pass-through state machines in moto (``api_backend``; the ``cloud`` fixture of
tests/functions/conftest.py). Shared by the API tests and the state machine tests that read a run
back through the API."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
REGION = "us-east-1"
PASS_ASL = json.dumps({"StartAt": "Hold", "States": {"Hold": {"Type": "Pass", "End": True}}})


class Context:
    function_name = "api"
    memory_limit_in_mb = 512
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:api"
    aws_request_id = "req-1"

    @staticmethod
    def get_remaining_time_in_millis() -> int:
        return 29000


def event(method: str, path: str, body: Any = None, query: dict[str, str] | None = None, **over: Any) -> dict:
    """An API Gateway REST proxy event as a SigV4-signed request produces it."""
    resource = path
    params = None
    parts = path.strip("/").split("/")
    if len(parts) >= 2:
        params = {"run_id": parts[1]}
        resource = "/runs/{run_id}" + ("/" + "/".join(parts[2:]) if len(parts) > 2 else "")
    raw = body if isinstance(body, str) or body is None else json.dumps(body)
    evt = {
        "resource": resource,
        "path": path,
        "httpMethod": method,
        "headers": {"Content-Type": "application/json", "Host": "abc.execute-api.us-east-1.amazonaws.com"},
        "multiValueHeaders": {"Content-Type": ["application/json"]},
        "queryStringParameters": query,
        "multiValueQueryStringParameters": {k: [v] for k, v in query.items()} if query else None,
        "pathParameters": params,
        "stageVariables": None,
        "requestContext": {
            "resourcePath": resource,
            "httpMethod": method,
            "path": f"/v1{path}",
            "stage": "v1",
            "requestId": "r-1",
            "accountId": "123456789012",
            "identity": {
                "accountId": "123456789012",
                "caller": "AIDAEXAMPLE",
                "userArn": "arn:aws:iam::123456789012:user/alice",
                "accessKey": "AKIAEXAMPLE",
                "sourceIp": "192.0.2.1",
            },
        },
        "body": raw,
        "isBase64Encoded": False,
    }
    evt.update(over)
    return evt


def call(evt: dict) -> tuple[int, dict]:
    import functions.api_routes as api

    out = api.handle(evt, Context())
    return out["statusCode"], json.loads(out["body"]) if out.get("body") else {}


@contextlib.contextmanager
def api_backend() -> Iterator[Any]:
    """Inside moto (credentials set by the caller): two pass-through state machines and the results
    bucket, set as the API's backend (a ``CloudBackend``) until the block ends."""
    import boto3
    from moto import mock_aws

    import functions.api_routes as api
    from benchwright.api.backend import CloudBackend

    with mock_aws():
        sfn = boto3.client("stepfunctions", region_name=REGION)
        role = "arn:aws:iam::123456789012:role/sfn"
        bench = sfn.create_state_machine(name="bench", definition=PASS_ASL, roleArn=role)["stateMachineArn"]
        suite = sfn.create_state_machine(name="suite", definition=PASS_ASL, roleArn=role)["stateMachineArn"]
        boto3.client("s3", region_name=REGION).create_bucket(Bucket="results")
        backend = CloudBackend(benchmark_arn=bench, suite_arn=suite, bucket="results", region=REGION)
        api.set_backend(backend)
        try:
            yield backend
        finally:
            api.set_backend(None)


def suite() -> dict:
    """A cloud suite (the stack's default nightly suite: RDS + ElastiCache, measured EC2 runners)."""
    return yaml.safe_load((ROOT / "infra" / "nightly.yaml").read_text())


def quickstart() -> dict:
    """One cloud benchmark spec: the first of that suite."""
    return suite()["benchmarks"][0]


def started(body: dict) -> str:
    """The run id of a one-benchmark submission."""
    (run,) = body["runs"]
    return str(run["run_id"])
