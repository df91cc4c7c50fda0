"""Issue 30 item 4, the cost cap per request, through the real API handler: ``POST /runs`` prices every
benchmark it would start from the packaged price list, refuses a request over the stage's
``api.max_usd_per_request`` naming the limit and the estimate, and refuses one it cannot price unless
the stage sets ``api.allow_unpriced``. Nothing starts when it refuses."""

from __future__ import annotations

import re

import pytest

from benchwright.api.backend import CloudBackend
from benchwright.api.cost import estimate
from benchwright.providers.aws.config import ApiSettings
from benchwright.spec import parse_spec, parse_suite
from tests.api_events import call, event, quickstart, suite


def executions(cloud: CloudBackend) -> int:
    sfn = cloud.client("stepfunctions")
    return sum(
        len(sfn.list_executions(stateMachineArn=arn)["executions"])
        for arn in (cloud.benchmark_arn, cloud.suite_arn)
    )


def test_the_nightly_suite_is_priced_completely_and_fits_the_default_cap(cloud: CloudBackend) -> None:
    budgets = estimate(parse_suite(suite()).benchmarks)
    assert [b.missing for b in budgets] == [[], []]
    assert all(b.total_usd > 0 for b in budgets)
    assert sum(b.total_usd for b in budgets) < ApiSettings().api_max_usd_per_request
    status, body = call(event("POST", "/runs", {"suite": suite()}))
    assert status == 201 and len(body["runs"]) == 2, body
    assert executions(cloud) == 2


def test_a_request_over_the_cap_is_refused_naming_the_limit_and_the_estimate(
    cloud: CloudBackend, monkeypatch: pytest.MonkeyPatch
) -> None:
    (budget,) = estimate([parse_spec(quickstart())])
    cap = round(budget.total_usd / 2, 4)  # the one benchmark alone is over
    monkeypatch.setenv(ApiSettings.env_name("api_max_usd_per_request"), str(cap))
    status, body = call(event("POST", "/runs", {"spec": quickstart()}))
    assert status == 400 and body["error"] == "cost_over_limit", body
    assert body["field"] == "api.max_usd_per_request"
    assert f"{budget.total_usd:.2f} USD" in body["message"] and f"{cap:.2f} USD" in body["message"]
    assert executions(cloud) == 0


def test_the_cap_holds_the_sum_of_a_suite_s_benchmarks_not_each_alone(
    cloud: CloudBackend, monkeypatch: pytest.MonkeyPatch
) -> None:
    budgets = estimate(parse_suite(suite()).benchmarks)
    costliest = max(b.total_usd for b in budgets)
    total = sum(b.total_usd for b in budgets)
    cap = (costliest + total) / 2  # each benchmark fits, the request does not
    monkeypatch.setenv(ApiSettings.env_name("api_max_usd_per_request"), f"{cap:.4f}")
    status, body = call(event("POST", "/runs", {"suite": suite()}))
    assert status == 400 and body["error"] == "cost_over_limit", body
    assert re.search(r"the costliest benchmark, benchmarks\[\d\] nightly-", body["message"]), body
    assert executions(cloud) == 0
    monkeypatch.setenv(ApiSettings.env_name("api_max_usd_per_request"), f"{total + 0.01:.4f}")
    status, body = call(event("POST", "/runs", {"suite": suite()}))
    assert status == 201, body


def test_a_class_without_a_price_row_is_refused_unless_the_stage_admits_it(
    cloud: CloudBackend, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = quickstart()
    spec["target"]["instance_class"] = "db.m7g.large"  # allowed by the default allow-list, not priced
    status, body = call(event("POST", "/runs", {"spec": spec}))
    assert status == 400 and body["error"] == "cost_unknown", body
    assert body["field"] == "api.max_usd_per_request"
    assert "db.m7g.large" in body["message"] and "api.allow_unpriced" in body["message"], body
    assert executions(cloud) == 0
    monkeypatch.setenv(ApiSettings.env_name("api_allow_unpriced"), "true")
    status, body = call(event("POST", "/runs", {"spec": spec}))
    assert status == 201, body
    assert executions(cloud) == 1


def test_the_stage_setting_is_checked_at_synth_and_reaches_the_api_s_environment() -> None:
    from benchwright.errors import SpecError
    from infra.config import parse_stage

    with pytest.raises(SpecError) as bad:
        parse_stage({"api": {"max_usd_per_request": 0}})
    assert bad.value.field == "stage.api.max_usd_per_request"
    stage = parse_stage({"api": {"max_usd_per_request": 3.5, "allow_unpriced": True}})
    env = ApiSettings.environment(
        api_max_usd_per_request=str(stage.api.max_usd_per_request),
        api_allow_unpriced=str(stage.api.allow_unpriced).lower(),
    )
    settings = ApiSettings.from_env(env)
    assert settings.api_max_usd_per_request == 3.5 and settings.api_allow_unpriced is True
