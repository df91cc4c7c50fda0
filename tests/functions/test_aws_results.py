"""Results: S3 first, then Timestream LiveAnalytics or InfluxDB; prices; the janitor; handler glue."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from botocore.stub import ANY, Stubber

from benchwright.errors import IngestFailed, RetryableIngestError
from benchwright.providers.aws.common import Clients, lifecycle_tags, tag_list
from benchwright.providers.aws.config import AwsSettings
from benchwright.providers.aws.influx import InfluxSink, line
from benchwright.providers.aws.points import Row, rows
from benchwright.providers.aws.pricing import AwsPriceBook, PriceList, workflow_cost
from benchwright.providers.aws.s3 import S3Artifacts
from benchwright.providers.aws.store import S3ResultStore
from benchwright.providers.aws.timestream import TimestreamSink
from benchwright.results import MetricPoint, MetricSeries, ResultDocument
from benchwright.runs import CellResult, RunRecord
from tests.aws_world import ENV, REGION, sample_documents
from tests.receivers import InfluxWriteReceiver

PRICES = Path(__file__).resolve().parents[1] / "data" / "pricing"


@pytest.fixture(scope="module")
def aws() -> Iterator[tuple[AwsSettings, Clients]]:
    from moto import mock_aws

    mp = pytest.MonkeyPatch()
    for k, v in ENV.items():
        mp.setenv(k, v)
    with mock_aws():
        import boto3

        boto3.client("s3", region_name=REGION).create_bucket(Bucket="bw-results")
        ts = boto3.client("timestream-write", region_name=REGION)
        ts.create_database(DatabaseName="bw")
        ts.create_table(DatabaseName="bw", TableName="results")
        settings = AwsSettings(
            region=REGION,
            results_bucket="bw-results",
            sink="timestream",
            timestream_database="bw",
            timestream_table="results",
        )
        yield settings, Clients(settings)
    mp.undo()


def record(run_id: str = "r-1", seconds: float = 240.0) -> RunRecord:
    plan = {
        "run_id": run_id,
        "cell_id": "default",
        "phases": [
            {"workload": "ycsb", "phase": "load", "engine": "postgres"},
            {"workload": "ycsb", "phase": "run", "engine": "postgres"},
        ],
    }
    start = datetime(2026, 11, 22, 1, 0, tzinfo=UTC)
    docs = [ResultDocument.parse(d) for d in sample_documents(plan, start, seconds)]
    metrics = [
        MetricSeries(
            name="CPUUtilization",
            unit="Percent",
            source="cloudwatch:AWS/RDS",
            points=[MetricPoint(t=60.0 * i, value=40.0 + i) for i in range(4)],
        )
    ]
    cell = CellResult(cell_id="default", phases={d.phase: d for d in docs}, metrics=metrics)
    return RunRecord(run_id=run_id, spec_name="rds-pg", started_at=start, cells=[cell])


# ---------------------------------------------------------------- rows and sinks
def test_a_run_becomes_interval_operation_and_metric_rows() -> None:
    kinds = [r.measurement for r in rows(record())]
    assert kinds.count("interval") == 5 + 240 and kinds.count("operation") == 2 and kinds.count("metric") == 4


def test_timestream_writes_multi_measure_records_in_batches_of_100(aws: Any) -> None:
    sink = TimestreamSink(aws[1], "bw", "results")
    client = aws[1]("timestream-write")
    calls: list[int] = []
    original = client.write_records

    def spy(**kwargs: Any) -> Any:
        calls.append(len(kwargs["Records"]))
        assert all(r["MeasureValueType"] == "MULTI" and r["Version"] == 1 for r in kwargs["Records"])
        return original(**kwargs)

    client.write_records = spy
    try:
        sent = sink.write(record())
        sink.write(record())  # idempotent by run id: the same versioned records again
    finally:
        client.write_records = original
    assert sent == 251
    assert calls == [100, 100, 51, 100, 100, 51]


def test_timestream_rejections_of_duplicates_pass_and_real_rejections_fail(aws: Any) -> None:
    sink = TimestreamSink(aws[1], "bw", "results")
    client = aws[1]("timestream-write")
    params = {"DatabaseName": "bw", "TableName": "results", "Records": ANY}
    with Stubber(client) as stub:
        stub.add_client_error(
            "write_records",
            "RejectedRecordsException",
            "rejected",
            419,
            expected_params=params,
            response_meta={},
            modeled_fields={
                "RejectedRecords": [{"RecordIndex": 0, "Reason": "same version", "ExistingVersion": 1}]
            },
        )
        for _ in range(2):
            stub.add_response("write_records", {"RecordsIngested": {"Total": 100}}, params)
        stub.add_client_error(
            "write_records",
            "RejectedRecordsException",
            "rejected",
            419,
            expected_params=params,
            modeled_fields={
                "RejectedRecords": [{"RecordIndex": 3, "Reason": "Measure value outside retention"}]
            },
        )
        assert sink.write(record()) == 251
        with pytest.raises(IngestFailed, match="outside retention"):
            sink.write(record())


def test_timestream_throttling_is_retryable(aws: Any) -> None:
    sink = TimestreamSink(aws[1], "bw", "results")
    with Stubber(aws[1]("timestream-write")) as stub:
        stub.add_client_error("write_records", "ThrottlingException", "slow down")
        with pytest.raises(RetryableIngestError):
            sink.write(record())


def test_line_protocol_escapes_tags_and_types_fields() -> None:
    row = Row(
        "interval",
        datetime(2026, 11, 22, 1, 0, 1, tzinfo=UTC),
        {"spec": "rds pg,1", "run_id": "r=1"},
        {"throughput": 12.5, "errors": 3},
    )
    assert line(row) == (
        "benchwright_interval,run_id=r\\=1,spec=rds\\ pg\\,1 throughput=12.5,errors=3i 1795309201000000000"
    )


@pytest.fixture
def influx() -> Iterator[InfluxWriteReceiver]:
    """InfluxDB's v2 write API as InfluxDB checks it (tests/receivers.py), on 127.0.0.1."""
    receiver = InfluxWriteReceiver(token="op-token-123", org="benchwright", bucket="results")
    yield receiver
    receiver.close()


