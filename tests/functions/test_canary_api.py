"""Issue 30, item 3 at the API: a canary written into a submitted spec or request, through every route
a secret can enter, is refused with 400 naming the field, the answer and the API's logs never repeat
it, and no execution starts (so no state machine payload ever holds it)."""

from __future__ import annotations

import json
import logging
import secrets
from typing import Any

import pytest

from benchwright.api.backend import CloudBackend
from tests.api_events import call, event, quickstart

CANARY = f"cnry{secrets.token_hex(10)}"
HOOK = f"https://hooks.slack.com/services/T0CANARY/B0CANARY/{CANARY}"


def _spec(**over: Any) -> dict[str, Any]:
    spec = quickstart()
    props = dict(spec["workload"].get("properties") or {})
    props.update(over.pop("properties", {}))
    spec["workload"] = {**spec["workload"], "properties": props}
    spec["target"] = {**spec["target"], **over.pop("target", {})}
    spec.update(over)
    return spec


ROUTES: dict[str, tuple[dict[str, Any], str]] = {
    "URL": ({"spec": _spec(properties={"db.url": f"postgresql://u:{CANARY}@db:5432/x"})}, "db.url"),
    "URL ?password=": ({"spec": _spec(properties={"db.url": f"postgresql://db/x?password={CANARY}"})}, "db.url"),
    "DSN": ({"spec": _spec(properties={"db.dsn": f"host=db password={CANARY}"})}, "db.dsn"),
    "password key": ({"spec": _spec(properties={"redis.password": CANARY})}, "redis.password"),
    "target password": ({"spec": _spec(target={"password": CANARY})}, "target.password"),
    "webhook in tags": ({"spec": _spec(tags={"hook": HOOK})}, "tags.hook"),
    "webhook in description": ({"spec": _spec(description=f"see {HOOK}")}, "description"),
    "webhook in the request's tags": ({"spec": _spec(), "tags": {"hook": HOOK}}, "tags.hook"),
    "webhook as notify.slack": ({"spec": _spec(notify={"slack": {"webhook_secret_arn": HOOK}})}, "notify.slack"),
    "endpoint host with a credential": (
        {"spec": _spec(target={"provider": "endpoint", "engine": "redis", "hosts": [f"u:{CANARY}@10.0.0.1:6379"]})},
        "target.hosts",
    ),
    "suite benchmark": (
        {"suite": {"suite": "s", "benchmarks": [_spec(properties={"db.dsn": f"password={CANARY}"})]}},
        "db.dsn",
    ),
}  # fmt: skip


@pytest.mark.parametrize("route", sorted(ROUTES))
def test_a_secret_in_a_submission_is_refused_never_repeated_and_starts_nothing(
    cloud: CloudBackend, caplog: pytest.LogCaptureFixture, route: str
) -> None:
    caplog.set_level(logging.DEBUG, logger="benchwright")
    body, field = ROUTES[route]
    status, answer = call(event("POST", "/runs", body))
    text = json.dumps(answer)
    assert status == 400 and field in text, answer
    assert CANARY not in text and CANARY not in caplog.text
    sfn = cloud.client("stepfunctions")
    for arn in (cloud.benchmark_arn, cloud.suite_arn):
        assert sfn.list_executions(stateMachineArn=arn)["executions"] == []
    listed = cloud.client("s3").list_objects_v2(Bucket=cloud.bucket).get("Contents", [])
    assert listed == []  # not even an owner record
