"""The API Lambda with real API Gateway (REST, IAM auth) proxy event shapes, against moto."""

from __future__ import annotations

import base64
import json

import boto3
import pytest
import yaml

import functions.api_routes as api
from benchwright.api.backend import REPORT_KEY, CloudBackend
from tests.api_events import REGION, ROOT, Context, call, event, quickstart, started, suite


def test_submit_suite_starts_one_run_per_benchmark(cloud: CloudBackend) -> None:
    status, body = call(event("POST", "/runs", {"suite": suite(), "tags": {"team": "perf"}}))
    assert status == 201, body
    assert [r["spec_name"] for r in body["runs"]] == [b["name"] for b in suite()["benchmarks"]]
    for run in body["runs"]:
        kind, execution = cloud.describe(run["run_id"])
        assert kind == run["kind"] == "benchmark"
        state = json.loads(execution["input"])
        assert state["run_id"] == run["run_id"] and state["spec"]["tags"]["team"] == "perf"
        # the suite's name, as local runs carry it: `benchwright pull --spec SUITE` finds every run
        assert state["spec"]["tags"]["suite"] == suite()["suite"]
        # how many benchmarks the suite's night has: the last to finish posts the digest
        assert state["spec"]["tags"]["suite_size"] == str(len(suite()["benchmarks"]))


def test_spec_with_a_matrix_runs_as_a_suite(cloud: CloudBackend) -> None:
    spec = quickstart()
    spec["matrix"] = {"workload.phases.run.threads": [4, 8]}
    status, body = call(event("POST", "/runs", {"spec": spec}))
    assert status == 201, body
    (run,) = body["runs"]
    kind, execution = cloud.describe(run["run_id"])
    assert kind == "suite"
    assert json.loads(execution["input"])["spec"]["matrix"] == spec["matrix"]


def test_submit_spec_starts_an_execution_named_by_the_run_id(cloud: CloudBackend) -> None:
    status, body = call(event("POST", "/runs", {"spec": quickstart()}))
    assert status == 201, body
    (run,) = body["runs"]
    kind, execution = cloud.describe(run["run_id"])
    assert kind == "benchmark"
    assert execution["executionArn"] == run["execution_arn"]
    assert json.loads(execution["input"])["run_id"] == run["run_id"]


def test_direct_benchmark_input_carries_a_poll_interval_sized_to_the_cell(cloud: CloudBackend) -> None:
    """The Wait states read poll_seconds: without it a long provisioning polls every 10 s and blows
    the ~60-transition budget; with it every check loop fits POLL_BUDGET rounds."""
    from benchwright.spec import cell_seconds, parse_spec
    from benchwright.stages.suite import POLL_BUDGET, poll_seconds_for

    status, body = call(event("POST", "/runs", {"spec": quickstart()}))
    assert status == 201, body
    _, execution = cloud.describe(started(body))
    payload = json.loads(execution["input"])
    spec = parse_spec(quickstart())
    assert payload["poll_seconds"] == poll_seconds_for(spec)
    assert isinstance(payload["poll_seconds"], int) and payload["poll_seconds"] >= 15
    assert cell_seconds(spec) / payload["poll_seconds"] <= POLL_BUDGET


def run_record(run_id: str) -> dict:
    """A stored RunRecord as the workflow writes it: one cell, a measured run phase with a warning."""
    from datetime import UTC, datetime

    from benchwright.results import Measurement, OperationSummary, ResultDocument, ValidityFlag
    from benchwright.runs import CellResult, CostEstimate, RunRecord

    now = datetime.now(UTC)
    read = OperationSummary(
        operations=1000, statuses={"OK": 1000}, throughput=500.0, average_us=800, min_us=100, max_us=9000,
        p50_us=700, p90_us=1200, p95_us=1500, p99_us=2500, p999_us=8000,
    )  # fmt: skip
    doc = ResultDocument(
        run_id=run_id, workload="ycsb", phase="run", engine="postgres",
        measurement=Measurement(latency="service_time", method="wrapper"), started_at=now, ended_at=now,
        runtime_ms=2000, operations_total=1000, throughput=500.0, operations={"READ": read},
        validity=[ValidityFlag(code="too_short", severity="warning", message="under 60 s")],
    )  # fmt: skip
    record = RunRecord(
        run_id=run_id, spec_name="nightly-rds-postgres-ycsb-a", started_at=now,
        cells=[CellResult(cell_id="c1", phases={"run": doc})],
        cost=CostEstimate(total=0.5, source="test price book"),
    )  # fmt: skip
    return json.loads(record.model_dump_json())