def test_influxdb_sink_writes_what_the_v2_write_api_accepts(influx: InfluxWriteReceiver) -> None:
    run = record()
    expected = list(rows(run))

    sent = InfluxSink(influx.url, "op-token-123", "benchwright", "results").write(run)

    assert influx.refused == []
    assert sent == len(expected) == len(influx.points) == 251
    assert {(w.org, w.bucket, w.precision) for w in influx.writes} == {("benchwright", "results", "ns")}
    for row, point in zip(expected, influx.points, strict=True):
        assert point.measurement == f"benchwright_{row.measurement}"
        assert point.tags == {k: v for k, v in row.tags.items() if v != ""}
        assert point.fields == pytest.approx(row.fields)
        assert {k: type(v) for k, v in point.fields.items()} == {k: type(v) for k, v in row.fields.items()}
        assert point.timestamp == int(row.time.timestamp() * 1_000_000) * 1000


@pytest.mark.parametrize(
    ("case", "error", "said"),
    [
        ("wrong_token", IngestFailed, "HTTP 401"),
        ("unknown_bucket", IngestFailed, "HTTP 404"),
        ("down", RetryableIngestError, "HTTP 503"),
    ],
)
def test_influxdb_refusals_are_named_without_the_token(
    influx: InfluxWriteReceiver, case: str, error: type[Exception], said: str
) -> None:
    token, bucket = "op-token-123", "results"
    if case == "wrong_token":
        token = "not-the-token-456"
    elif case == "unknown_bucket":
        bucket = "nope"
    else:
        influx.down = True
    with pytest.raises(error) as caught:
        InfluxSink(influx.url, token, "benchwright", bucket).write(record())
    assert said in str(caught.value) and token not in str(caught.value)
    assert influx.points == []


