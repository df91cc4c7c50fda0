"""The AWS loose ends, in moto: the janitor's run-id sweep (the API's cancel), the HTML report in the
results bucket (presigned by the API), and PriceRun's RunCostUSD metric (EMF) for the spend alarm."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from benchwright.providers.aws.common import lifecycle_tags, tag_list
from tests.aws_world import FakeContext, World, rds_spec, run_input
from tests.report_dom import chart_specs


def rds_instance(w: World, name: str, run_id: str, now: datetime | None = None) -> None:
    w.clients("rds").create_db_instance(
        DBInstanceIdentifier=name, Engine="postgres", DBInstanceClass="db.t3.micro", MasterUsername="u",
        MasterUserPassword="p" * 12, AllocatedStorage=20,
        Tags=tag_list(lifecycle_tags(w.settings, run_id, now=now)),
    )  # fmt: skip


def ec2_instance(w: World, run_id: str) -> str:
    tags = tag_list(lifecycle_tags(w.settings, run_id))
    out = w.clients("ec2").run_instances(
        ImageId="ami-12c6146b", MinCount=1, MaxCount=1, InstanceType="t3.micro",
        SubnetId=w.settings.subnet_ids[0], TagSpecifications=[{"ResourceType": "instance", "Tags": tags}],
    )  # fmt: skip
    return str(out["Instances"][0]["InstanceId"])


def cache_group(w: World, name: str, run_id: str) -> None:
    w.clients("elasticache").create_replication_group(
        ReplicationGroupId=name, ReplicationGroupDescription="bw", Engine="redis", CacheNodeType="cache.t3.micro",
        NumCacheClusters=1, Tags=tag_list(lifecycle_tags(w.settings, run_id)),
    )  # fmt: skip


# ---------------------------------------------------------------- janitor: {"run_id": ...}
def test_janitor_sweeps_one_run_and_its_suite_cells_at_once(world: World) -> None:
    from functions.janitor import handler

    rds_instance(world, "bw-cancel-db", "cancel-1")
    instance = ec2_instance(world, "cancel-1")
    cache_group(world, "bw-cancel-cell", "cancel-1-001")  # a suite cell of the cancelled run
    rds_instance(world, "bw-cancel-other", "cancel-10")  # another run whose id merely starts alike
    rds_instance(world, "bw-cancel-near", "cancel-1-x01")  # not a cell id

    report = handler({"run_id": "cancel-1", "reason": "cancelled"}, FakeContext())

    assert report["run_id"] == "cancel-1" and report["failed"] == []
    assert sorted(report["deleted"]) == sorted(
        [
            "rds-instance:bw-cancel-db",
            f"ec2-instance:{instance}",
            "elasticache-replication-group:bw-cancel-cell",
        ]
    )
    assert world.leftovers("cancel-1") == [] and world.leftovers("cancel-1-001") == []
    assert len(world.leftovers("cancel-10")) == 1 and len(world.leftovers("cancel-1-x01")) == 1
    # a second cancel (the API may be retried) finds nothing and still succeeds
    assert handler({"run_id": "cancel-1"}, FakeContext())["deleted"] == []


def test_a_run_sweep_dry_run_deletes_nothing(world: World) -> None:
    from functions.janitor import handler

    rds_instance(world, "bw-dry-db", "dry-1")
    report = handler({"run_id": "dry-1", "dry_run": True}, FakeContext())
    assert report["deleted"] == ["rds-instance:bw-dry-db"]
    assert len(world.leftovers("dry-1")) == 1
    handler({"run_id": "dry-1"}, FakeContext())
    assert world.leftovers("dry-1") == []


def test_the_scheduled_sweep_still_deletes_only_expired_resources(world: World) -> None:
    from functions.janitor import handler

    rds_instance(world, "bw-sched-old", "sched-old", now=datetime.now(UTC) - timedelta(days=2))
    rds_instance(world, "bw-sched-new", "sched-new")

    report = handler({"trigger": "schedule"}, FakeContext())

    assert "rds-instance:bw-sched-old" in report["deleted"]
    assert "rds-instance:bw-sched-new" in report["kept"]
    assert world.leftovers("sched-old") == [] and len(world.leftovers("sched-new")) == 1
    handler({"run_id": "sched-new"}, FakeContext())


@pytest.mark.parametrize("bad", ["", "   ", 42, None, "x" * 129])
def test_an_unusable_run_id_is_an_error_naming_the_field(world: World, bad: Any) -> None:
    from benchwright.errors import SpecError
    from functions.janitor import handler

    with pytest.raises(SpecError) as info:
        handler({"run_id": bad}, FakeContext())
    assert info.value.field == "run_id"


# ---------------------------------------------------------------- the report in S3
def test_the_report_lands_next_to_the_record_and_the_api_presigns_it(world: World) -> None:
    from benchwright.api.backend import CloudBackend

    result = world.execute("benchmark", run_input(rds_spec("report-1"), "report-1"))
    assert result["status"] == "SUCCEEDED", (result["cause"], world.calls)

    record = world.record("report-1")
    bucket = world.settings.results_bucket
    assert record["report"] == f"s3://{bucket}/runs/report-1/report.html"
    obj = world.clients("s3").get_object(Bucket=bucket, Key="runs/report-1/report.html")
    html = obj["Body"].read().decode()
    assert obj["ContentType"].startswith("text/html")
    assert html.startswith("<!DOCTYPE html>") and "report-1" in html
    assert "succeeded" in html and "cost:" in html  # rendered once, after PriceRun and the final status
    assert "report generation failed" not in html
    # the same renderer as a local run: the templates, uPlot inlined, the charts from the stored run
    assert "var uPlot=function" in html and "uPlot 1.6.32" in html and "<script src" not in html
    titles = [c["title"] for c in chart_specs(html)]
    assert "latency percentile distribution (measured phase)" in titles, titles
    assert any(t.endswith(": throughput and CPU") for t in titles), titles

    backend = CloudBackend(benchmark_arn="", suite_arn="", bucket=bucket, region=world.settings.region)
    url = backend.report_url("report-1", expires_in=300)
    assert url is not None and "runs/report-1/report.html" in url and "Signature" in url


def test_a_report_that_cannot_render_is_a_warning_and_the_record_is_kept(
    world: World, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    import benchwright.report.html as html_report

    def broken(*args: Any, **kwargs: Any) -> str:
        raise ValueError("chart exploded")

    monkeypatch.setattr(html_report, "render_html", broken)
    result = world.execute("benchmark", run_input(rds_spec("report-2"), "report-2"))

    assert result["status"] == "SUCCEEDED", (result["cause"], world.calls)
    record = world.record("report-2")
    assert record["status"] == "succeeded" and record["report"] is None  # one renderer, no stand-in page
    assert record["cells"][0]["phases"]["run"]["operations_total"] == 2000
    assert "report not written (ValueError: chart exploded)" in caplog.text
    assert len(world.slack.posts) == 1 and "open the report" not in json.dumps(world.slack.posts[0].body)


def test_a_failed_run_still_gets_a_report_with_its_error(world: World) -> None:
    world.runner_mode = "fail"
    result = world.execute("benchmark", run_input(rds_spec("report-3"), "report-3"))
    assert result["status"] == "FAILED"
    record = world.record("report-3")
    assert record["status"] == "failed" and record["report"].endswith("runs/report-3/report.html")
    page = world.clients("s3").get_object(
        Bucket=world.settings.results_bucket, Key="runs/report-3/report.html"
    )
    assert "RunnerFailed" in page["Body"].read().decode()


def test_the_report_draws_earlier_runs_without_touching_their_records(world: World) -> None:
    for run_id in ("hist-a", "hist-b"):
        result = world.execute("benchmark", run_input(rds_spec("report-hist"), run_id))
        assert result["status"] == "SUCCEEDED", (result["cause"], world.calls)

    bucket = world.settings.results_bucket
    first = (
        world.clients("s3").get_object(Bucket=bucket, Key="runs/hist-a/report.html")["Body"].read().decode()
    )
    second = (
        world.clients("s3").get_object(Bucket=bucket, Key="runs/hist-b/report.html")["Body"].read().decode()
    )
    assert "throughput across runs of this spec" not in first
    assert "throughput across runs of this spec" in second
    earlier = world.record("hist-a")["cells"][0]["phases"]["run"]  # history was slimmed in memory only
    assert earlier["intervals"] and earlier["operations"]["READ"]["histogram"]


# ---------------------------------------------------------------- RunCostUSD
def emf_records(text: str, metric: str) -> list[dict[str, Any]]:
    out = []
    for line in text.splitlines():
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            data = json.loads(line)
        except ValueError:
            continue
        if "_aws" in data and metric in data:
            out.append(data)
    return out


def test_price_run_emits_run_cost_for_the_daily_spend_alarm(
    world: World, capsys: pytest.CaptureFixture
) -> None:
    capsys.readouterr()
    result = world.execute("benchmark", run_input(rds_spec("cost-1"), "cost-1"))
    assert result["status"] == "SUCCEEDED", (result["cause"], world.calls)

    (emf,) = emf_records(capsys.readouterr().out, "RunCostUSD")
    (directive,) = emf["_aws"]["CloudWatchMetrics"]
    assert directive["Namespace"] == "Benchwright"
    assert directive["Dimensions"] == [["service"]] and emf["service"] == "benchwright"
    value = emf["RunCostUSD"]
    value = value[0] if isinstance(value, list) else value
    cost = world.record("cost-1")["cells"][0]["cost"]["total"]
    assert value == pytest.approx(cost) and value > 0


def test_the_alarm_watches_exactly_the_metric_price_run_emits(capsys: pytest.CaptureFixture) -> None:
    """What publish_cost really prints (its EMF record), against what the DailySpend alarm reads."""
    from benchwright.providers.aws import names
    from functions.price_run import publish_cost
    from infra.monitoring import METRIC_DIMENSIONS

    capsys.readouterr()
    assert publish_cost(1.5) is True
    (emf,) = emf_records(capsys.readouterr().out, names.METRIC_RUN_COST)
    (directive,) = emf["_aws"]["CloudWatchMetrics"]
    assert directive["Namespace"] == names.METRICS_NAMESPACE
    assert [m["Name"] for m in directive["Metrics"]] == [names.METRIC_RUN_COST]
    assert directive["Dimensions"] == [sorted(METRIC_DIMENSIONS)]
    assert {k: emf[k] for k in METRIC_DIMENSIONS} == dict(METRIC_DIMENSIONS)


def test_an_unpriced_run_emits_no_cost(capsys: pytest.CaptureFixture) -> None:
    from functions.price_run import publish_cost

    capsys.readouterr()
    assert publish_cost(None) is False
    assert emf_records(capsys.readouterr().out, "RunCostUSD") == []
    assert publish_cost(0.25) is True
    assert emf_records(capsys.readouterr().out, "RunCostUSD")[0]["RunCostUSD"] in (0.25, [0.25])


# ---------------------------------------------------------------- who ingests
def test_only_store_results_writes_the_time_series_sink(monkeypatch: pytest.MonkeyPatch) -> None:
    """Later saves (price, the finish, suite summary) would re-ingest the same points from Lambdas
    that have neither the sink's grants nor, for InfluxDB, the VPC."""
    import functions._common as common
    from benchwright.providers.aws.config import AwsSettings
    from benchwright.providers.aws.timestream import TimestreamSink
    from benchwright.stages import RunState

    settings = AwsSettings(
        region="us-east-1",
        results_bucket="b",
        sink="timestream",
        timestream_database="d",
        timestream_table="t",
    )
    monkeypatch.setattr(common, "_settings", settings)
    monkeypatch.setattr(common, "_clients", None)
    state = RunState(run_id="r", spec_name="s", spec=rds_spec("ingest-1"))
    stages = ("store_results", "price_run", "teardown", "finish_run")
    sinks = {stage: common.providers_for(state, stage).store.sink for stage in stages}  # type: ignore[attr-defined]
    assert isinstance(sinks["store_results"], TimestreamSink)
    assert [sinks[s] for s in stages[1:]] == [None, None, None]