def test_get_run_returns_status_and_record_fields(cloud: CloudBackend) -> None:
    run_id = started(call(event("POST", "/runs", {"spec": quickstart()}))[1])
    boto3.client("s3", region_name=REGION).put_object(
        Bucket="results", Key=f"runs/{run_id}/record.json", Body=json.dumps(run_record(run_id))
    )
    status, body = call(event("GET", f"/runs/{run_id}"))
    assert status == 200, body
    assert body["run_id"] == run_id and body["status"] in {"RUNNING", "SUCCEEDED"}
    assert body["cost"]["total"] == 0.5
    assert body["summary"]["c1"]["throughput"] == 500.0
    assert body["summary"]["c1"]["p99_us"] == {"READ": 2500}
    assert [(f["code"], f["cell"], f["phase"]) for f in body["validity"]] == [("too_short", "c1", "run")]
    assert body["warnings"] == []


def test_get_run_shows_a_refused_sink_write_as_a_warning(cloud: CloudBackend) -> None:
    run_id = started(call(event("POST", "/runs", {"spec": quickstart()}))[1])
    record = run_record(run_id)
    record["warnings"] = [{"code": "sink_failed", "message": "IngestFailed: refused", "at": None}]
    boto3.client("s3", region_name=REGION).put_object(
        Bucket="results", Key=f"runs/{run_id}/record.json", Body=json.dumps(record)
    )
    status, body = call(event("GET", f"/runs/{run_id}"))
    assert status == 200 and body["warnings"][0]["code"] == "sink_failed"
    assert body["summary"]["c1"]["throughput"] == 500.0  # the run's figures stand


def test_get_run_without_a_record_yet_still_answers(cloud: CloudBackend) -> None:
    run_id = started(call(event("POST", "/runs", {"spec": quickstart()}))[1])
    status, body = call(event("GET", f"/runs/{run_id}"))
    assert status == 200
    assert body["summary"] is None and body["validity"] == []


def test_list_runs_newest_first_and_limit_validated(cloud: CloudBackend) -> None:
    ids = [started(call(event("POST", "/runs", {"spec": quickstart()}))[1]) for _ in range(2)]
    status, body = call(event("GET", "/runs", query={"limit": "10"}))
    assert status == 200
    assert set(ids) <= {r["run_id"] for r in body["runs"]}
    status, body = call(event("GET", "/runs", query={"limit": "0"}))
    assert status == 422 and body["error"] == "invalid_request"


def test_report_is_a_presigned_link(cloud: CloudBackend) -> None:
    run_id = started(call(event("POST", "/runs", {"spec": quickstart()}))[1])
    status, body = call(event("GET", f"/runs/{run_id}/report"))
    assert status == 404 and body["error"] == "run_not_found"
    boto3.client("s3", region_name=REGION).put_object(
        Bucket="results", Key=REPORT_KEY.format(run_id=run_id), Body=b"<html></html>"
    )
    status, body = call(event("GET", f"/runs/{run_id}/report"))
    assert status == 200
    assert "X-Amz-Signature" in body["url"] and run_id in body["url"]