def test_the_sink_reads_its_token_from_its_own_secret_in_either_shape(
    aws: tuple[AwsSettings, Clients], influx: InfluxWriteReceiver
) -> None:
    from benchwright.providers.aws.bundle import LazyInfluxSink

    config, clients = aws
    shapes = {
        "json": json.dumps({"token": "op-token-123"}),
        "bare": "op-token-123",
        # what Timestream for InfluxDB keeps for signing in: not a token (this used to be sent: 401)
        "admin": json.dumps({"username": "admin", "password": "adminPw-789", "organization": "benchwright"}),
    }
    for shape, value in shapes.items():
        arn = clients("secretsmanager").create_secret(Name=f"bw-influx-{shape}", SecretString=value)["ARN"]
        settings = config.model_copy(
            update={
                "sink": "influxdb",
                "influx_url": influx.url,
                "influx_bucket": "results",
                "influx_token_secret_arn": arn,
            }
        )
        sink = LazyInfluxSink(settings, clients)
        if shape == "admin":
            with pytest.raises(IngestFailed, match="holds no API token") as caught:
                sink.write(record(f"r-{shape}"))
            assert "adminPw-789" not in str(caught.value)
        else:
            assert sink.write(record(f"r-{shape}")) == 251
    assert {p.tags["run_id"] for p in influx.points} == {"r-json", "r-bare"}
    assert influx.refused == []


@pytest.mark.parametrize("text", ["", "   ", "two words", "{not json", '{"token": ""}', "[1, 2]"])
def test_a_secret_that_is_not_a_token_is_refused(text: str) -> None:
    from benchwright.providers.aws.influx import token_from_secret

    with pytest.raises(IngestFailed, match="token"):
        token_from_secret(text)


def test_a_sink_that_fails_is_a_warning_on_the_record_which_a_later_write_clears(aws: Any) -> None:
    class Busy:
        calls = 0

        def write(self, rec: RunRecord) -> int:
            self.calls += 1
            raise RetryableIngestError("timestream: ThrottlingException (transient)")

    busy = Busy()
    store = S3ResultStore(S3Artifacts(aws[1], "bw-results"), busy)
    store.sink_retry_delays_s = (0.0, 0.0)
    store.save_run(record("kept-1"))  # no exception: the sink never fails a run
    assert busy.calls == 3  # tried again twice, then given up
    kept = store.get_run("kept-1")
    assert kept is not None and kept.cells[0].phases["run"].operations_total == 2000
    assert [(w.code, "ThrottlingException" in w.message) for w in kept.warnings] == [("sink_failed", True)]
    assert [r.run_id for r in store.history("rds-pg")] == ["kept-1"]
    from benchwright.report.text import render_summary

    assert "warning: sink_failed: RetryableIngestError" in render_summary(kept, width=200)

    # the next save (a retried stage) reaches a sink that accepts: the warning goes
    store.sink = TimestreamSink(aws[1], "bw", "results")
    store.save_run(kept)
    again = store.get_run("kept-1")
    assert again is not None and again.warnings == [] and store.last_written == 251


def test_a_refusal_is_not_retried_and_names_the_sink(aws: Any) -> None:
    store = S3ResultStore(S3Artifacts(aws[1], "bw-results"), TimestreamSink(aws[1], "bw", "no-such-table"))
    store.save_run(record("refused-1"))
    kept = store.get_run("refused-1")
    assert kept is not None
    (warning,) = kept.warnings
    assert warning.code == "sink_failed" and "no-such-table" in warning.message


def test_a_suite_record_carries_its_cells_sink_warnings_once() -> None:
    from benchwright.runs import RunWarning
    from benchwright.stages.suite import merged_warnings

    cell = record("s-1-c0")
    cell.warnings = [RunWarning(code="sink_failed", message="IngestFailed: refused")]
    merged = merged_warnings([], cell)
    assert [w.message for w in merged] == ["s-1-c0: IngestFailed: refused"]
    assert merged_warnings(merged, cell) == merged  # summarized twice: still once
    cell.warnings = []
    assert merged_warnings(merged, cell) == []  # written later: gone


# ---------------------------------------------------------------- pricing
def excerpt(service: str) -> dict[str, Any]:
    return json.loads((PRICES / f"{service}.json").read_text())


def only(service: str, **attributes: str) -> dict[str, Any]:
    from benchwright.providers.aws.pricing import matches

    data = excerpt(service)
    return {"FormatVersion": "aws_v1", "PriceList": [i for i in data["PriceList"] if matches(i, attributes)]}


