"""Ingest a generated one-hour result (1-second intervals + CloudWatch series) and print the time.

The same path the StoreResults Lambda takes: the run record goes to S3 first, then the sink writes it
in batches (Timestream LiveAnalytics: 100 multi-measure records per call, against moto; InfluxDB:
line protocol to a recording HTTP server on 127.0.0.1). Also prints the peak Python heap, to compare
with the 256 MB a handler gets. Figures are for this machine and moto, not AWS latency.

    .venv/bin/python benchmarks/bench_ingest.py [--seconds 3600]
"""

from __future__ import annotations

import argparse
import os
import threading
import time
import tracemalloc
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from benchwright.results import (
    IntervalSample,
    Measurement,
    MetricPoint,
    MetricSeries,
    OperationSummary,
    ResultDocument,
)
from benchwright.runs import CellResult, RunRecord

CLOUD_METRICS = [
    "CPUUtilization",
    "ReadIOPS",
    "WriteIOPS",
    "ReadLatency",
    "WriteLatency",
    "BurstBalance",
    "CPUCreditBalance",
    "EBSIOBalance%",
    "EBSByteBalance%",
    "DatabaseConnections",
    "FreeableMemory",
    "NetworkReceiveThroughput",
    "NetworkTransmitThroughput",
    "DiskQueueDepth",
]


def one_hour(seconds: int) -> RunRecord:
    start = datetime(2026, 11, 22, 1, 0, tzinfo=UTC)
    summary = OperationSummary(
        operations=seconds * 5000,
        statuses={"OK": seconds * 5000},
        throughput=5000.0,
        average_us=800.0,
        min_us=90.0,
        max_us=90000.0,
        p50_us=700.0,
        p90_us=1200.0,
        p95_us=1500.0,
        p99_us=3100.0,
        p999_us=9000.0,
    )
    doc = ResultDocument(
        run_id="bench-ingest",
        workload="ycsb",
        phase="run",
        engine="postgres",
        measurement=Measurement(latency="response_time", method="generated"),
        started_at=start,
        ended_at=start + timedelta(seconds=seconds),
        runtime_ms=seconds * 1000.0,
        operations_total=seconds * 5000,
        throughput=5000.0,
        operations={"READ": summary, "UPDATE": summary},
        intervals=[
            IntervalSample(
                t=float(i + 1),
                operations={"READ": 2500, "UPDATE": 2500},
                throughput=5000.0,
                average_us={"READ": 700.0, "UPDATE": 900.0},
                p50_us=700.0,
                p99_us=3100.0,
                max_us=9000.0,
            )
            for i in range(seconds)
        ],
    )
    metrics = [
        MetricSeries(
            name=m,
            unit="None",
            source="cloudwatch:AWS/RDS:DBInstanceIdentifier=bw",
            points=[MetricPoint(t=60.0 * i, value=float(i)) for i in range(seconds // 60 + 4)],
        )
        for m in CLOUD_METRICS
    ]
    cell = CellResult(cell_id="default", phases={"run": doc}, metrics=metrics)
    return RunRecord(run_id="bench-ingest", spec_name="bench", started_at=start, cells=[cell])


class _Sink(BaseHTTPRequestHandler):
    lines = 0

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        _Sink.lines += body.count(b"\n") + 1
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=int, default=3600)
    args = parser.parse_args()
    os.environ.update(
        {"AWS_ACCESS_KEY_ID": "x", "AWS_SECRET_ACCESS_KEY": "x", "AWS_DEFAULT_REGION": "us-east-1"}
    )
    from moto import mock_aws

    from benchwright.providers.aws.common import Clients
    from benchwright.providers.aws.config import AwsSettings
    from benchwright.providers.aws.influx import InfluxSink
    from benchwright.providers.aws.s3 import S3Artifacts
    from benchwright.providers.aws.store import S3ResultStore
    from benchwright.providers.aws.timestream import TimestreamSink

    record = one_hour(args.seconds)
    size = len(record.model_dump_json())
    print(
        f"generated run: {args.seconds} s of 1-second intervals, {len(CLOUD_METRICS)} cloud series, "
        f"{size / 1e6:.1f} MB of JSON"
    )
    with mock_aws():
        import boto3

        boto3.client("s3", region_name="us-east-1").create_bucket(Bucket="bw-bench-ingest")
        ts = boto3.client("timestream-write", region_name="us-east-1")
        ts.create_database(DatabaseName="bw")
        ts.create_table(DatabaseName="bw", TableName="results")
        clients = Clients(AwsSettings(results_bucket="bw-bench-ingest"))
        store = S3ResultStore(
            S3Artifacts(clients, "bw-bench-ingest"), TimestreamSink(clients, "bw", "results")
        )
        clients("s3"), clients("timestream-write")  # client creation is a cold-start cost, not ingest
        tracemalloc.start()
        t0 = time.perf_counter()
        store.save_run(record)
        elapsed = time.perf_counter() - t0
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        print(
            f"S3 + Timestream LiveAnalytics (moto): {store.last_written} records in "
            f"{-(-store.last_written // 100)} calls, {elapsed:.2f} s, peak heap {peak / 1e6:.1f} MB"
        )

    server = ThreadingHTTPServer(("127.0.0.1", 0), _Sink)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    sink = InfluxSink(f"http://127.0.0.1:{server.server_address[1]}", "token", "bw", "results")
    t0 = time.perf_counter()
    sent = sink.write(record)
    elapsed = time.perf_counter() - t0
    server.shutdown()
    print(
        f"InfluxDB line protocol (local HTTP): {sent} points, {_Sink.lines} lines received, {elapsed:.2f} s"
    )
    print("budget: under 60 s of Lambda time for a one-hour run")


if __name__ == "__main__":
    main()
