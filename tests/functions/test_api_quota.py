"""Issue 30 item 4, the per-caller quota: ``POST /runs`` through the real API handler counts the runs each
IAM identity starts per UTC day in the results bucket (moto), refuses past ``api.max_runs_per_day``
with 429 naming the limit, and keeps the count across a new Lambda container."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

import functions.api_routes as api
from benchwright.api.backend import CloudBackend
from benchwright.api.quota import PREFIX, QuotaExceeded, caller_prefix, count, reserve
from benchwright.providers.aws.config import ApiSettings
from tests.api_events import call, event, quickstart, suite

ALICE = "arn:aws:iam::123456789012:user/alice"
BOB = "arn:aws:sts::123456789012:assumed-role/perf/bob"


def submit(body: dict[str, Any], arn: str = ALICE) -> tuple[int, dict[str, Any]]:
    evt = event("POST", "/runs", body)
    evt["requestContext"]["identity"]["userArn"] = arn
    return call(evt)


def executions(cloud: CloudBackend) -> int:
    sfn = cloud.client("stepfunctions")
    return sum(
        len(sfn.list_executions(stateMachineArn=a)["executions"])
        for a in (cloud.benchmark_arn, cloud.suite_arn)
    )


@pytest.fixture
def limit(monkeypatch: pytest.MonkeyPatch) -> int:
    monkeypatch.setenv(ApiSettings.env_name("api_max_runs_per_day"), "3")
    return 3


def test_a_caller_is_refused_past_its_daily_limit_and_other_callers_are_not(
    cloud: CloudBackend, limit: int
) -> None:
    for _ in range(limit):
        status, body = submit({"spec": quickstart()})
        assert status == 201, body
    status, body = submit({"spec": quickstart()})
    assert status == 429 and body["error"] == "quota_exceeded" and body["field"] == "api.max_runs_per_day"
    assert (
        "api.max_runs_per_day is 3" in body["message"] and "3 were already started today" in body["message"]
    )
    assert executions(cloud) == limit  # the refused request started nothing
    status, body = submit({"spec": quickstart()}, BOB)  # the quota is per caller
    assert status == 201, body
    assert executions(cloud) == limit + 1


def test_the_count_survives_a_new_lambda_container(cloud: CloudBackend, limit: int) -> None:
    for _ in range(limit - 1):
        assert submit({"spec": quickstart()})[0] == 201
    # a cold start: a new backend with new clients, nothing carried over in memory
    api.set_backend(
        CloudBackend(
            benchmark_arn=cloud.benchmark_arn,
            suite_arn=cloud.suite_arn,
            bucket=cloud.bucket,
            region=cloud.region,
        )
    )
    assert submit({"spec": quickstart()})[0] == 201
    status, body = submit({"spec": quickstart()})
    assert status == 429, body
    day = datetime.now(UTC).strftime("%Y-%m-%d")
    assert count(cloud.client("s3"), cloud.bucket, caller_prefix(ALICE, day)) == limit


def test_a_request_over_the_limit_is_refused_whole_and_keeps_no_count(
    cloud: CloudBackend, limit: int
) -> None:
    benchmarks = len(suite()["benchmarks"])
    assert 1 < benchmarks <= limit  # a suite of several runs, each counted
    assert submit({"spec": quickstart()})[0] == 201
    for _ in range(limit - benchmarks):
        assert submit({"spec": quickstart()})[0] == 201
    status, body = submit({"suite": suite()})  # one run short
    assert status == 429 and f"would start {benchmarks} run(s)" in body["message"], body
    assert executions(cloud) == limit - benchmarks + 1
    # the refused request's markers were deleted: the one run left still fits
    assert submit({"spec": quickstart()})[0] == 201
    assert submit({"spec": quickstart()})[0] == 429


def test_yesterdays_runs_do_not_count_today(cloud: CloudBackend) -> None:
    s3 = cloud.client("s3")
    today = datetime.now(UTC)
    reserve(s3, cloud.bucket, ALICE, ["r-1", "r-2"], 2, now=today - timedelta(days=1))
    with pytest.raises(QuotaExceeded):
        reserve(s3, cloud.bucket, ALICE, ["r-3"], 2, now=today - timedelta(days=1))
    reserve(s3, cloud.bucket, ALICE, ["r-4", "r-5"], 2, now=today)
    keys = [o["Key"] for o in s3.list_objects_v2(Bucket=cloud.bucket, Prefix=PREFIX)["Contents"]]
    assert len(keys) == 4 and ALICE not in " ".join(keys)  # the identity is a digest in the key


def test_the_stage_default_is_fifty(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ApiSettings.env_name("api_max_runs_per_day"), raising=False)
    assert ApiSettings.from_env().api_max_runs_per_day == 50