def test_price_book_uses_get_products_for_every_line_item(aws: Any) -> None:
    client = aws[1]("pricing")
    prices = AwsPriceBook(PriceList(aws[1], REGION), transitions=40, lambda_invocations=14)
    from benchwright.spec import parse_suite

    spec = parse_suite(
        {
            "name": "rds-mysql",
            "target": {
                "provider": "rds",
                "engine": "mysql",
                "engine_version": "8.0",
                "instance_class": "db.t2.small",
                "storage": {"type": "io1", "size_gb": 100, "iops": 3000},
            },
            "workload": {"name": "ycsb"},
            "runner": {"platform": "fargate", "count": 2, "size": {"cpu": 1, "memory_mb": 2048}},
        }
    ).benchmarks[0]
    with Stubber(client) as stub:
        stub.add_response(
            "get_products",
            only(
                "AmazonRDS",
                instanceType="db.t2.small",
                databaseEngine="MySQL",
                deploymentOption="Single-AZ",
                usagetype="InstanceUsage:db.t2.small",
            ),
        )
        stub.add_response(
            "get_products",
            only(
                "AmazonRDS",
                productFamily="Database Storage",
                databaseEngine="MySQL",
                volumeType="Provisioned IOPS",
                deploymentOption="Single-AZ",
            ),
        )
        stub.add_response(
            "get_products",
            only(
                "AmazonRDS",
                productFamily="Provisioned IOPS",
                databaseEngine="MySQL",
                volumeType="Provisioned IOPS",
                deploymentOption="Single-AZ",
            ),
        )
        stub.add_response("get_products", only("AmazonECS", usagetype="Fargate-vCPU-Hours:perCPU"))
        stub.add_response("get_products", only("AmazonECS", usagetype="Fargate-GB-Hours"))
        cell = record().cells[0]
        cost = prices.estimate(spec, cell, duration_s=3600)
        stub.assert_no_pending_responses()
    assert cost is not None
    hour = cost.items  # rounded to 6 decimals
    assert hour["rds db.t2.small Single-AZ"] == pytest.approx(0.034, abs=1e-6)
    assert hour["rds storage io1 100 GB"] == pytest.approx(100 * 0.125 / 730, abs=1e-6)
    assert hour["rds provisioned IOPS 3000"] == pytest.approx(3000 * 0.10 / 730, abs=1e-6)
    # the runner over the span of the cell's phases (it starts after the target is ready), not the hour
    starts, ends = [d.started_at for d in cell.phases.values()], [d.ended_at for d in cell.phases.values()]
    span = (max(ends) - min(starts)).total_seconds()
    assert 60 < span < 3600
    runner = "fargate runner 2 x 1 vCPU / 2 GB"
    assert hour[runner] == pytest.approx(2 * (0.04048 + 2 * 0.004445) * span / 3600, abs=1e-6)
    assert "measured: the span of the cell's phases" in cost.notes[runner]
    assert cost.total == pytest.approx(sum(cost.items.values()), abs=1e-5)
    assert cost.ops_per_dollar == pytest.approx(2000 / cost.total)
    assert cost.monthly_nightly == pytest.approx(cost.total * 30, rel=1e-3)
    with Stubber(client):  # cached: the same lookups make no new calls
        assert prices.estimate(spec, cell, duration_s=3600) == cost


def test_the_workflow_itself_costs_well_under_a_cent() -> None:
    assert workflow_cost(transitions=60, lambda_invocations=20) < 0.01


def test_a_missing_price_names_the_lookup(aws: Any) -> None:
    from benchwright.errors import ProvisioningFailed

    with Stubber(aws[1]("pricing")) as stub:
        stub.add_response("get_products", {"FormatVersion": "aws_v1", "PriceList": []})
        with pytest.raises(ProvisioningFailed, match=r"instanceType=db\.x9\.huge"):
            PriceList(aws[1], REGION).price("AmazonRDS", instanceType="db.x9.huge")


