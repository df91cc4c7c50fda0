"""Per-second server series (issue 27 part 5): the spec's ``target.monitoring``, CreateDBInstance's
arguments, Enhanced Monitoring's RDSOSMetrics documents and Performance Insights' GetResourceMetrics
parsed from AWS's shapes, the stand-in's PI answer held to botocore's service model, and the drops
annotated with what moved on the server."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber

from benchwright.errors import ProvisioningFailed, SpecError
from benchwright.providers.aws.server_series import os_series, pi_query, pi_series
from benchwright.providers.aws.server_series_collect import PI_MAX_RESULTS, pi_pages
from benchwright.providers.aws.targets.monitoring import monitoring_args
from benchwright.providers.base import MetricsWindow
from benchwright.rehearse.server_series import my_wait, pg_wait, resource_id
from benchwright.rehearse.services import pi
from benchwright.report.html import render_html
from benchwright.report.sample import make_run
from benchwright.report.server_align import annotate
from benchwright.results import IntervalSample, MetricPoint, MetricSeries
from benchwright.spec import parse_spec
from benchwright.spec.monitoring import Monitoring

T0 = datetime(2026, 11, 28, 12, 0, 0, tzinfo=UTC)
RDS = {
    "provider": "rds",
    "engine": "mysql",
    "engine_version": "8.0.39",
    "instance_class": "db.m6i.large",
    "storage": {"type": "gp2", "size_gb": 100},
}


def spec(monitoring: Any) -> dict[str, Any]:
    return {
        "name": "m",
        "target": {**RDS, "monitoring": monitoring},
        "workload": {"name": "ycsb", "files": ["workloada"]},
    }


def test_the_spec_takes_aws_intervals_and_names_the_field_of_any_other() -> None:
    parsed = parse_spec(spec({"enhanced_s": 1, "performance_insights": True}))
    assert parsed.target.monitoring == Monitoring(enhanced_s=1, performance_insights=True)  # type: ignore[union-attr]
    with pytest.raises(SpecError) as bad:
        parse_spec(spec({"enhanced_s": 2}))
    assert "target.monitoring.enhanced_s" in str(bad.value) and "0, 1, 5, 10, 15, 30, 60" in str(bad.value)
    with pytest.raises(SpecError) as unknown:
        parse_spec(spec({"enhanced": 1}))
    assert "target.monitoring.enhanced" in str(unknown.value)


def test_create_arguments_pass_the_role_and_refuse_an_interval_without_one() -> None:
    role = "arn:aws:iam::123456789012:role/monitoring"
    assert monitoring_args(Monitoring(enhanced_s=1, performance_insights=True), role) == {
        "MonitoringInterval": 1,
        "MonitoringRoleArn": role,
        "EnablePerformanceInsights": True,
        "PerformanceInsightsRetentionPeriod": 7,
    }
    assert monitoring_args(Monitoring(performance_insights=True), None) == {
        "EnablePerformanceInsights": True,
        "PerformanceInsightsRetentionPeriod": 7,
    }
    assert monitoring_args(None, role) == {} and monitoring_args(Monitoring(), role) == {}
    with pytest.raises(ProvisioningFailed, match=r"target\.monitoring\.enhanced_s"):
        monitoring_args(Monitoring(enhanced_s=5), None)


def rds_document(second: int, total: float, read_iops: float, queue: float) -> str:
    """An RDSOSMetrics document as RDS for MySQL writes it (AWS's field names, abridged)."""
    return json.dumps(
        {
            "engine": "MYSQL",
            "instanceID": "bw-db",
            "instanceResourceID": "db-ABCDEFGHIJKLMNOPQRSTUVWXYZ",
            "timestamp": (T0 + timedelta(seconds=second)).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "version": 1.0,
            "uptime": "0 days, 01:00:00",
            "numVCPUs": 2,
            "cpuUtilization": {
                "guest": 0.0,
                "irq": 0.0,
                "system": 2.0,
                "wait": 1.5,
                "idle": 100 - total,
                "user": total - 3.5,
                "total": total,
                "steal": 0.1,
                "nice": 0.0,
            },
            "loadAverageMinute": {"one": 1.2, "five": 1.0, "fifteen": 0.8},
            "memory": {"total": 8000000, "free": 2000000, "cached": 1000},
            "diskIO": [
                {
                    "device": "rdsdev",
                    "readIOsPS": read_iops,
                    "writeIOsPS": 10.0,
                    "avgQueueLen": queue,
                    "await": 2.0,
                    "util": 50.0,
                    "tps": 12.0,
                },
                {"device": "filesystem", "readIOsPS": 1.0, "writeIOsPS": 0.0, "avgQueueLen": 0.0},
            ],
            "network": [{"interface": "eth0", "rx": 1000.0, "tx": 2000.0}],
        }
    )


def aurora_document(second: int) -> str:
    """Aurora's diskIO entries have diskQueueDepth, not avgQueueLen."""
    return json.dumps(
        {
            "engine": "Aurora",
            "instanceID": "bw-aurora-0",
            "timestamp": (T0 + timedelta(seconds=second)).isoformat().replace("+00:00", "Z"),
            "cpuUtilization": {"total": 40.0},
            "diskIO": [{"readIOsPS": 5.0, "writeIOsPS": 7.0, "diskQueueDepth": 3.0}],
        }
    )


def test_os_series_read_aws_documents_inside_the_window_only() -> None:
    messages = [rds_document(s, 10.0 + s, 100.0 * s, 0.5) for s in range(5)]
    messages += [
        "not json",
        json.dumps({"no": "timestamp"}),
        rds_document(-5, 99, 9, 9),
        rds_document(70, 99, 9, 9),
    ]
    series = {s.name: s for s in os_series(messages, T0, T0 + timedelta(seconds=60), "bw-db")}
    assert [(p.t, p.value) for p in series["os.cpu.total"].points] == [(float(s), 10.0 + s) for s in range(5)]
    assert series["os.disk.iops"].points[2].value == 200.0 + 10.0 + 1.0 + 0.0  # both devices, reads + writes
    assert series["os.disk.queue"].points[0].value == 0.5 and series["os.cpu.wait"].points[0].value == 1.5
    assert (
        series["os.net.tx"].points[0].value == 2000.0
        and series["os.cpu.total"].source == "enhanced_monitoring:bw-db"
    )
    aurora = {s.name: s for s in os_series([aurora_document(3)], T0, T0 + timedelta(seconds=9), "a")}
    assert aurora["os.disk.queue"].points[0].value == 3.0 and aurora["os.disk.iops"].points[0].value == 12.0
    assert "os.cpu.wait" not in aurora  # not in the document: no series, never a zero


def test_the_stand_ins_answer_and_the_collectors_request_hold_to_botocores_pi_model() -> None:
    """The collector's request is validated by botocore (Stubber's expected params go through the
    client's parameter validation) and the stand-in's response by the model's output shape."""
    ident = "db-CONTRACT"
    start = int(T0.timestamp())
    for i in range(6):
        pi.record(ident, start + i, {("CPU", "CPU"): 2, ("IO", "IO:DataFileRead"): i})
    window = MetricsWindow(start=T0, end=T0 + timedelta(seconds=6))
    params = {
        "ServiceType": "RDS",
        "Identifier": ident,
        "MetricQueries": pi_query(),
        "StartTime": window.start,
        "EndTime": window.end,
        "PeriodInSeconds": 1,
        "MaxResults": PI_MAX_RESULTS,
    }
    answer = pi.get_resource_metrics(params)
    client = boto3.client("pi", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x")
    with Stubber(client) as stub:
        stub.add_response("get_resource_metrics", answer, params)  # raises on a shape the model refuses
        pages = list(pi_pages(lambda service: client, ident, window))
    pi.forget(ident)
    series = {s.name: s for s in pi_series(pages, T0, "bw-db")}
    assert set(series) == {"db.load.avg", "db.load.avg CPU", "db.load.avg IO:DataFileRead"}
    assert [p.value for p in series["db.load.avg"].points] == [2.0 + i for i in range(6)]
    assert [p.t for p in series["db.load.avg IO:DataFileRead"].points] == [float(i) for i in range(6)]
    assert (
        series["db.load.avg CPU"].unit == "Sessions"
        and series["db.load.avg"].source == "performance_insights:bw-db"
    )


def test_pi_gaps_are_left_out_and_wait_names_follow_pis_labels() -> None:
    page = {
        "MetricList": [
            {"Key": {"Metric": "db.load.avg"}, "DataPoints": [{"Timestamp": T0, "Value": 1.0}, {"Timestamp": T0 + timedelta(seconds=1)}]},
            {"Key": {"Metric": "os.cpuUtilization.user.avg"}, "DataPoints": [{"Timestamp": T0, "Value": 9.0}]},
        ]
    }  # fmt: skip
    series = pi_series([page], T0, "i")
    assert [(s.name, [(p.t, p.value) for p in s.points]) for s in series] == [("db.load.avg", [(0.0, 1.0)])]
    assert pg_wait("IO", "DataFileRead") == ("IO", "IO:DataFileRead") and pg_wait("CPU", "CPU") == (
        "CPU",
        "CPU",
    )
    assert my_wait("wait/io/table/sql/handler") == ("io", "io/table/sql/handler")
    assert (
        resource_id("a") != resource_id("b")
        and resource_id("a").startswith("db-")
        and len(resource_id("a")) == 29
    )


def intervals(values: list[float], p99_ms: float = 2.0) -> list[IntervalSample]:
    return [
        IntervalSample(t=float(i + 1), operations={"READ": int(v)}, throughput=v, p99_us=p99_ms * 1000)
        for i, v in enumerate(values)
    ]


def series(name: str, source: str, values: list[float]) -> MetricSeries:
    return MetricSeries(name=name, unit="Count", source=source, points=[MetricPoint(t=float(i), value=v) for i, v in enumerate(values)])  # fmt: skip


def test_a_drop_is_annotated_with_the_series_that_moved_at_its_seconds() -> None:
    """Seconds 10-12 drop to 400 ops/s from ~1000; the disk queue rises from ~1 to 20 and IO waits
    appear at exactly those seconds; CPU wobbles inside its noise and is not named."""
    tput = [1000.0 + (7 * i) % 30 for i in range(30)]
    for s in (10, 11, 12):
        tput[s] = 400.0
    queue = [1.0 + (i % 3) * 0.1 for i in range(30)]
    io = [0.1] * 30
    for s in (10, 11, 12):
        queue[s], io[s] = 20.0, 3.0
    cpu = [50.0 + (i % 5) for i in range(30)]
    found = annotate(
        intervals(tput),
        [
            series("os.disk.queue", "enhanced_monitoring:db", queue),
            series("db.load.avg IO:DataFileRead", "performance_insights:db", io),
            series("os.cpu.total", "enhanced_monitoring:db", cpu),
            series("CPUUtilization", "cloudwatch:AWS/RDS", [0.0] * 30),  # not a per-second server series
        ],
    )
    assert [(d.start, d.end) for d in found] == [(10, 12)]
    assert {m.series.split(" (")[0] for m in found[0].moves} == {
        "os.disk.queue",
        "db.load.avg IO:DataFileRead",
    }
    text = found[0].text()
    assert (
        text.startswith("10-12 s: 400 ops/s")
        and "os.disk.queue (enhanced_monitoring:db) rose 1.1 -> 20" in text
    )


def test_a_steady_run_has_no_drop_and_a_drop_without_a_mover_says_so() -> None:
    steady = [1000.0 + (i % 4) * 5 for i in range(30)]
    assert annotate(intervals(steady), [series("os.cpu.total", "enhanced_monitoring:db", [50.0] * 30)]) == []
    dropped = list(steady)
    dropped[20] = 100.0
    found = annotate(intervals(dropped), [series("os.cpu.total", "enhanced_monitoring:db", [50.0] * 30)])
    assert len(found) == 1 and found[0].moves == [] and "no server series moved" in found[0].text()


def test_the_report_lines_the_server_series_up_with_the_clients_seconds() -> None:
    run = make_run("m", "r", [("c", {}, [1000.0] * 10 + [300.0] * 2 + [1000.0] * 10)])
    cell = run.cells[0]
    queue = [1.0] * 10 + [15.0] * 2 + [1.0] * 10
    cell.metrics.append(series("os.disk.queue", "enhanced_monitoring:bw-db", queue))
    cell.metrics.append(series("db.load.avg", "performance_insights:bw-db", [1.0] * 22))
    html = render_html(run)
    assert 'id="server-per-second"' in html
    from tests.report_dom import chart

    client = chart(html, "c: client, per second")
    os_chart = chart(html, "c: server OS (Enhanced Monitoring)")
    load = chart(html, "c: DB load by wait event (Performance Insights)")
    assert (
        client["x_label"]
        == os_chart["x_label"]
        == load["x_label"]
        == "seconds since the measured phase started"
    )
    assert [s["name"] for s in client["series"]] == ["ops/s", "p99"]
    assert (
        "10-11 s: 300 ops/s" in html and "os.disk.queue (enhanced_monitoring:bw-db) rose 1 -&gt; 15" in html
    )
    assert 'id="server-per-second"' not in render_html(make_run("m", "r", [("c", {}, [1000.0] * 22)]))


def test_monitoring_is_priced_from_the_measured_document_size_and_pi_at_its_free_tier() -> None:
    from pathlib import Path

    from benchwright.providers.aws.pricelist import ExcerptPriceList, PackagedPriceList
    from benchwright.providers.aws.pricing import AwsPriceBook
    from benchwright.providers.aws.usage import GIB

    parsed = parse_spec(spec({"enhanced_s": 5, "performance_insights": True}))
    run = make_run("m", "r", [("c", {}, [1000.0] * 10)])
    cell = run.cells[0]
    cell.metrics.append(
        MetricSeries(
            name="em.document_bytes",
            unit="Bytes",
            source="enhanced_monitoring:bw-db",
            points=[MetricPoint(t=float(i), value=v) for i, v in enumerate([9000.0, 11000.0])],
        )
    )
    prices = Path(__file__).resolve().parents[1] / "data" / "pricing"
    for book in (AwsPriceBook(ExcerptPriceList.from_directory(str(prices))), AwsPriceBook(PackagedPriceList("us-east-1"))):  # fmt: skip
        lines = book.lines(parsed, cell, 3600.0)
        expected = 3600 / 5 * 10_000 / GIB * 0.50  # documents x mean bytes, at $0.50 per GB
        assert lines.items["enhanced monitoring logs ingestion (estimate)"] == pytest.approx(expected)
        assert "720 documents" in lines.notes["enhanced monitoring logs ingestion (estimate)"]
        assert lines.items["performance insights retention"] == 0.0
        assert "free tier" in lines.notes["performance insights retention"]
        assert not [m for m in lines.missing if m.startswith("monitoring")], lines.missing
    before = AwsPriceBook(ExcerptPriceList.from_directory(str(prices))).lines(parsed, None, 3600.0)
    assert "enhanced monitoring logs ingestion (estimate)" not in before.items
    assert any(
        m.startswith("monitoring: enhanced monitoring logs: not estimated before the run")
        for m in before.missing
    )
    plain = AwsPriceBook(ExcerptPriceList.from_directory(str(prices))).lines(
        parse_spec(spec(None)), cell, 3600.0
    )
    assert not any("monitoring" in k for k in plain.items) and not any(
        "monitoring" in m for m in plain.missing
    )