def test_record_is_a_presigned_link_to_the_whole_record(cloud: CloudBackend) -> None:
    import urllib.parse

    run_id = started(call(event("POST", "/runs", {"spec": quickstart()}))[1])
    status, body = call(event("GET", f"/runs/{run_id}/record"))
    assert status == 404 and "no record yet" in body["message"]
    record = run_record(run_id)
    boto3.client("s3", region_name=REGION).put_object(
        Bucket="results", Key=f"runs/{run_id}/record.json", Body=json.dumps(record)
    )
    status, body = call(event("GET", f"/runs/{run_id}/record", query={"expires_in": "600"}))
    assert status == 200 and body["expires_in"] == 600
    assert "X-Amz-Signature" in body["url"] and f"runs/{run_id}/record.json" in body["url"]
    assert urllib.parse.urlsplit(body["url"]).path.endswith(f"/runs/{run_id}/record.json")


def test_report_link_follows_the_records_pointer(cloud: CloudBackend) -> None:
    run_id = started(call(event("POST", "/runs", {"spec": quickstart()}))[1])
    record = run_record(run_id)
    record["report"] = "s3://results/reports/custom.html"
    s3 = boto3.client("s3", region_name=REGION)
    s3.put_object(Bucket="results", Key=f"runs/{run_id}/record.json", Body=json.dumps(record))
    s3.put_object(Bucket="results", Key="reports/custom.html", Body=b"<html></html>")
    status, body = call(event("GET", f"/runs/{run_id}/report", query={"expires_in": "600"}))
    assert status == 200, body
    assert "/reports/custom.html" in body["url"] and body["expires_in"] == 600


class RecordingLambda:
    """Stands in for the Lambda client: records asynchronous invocations."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict]] = []

    def invoke(self, FunctionName: str, InvocationType: str, Payload: bytes) -> dict:
        assert InvocationType == "Event"
        self.calls.append((FunctionName, json.loads(Payload)))
        return {"StatusCode": 202}


def test_cancel_stops_a_running_execution_and_starts_teardown(cloud: CloudBackend) -> None:
    sfn = boto3.client("stepfunctions", region_name=REGION)
    waiting = json.dumps({"StartAt": "W", "States": {"W": {"Type": "Wait", "Seconds": 3600, "End": True}}})
    sfn.update_state_machine(stateMachineArn=cloud.benchmark_arn, definition=waiting)
    recorder = RecordingLambda()
    cloud._clients["lambda"] = recorder
    cloud.teardown_function, cloud.janitor_function = "teardown-fn", "janitor-fn"
    run_id = started(call(event("POST", "/runs", {"spec": quickstart()}))[1])
    status, body = call(event("POST", f"/runs/{run_id}/cancel"))
    assert status == 200, body
    assert body == {"run_id": run_id, "status": "ABORTED", "teardown_started": True}
    assert cloud.describe(run_id)[1]["status"] == "ABORTED"
    assert ("janitor-fn", {"run_id": run_id, "reason": "cancelled"}) in recorder.calls
    status, body = call(event("POST", f"/runs/{run_id}/cancel"))
    assert body["status"] == "ALREADY_FINISHED"


def test_teardown_gets_each_cells_latest_state_from_the_history_in_either_order() -> None:
    """Real Step Functions returns the history newest first when asked; moto returns it oldest
    first. The event ids say which is newer, so either order gives each cell's newest state."""
    from benchwright.api.backend import latest_run_states

    def exited(event_id: int, output: dict) -> dict:
        return {
            "id": event_id,
            "type": "TaskStateExited",
            "stateExitedEventDetails": {"name": "X", "output": json.dumps(output)},
        }

    newest_first = [
        exited(9, {"run_id": "r", "cell_id": "c1", "spec": {}, "target": {"id": "db-2"}}),
        exited(7, {"run_id": "r", "cell_id": "c0", "spec": {}, "target": {"id": "db-1"}}),
        exited(5, {"run_id": "r", "cell_id": "c1", "spec": {}, "target": {}}),
        exited(3, {"run_id": "r", "cell_id": "c0", "spec": {}, "target": {}}),
        {"id": 1, "type": "ExecutionStarted", "executionStartedEventDetails": {"input": "{}"}},
        exited(2, {"not": "a run state"}),
    ]
    for events in (newest_first, newest_first[::-1]):
        states = latest_run_states(events)
        assert [(s["cell_id"], s["target"]) for s in states] == [
            ("c1", {"id": "db-2"}),
            ("c0", {"id": "db-1"}),
        ]