# ---------------------------------------------------------------- janitor
def test_janitor_sweeps_only_what_has_expired(aws: Any) -> None:
    from benchwright.providers.aws.janitor import leftovers, sweep

    config, clients = aws
    rds = clients("rds")
    old = lifecycle_tags(config, "old-run", now=datetime.now(UTC) - timedelta(days=2))
    new = lifecycle_tags(config, "new-run")
    for name, tags in (("bw-old", old), ("bw-new", new)):
        rds.create_db_instance(
            DBInstanceIdentifier=name,
            Engine="postgres",
            DBInstanceClass="db.t3.micro",
            MasterUsername="u",
            MasterUserPassword="p" * 12,
            AllocatedStorage=20,
            Tags=tag_list(tags),
        )
    clients("memorydb").create_cluster(
        ClusterName="bw-old-mdb", NodeType="db.r7g.large", ACLName="open-access", Tags=tag_list(old)
    )

    report = sweep(clients)

    assert sorted(report.deleted) == ["memorydb-cluster:bw-old-mdb", "rds-instance:bw-old"]
    assert "rds-instance:bw-new" in report.kept
    assert leftovers(clients, "old-run") == [] and len(leftovers(clients, "new-run")) == 1


# ---------------------------------------------------------------- handler glue
# a valid spec for run states whose spec plays no part (RunState.spec is the validated model)
SMALL_SPEC = {"name": "s", "target": {"provider": "local", "engine": "redis"}, "workload": {"name": "ycsb"}}


def test_a_caught_error_becomes_the_states_error_and_status() -> None:
    from functions._common import dump, parse_state

    event = {
        "run_id": "r",
        "spec_name": "s",
        "spec": SMALL_SPEC,
        "poll_seconds": 2.5,
        "caught": {
            "Error": "RunnerFailed",
            "Cause": json.dumps({"errorMessage": "task exited 137", "errorType": "RunnerFailed"}),
        },
    }
    state = parse_state(event)
    assert (state.status, state.error_type, state.error) == ("failed", "RunnerFailed", "task exited 137")
    assert dump(state)["poll_seconds"] == 3  # ASL Wait needs a whole number


def test_a_run_state_without_a_valid_spec_is_refused_naming_the_field() -> None:
    from benchwright.errors import SpecError
    from functions._common import parse_state

    bad = {**SMALL_SPEC, "target": {"provider": "local", "engine": "redis", "port": "any"}}
    with pytest.raises(SpecError) as caught:
        parse_state({"run_id": "r", "spec_name": "s", "spec": bad})
    assert caught.value.field == "spec.target.port"
    with pytest.raises(SpecError) as missing:
        parse_state({"run_id": "r", "spec_name": "s"})
    assert missing.value.field == "spec"


def test_a_teardown_failure_after_a_failed_run_keeps_the_first_error() -> None:
    from functions._common import parse_state

    cause = json.dumps({"errorMessage": "task exited 137"})
    state = parse_state(
        {
            "run_id": "r",
            "spec_name": "s",
            "spec": SMALL_SPEC,
            "status": "running",
            "caught": {"Error": "RunnerFailed", "Cause": cause},
            "teardown_caught": {
                "Error": "TeardownFailed",
                "Cause": json.dumps({"errorMessage": "target: x"}),
            },
        }
    )
    assert (state.status, state.error_type, state.error) == ("failed", "RunnerFailed", "task exited 137")
    assert state.warnings == ["teardown failed: TeardownFailed: target: x"]


def test_settings_come_from_benchwright_environment_variables() -> None:
    from functions import environment_names

    settings = AwsSettings.from_env(
        {
            "BENCHWRIGHT_SUBNET_IDS": "subnet-1, subnet-2",
            "BENCHWRIGHT_SINK": "influxdb",
            "BENCHWRIGHT_TTL_HOURS": "6",
            "AWS_REGION": "eu-west-1",
        }
    )
    assert settings.subnet_ids == ["subnet-1", "subnet-2"] and settings.sink == "influxdb"
    assert settings.ttl_hours == 6 and settings.region == "eu-west-1"
    assert "BENCHWRIGHT_RESULTS_BUCKET" in environment_names()


