"""Issue 30 item 4 through the real API handler: endpoint targets, instance types and duration are
held to the stage's limits before any execution starts, each refusal naming the field and the limit."""

from __future__ import annotations

from typing import Any

import pytest

from benchwright.api.backend import CloudBackend
from benchwright.providers.aws.config import ApiSettings
from tests.api_events import call, event, quickstart, suite

RUNNER = {"platform": "fargate", "placement": "same-az", "size": {"cpu": 1, "memory_mb": 2048}}


def endpoint_spec(*hosts: str) -> dict[str, Any]:
    spec = quickstart()
    spec["target"] = {"provider": "endpoint", "engine": "postgres", "hosts": list(hosts)}
    spec["runner"] = RUNNER
    return spec


def nothing_started(cloud: CloudBackend) -> None:
    sfn = cloud.client("stepfunctions")
    for arn in (cloud.benchmark_arn, cloud.suite_arn):
        assert sfn.list_executions(stateMachineArn=arn)["executions"] == []


@pytest.mark.parametrize(
    ("host", "word"),
    [
        ("169.254.169.254:80", "metadata"),
        ("[fd00:ec2::254]:80", "metadata"),
        ("169.254.10.1:5432", "link-local"),
        ("127.0.0.1:5432", "loopback"),
        ("0.0.0.0:5432", "not a host"),
        ("10.0.3.4:5432", "endpoint_cidrs lists none"),
        ("db.internal.example:5432", "endpoint_cidrs lists none"),
    ],
)
def test_endpoint_targets_are_refused_without_a_stage_cidr(cloud: CloudBackend, host: str, word: str) -> None:
    status, body = call(event("POST", "/runs", {"spec": endpoint_spec(host)}))
    assert status == 400 and body["field"] == "target.hosts[0]" and word in body["message"], body
    nothing_started(cloud)


def test_a_stage_cidr_admits_its_addresses_only_and_never_metadata(
    cloud: CloudBackend, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ApiSettings.env_name("api_endpoint_cidrs"), "10.0.0.0/16,169.254.0.0/16")
    status, body = call(event("POST", "/runs", {"spec": endpoint_spec("10.0.3.4:5432", "10.1.0.1:5432")}))
    assert status == 400 and body["field"] == "target.hosts[1]" and "outside" in body["message"], body
    status, body = call(event("POST", "/runs", {"spec": endpoint_spec("169.254.169.254:80")}))
    assert status == 400 and "metadata" in body["message"], body  # even inside an allowed CIDR
    nothing_started(cloud)
    status, body = call(event("POST", "/runs", {"spec": endpoint_spec("10.0.3.4:5432")}))
    assert status == 201, body


def test_a_name_must_resolve_inside_the_stage_cidrs() -> None:
    from benchwright.api.limits import ApiLimits, check_endpoint
    from benchwright.errors import SpecError
    from benchwright.spec import parse_target

    target = parse_target({"provider": "endpoint", "engine": "postgres", "hosts": ["db.example:5432"]})
    for answer, word in (
        (["169.254.169.254"], "metadata"),
        (["10.9.0.1"], "outside"),
        ([], "does not resolve"),
    ):
        limits = ApiLimits(endpoint_cidrs=("10.0.0.0/16",), resolve=lambda _h, a=answer: a)
        with pytest.raises(SpecError) as err:
            check_endpoint(target, limits)  # type: ignore[arg-type]
        assert err.value.field == "target.hosts[0]" and word in err.value.detail
    check_endpoint(target, ApiLimits(endpoint_cidrs=("10.0.0.0/16",), resolve=lambda _h: ["10.0.0.9"]))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("field", "path", "value"),
    [
        ("target.instance_class", ("target", "instance_class"), "db.p5.48xlarge"),
        ("target.instance_class", ("target", "instance_class"), "db.x1e.32xlarge"),
    ],
)
def test_instance_classes_outside_the_allow_list_are_refused(
    cloud: CloudBackend, field: str, path: tuple[str, str], value: str
) -> None:
    spec = quickstart()
    spec[path[0]][path[1]] = value
    status, body = call(event("POST", "/runs", {"spec": spec}))
    assert status == 400 and body["field"] == field and "api.instance_types" in body["message"], body
    nothing_started(cloud)


def test_an_ec2_runner_and_a_suite_member_are_held_to_the_allow_list(
    cloud: CloudBackend, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = quickstart()
    spec["runner"] = {"platform": "ec2", "placement": "same-az", "size": {"instance_type": "p5.48xlarge"}}
    status, body = call(event("POST", "/runs", {"spec": spec}))
    assert status == 400 and body["field"] == "runner.size.instance_type", body
    data = suite()
    data["benchmarks"][1]["target"]["node_type"] = "cache.r7g.16xlarge"
    monkeypatch.setenv(ApiSettings.env_name("api_instance_types"), "db.t4g.*,cache.t4g.small,c6i.large")
    status, body = call(event("POST", "/runs", {"suite": data}))
    assert status == 400 and body["field"] == "benchmarks[1].target.node_type", body
    nothing_started(cloud)


def test_a_run_longer_than_the_stage_allows_is_refused(
    cloud: CloudBackend, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ApiSettings.env_name("max_run_hours"), "1")
    spec = quickstart()
    spec["workload"]["phases"]["run"] = {"duration_s": 86400}
    status, body = call(event("POST", "/runs", {"spec": spec}))
    assert status == 400 and body["field"] == "workload.phases" and "max_run_hours 1" in body["message"], body
    nothing_started(cloud)