@pytest.mark.parametrize(
    ("evt", "status", "code"),
    [
        pytest.param(event("POST", "/runs", "{not json"), 400, "malformed_json", id="malformed-json"),
        pytest.param(event("POST", "/runs", {"spec": {"name": "x"}}), 400, "invalid_spec", id="invalid-spec"),
        pytest.param(
            event("POST", "/runs", {"spec": {}, "suite": {}}), 422, "invalid_request", id="spec-and-suite"
        ),
        pytest.param(event("POST", "/runs", {"nope": 1}), 422, "invalid_request", id="unknown-field"),
        pytest.param(event("POST", "/runs", "x" * (256 * 1024 + 1)), 413, "body_too_large", id="oversize"),
        pytest.param(event("GET", "/runs/run-unknown"), 404, "run_not_found", id="unknown-run"),
        pytest.param(event("GET", "/runs/bad%20id!"), 422, "invalid_request", id="bad-run-id"),
        pytest.param(event("GET", "/nowhere"), 404, "not_found", id="unknown-route"),
        pytest.param(
            event("GET", "/runs", requestContext={"stage": "v1"}), 401, "unauthenticated", id="no-identity"
        ),
        pytest.param(
            event("POST", "/runs", base64.b64encode(b"{oops").decode(), isBase64Encoded=True),
            400,
            "malformed_json",
            id="base64-garbage",
        ),
    ],
)
def test_bad_requests_get_documented_4xx(cloud: CloudBackend, evt: dict, status: int, code: str) -> None:
    got, body = call(evt)
    assert (got, body.get("error")) == (status, code), body


def test_local_targets_are_refused_by_the_cloud_api(cloud: CloudBackend) -> None:
    local = yaml.safe_load((ROOT / "examples" / "quickstart.yaml").read_text())
    status, body = call(event("POST", "/runs", {"suite": local}))
    assert (status, body["field"]) == (400, "benchmarks[0].target.provider")


def test_invalid_spec_names_the_field(cloud: CloudBackend) -> None:
    spec = quickstart()
    spec["repeats"] = 0
    status, body = call(event("POST", "/runs", {"spec": spec}))
    assert status == 400
    assert body["field"] == "repeats"


def test_a_predicted_drain_under_credits_refuse_is_refused_naming_the_field(cloud: CloudBackend) -> None:
    spec = quickstart()
    spec["target"]["storage"] = {"type": "gp2", "size_gb": 20}  # baseline 100 IOPS
    spec["workload"]["phases"]["run"] = {"threads": 16, "duration_s": 3000, "expected_iops": 3000}
    spec["validity"] = {"credits": "refuse"}  # 5.4e6 / 2,900 = 1,862 s: drains inside the run
    status, body = call(event("POST", "/runs", {"spec": spec}))
    assert (status, body["field"]) == (400, "target.storage"), body
    status, body = call(event("POST", "/runs", {"suite": {"suite": "s", "benchmarks": [spec]}}))
    assert (status, body["field"]) == (400, "benchmarks[0].target.storage"), body


def test_openapi_document_is_up_to_date() -> None:
    checked_in = (ROOT / "docs" / "openapi.json").read_text()
    assert checked_in == api.openapi_json() + "\n", (
        "regenerate: python -m functions.api_routes docs/openapi.json"
    )


def test_openapi_lists_every_route() -> None:
    doc = json.loads(api.openapi_json())
    assert set(doc["paths"]) == {
        "/runs",
        "/runs/{run_id}",
        "/runs/{run_id}/report",
        "/runs/{run_id}/record",
        "/runs/{run_id}/cancel",
    }


def test_lambda_module_serves_the_routes(cloud: CloudBackend) -> None:
    from functions.api import handler

    out = handler(event("GET", "/runs", query={"limit": "5"}), Context())
    assert out["statusCode"] == 200
    assert json.loads(out["body"]) == {"runs": []}