# ---------------------------------------------------------------- suite ends and the janitor handler
def test_expand_validates_every_cell_and_picks_a_poll_interval_within_the_transition_budget() -> None:
    from benchwright.spec import cell_seconds, parse_spec
    from benchwright.stages.suite import POLL_BUDGET, expand
    from tests.aws_world import rds_spec

    spec = rds_spec("expand-1")
    spec["matrix"] = {"workload.phases.run.threads": [1, 2, 4]}
    out = expand({"spec": spec, "trigger": "schedule"})
    (group,) = out["groups"]  # threads is a run setting: one target, one dataset
    assert [c["run_id"] for c in group["cells"]] == [f"{out['run_id']}-{i:03d}" for i in range(3)]
    assert group["target"]["run_id"] == f"{out['run_id']}-000"  # the janitor's sweep of the run finds it
    phases = [c["spec"]["workload"].get("phases", {}).get("load", "default") for c in group["cells"]]
    assert phases[0] is not None and phases[1:] == [None, None]  # the first cell loads, the others do not
    poll = group["cells"][0]["poll_seconds"]
    assert poll * POLL_BUDGET >= cell_seconds(parse_spec(spec))


def test_expand_refuses_a_matrix_too_big_for_one_execution() -> None:
    from benchwright.errors import SpecError
    from benchwright.stages.suite import expand
    from tests.aws_world import rds_spec

    spec = rds_spec("expand-2")
    spec["matrix"] = {"workload.phases.run.threads": list(range(1, 66))}
    with pytest.raises(SpecError, match=r"(at most|more than) 64"):
        expand({"spec": spec})


def test_janitor_handler_reports_what_it_swept(aws: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    import functions._common as common
    from functions.janitor import handler
    from tests.aws_world import FakeContext

    config, clients = aws
    monkeypatch.setattr(common, "_settings", config.model_copy(update={"owner": "tests-janitor"}))
    monkeypatch.setattr(common, "_clients", None)
    old = lifecycle_tags(
        config.model_copy(update={"owner": "tests-janitor"}),
        "jan-run",
        now=datetime.now(UTC) - timedelta(days=1),
    )
    clients("rds").create_db_instance(
        DBInstanceIdentifier="bw-jan",
        Engine="mysql",
        DBInstanceClass="db.t3.micro",
        MasterUsername="u",
        MasterUserPassword="p" * 12,
        AllocatedStorage=20,
        Tags=tag_list(old),
    )

    dry = handler({"dry_run": True}, FakeContext())
    report = handler({}, FakeContext())

    assert dry["deleted"] == ["rds-instance:bw-jan"] and report["deleted"] == ["rds-instance:bw-jan"]
    assert handler({}, FakeContext())["deleted"] == []


def test_timestream_history_reads_the_query_rows(aws: Any) -> None:
    import requests

    from benchwright.providers.aws.timestream import TimestreamHistory, history_sql

    columns = [
        {"Name": n, "Type": {"ScalarType": t}}
        for n, t in (
            ("run_id", "VARCHAR"),
            ("cell", "VARCHAR"),
            ("at", "TIMESTAMP"),
            ("throughput", "DOUBLE"),
            ("p99_us", "DOUBLE"),
        )
    ]
    rows = [
        {"Data": [{"ScalarValue": v} for v in ("r-2", "default", "2026-11-22 01:04:00", "5012.5", "3100.0")]},
        {"Data": [{"ScalarValue": v} for v in ("r-1", "default", "2026-11-21 01:04:00", "4990.0", "3150.0")]},
    ]
    sql = history_sql("bw", "results", "rds-pg", 2)
    requests.post(
        "http://motoapi.amazonaws.com/moto-api/static/timestream/query-results",
        json={"results": {sql: [{"QueryId": "q", "Rows": rows, "ColumnInfo": columns}]}},
        timeout=5,
    )

    history = TimestreamHistory(aws[1], "bw", "results").runs("rds-pg", limit=2)

    assert [(h["run_id"], h["throughput"], h["p99_us"]) for h in history] == [
        ("r-2", 5012.5, 3100.0),
        ("r-1", 4990.0, 3150.0),
    ]
    assert "spec = 'rds-pg'" in sql and "LIMIT 2" in sql
