"""Issue 27 part 5, MariaDB's side: the rehearsal's wait-event sampler reads a real MariaDB's
``performance_schema`` and Performance Insights' GetResourceMetrics answers it in AWS's shape.

The shared MariaDB on 127.0.0.1:13306 runs with performance_schema OFF (a startup-only setting), so
this starts a throwaway one with it ON, as the rehearsal's RDS stand-in does for an instance with
Performance Insights (rehearse/services/rds.py); ~7 s on a loaded 2-core machine."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import boto3
import pytest
from botocore.stub import Stubber

from benchwright.providers.aws.server_series import pi_query, pi_series
from benchwright.providers.aws.server_series_collect import PI_MAX_RESULTS, pi_pages
from benchwright.providers.base import MetricsWindow
from benchwright.providers.local.servers import MariaDbServer
from benchwright.rehearse.server_series import ServerSampler, resource_id
from benchwright.rehearse.services import pi
from benchwright.rehearse.standins import local_target

SLEEP_WAIT = "synch/cond/sql/Item_func_sleep::cond"  # SELECT SLEEP's wait, as PI names MySQL waits


@pytest.fixture
def mariadb() -> Iterator[MariaDbServer]:
    server = MariaDbServer(local_target("mysql", {"performance_schema": "ON"}), run_id="pi-waits")
    server.create()
    try:
        for _ in range(600):  # bounded: 60 s
            if server.status() == "ready":
                break
            time.sleep(0.1)
        yield server
    finally:
        server.delete()


def connect(server: MariaDbServer) -> object:
    import MySQLdb

    port = int(server.handle["port"])
    return MySQLdb.connect(
        host="127.0.0.1", port=port, user="bench", password=server.credentials().password or ""
    )


@pytest.mark.servers
def test_a_waiting_session_reaches_pi_as_a_mysql_wait_event(mariadb: MariaDbServer) -> None:
    ident = resource_id("pi-waits")
    sampler = ServerSampler(
        logs=None, instance="bw-db", resource=ident, engine="mysql", server=mariadb, vcpus=2, interval_s=0,
        insights=True,
    )  # fmt: skip
    sampler.sample_waits()  # connects and turns the wait consumers on, as RDS does for PI
    busy, probe = connect(mariadb), connect(mariadb)
    session = busy.thread_id()  # type: ignore[attr-defined]

    def sleep() -> None:
        with contextlib.suppress(Exception):  # ended by KILL QUERY below
            busy.cursor().execute("SELECT SLEEP(30)")  # type: ignore[attr-defined]

    worker = threading.Thread(target=sleep)
    worker.start()
    cur = probe.cursor()  # type: ignore[attr-defined]
    try:
        for _ in range(200):  # bounded: until the session is inside SLEEP
            cur.execute(
                "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE ID = %s AND INFO LIKE 'SELECT SLEEP%%'",
                (session,),
            )
            if cur.fetchone()[0]:
                break
            time.sleep(0.05)
        start = datetime.now(UTC).replace(microsecond=0)
        sampler.sample_waits()
    finally:
        cur.execute(f"KILL QUERY {int(session)}")
        worker.join(10)
        busy.close()  # type: ignore[attr-defined]
        probe.close()  # type: ignore[attr-defined]
    assert sampler.failures == 0 and sampler.samples == 2
    window = MetricsWindow(start=start - timedelta(seconds=2), end=start + timedelta(seconds=3))
    client = boto3.client("pi", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x")
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
    sampler.stop()  # its connection closed, its PI record forgotten
    with Stubber(client) as stub:  # the collector's request and the stand-in's answer, by botocore's model
        stub.add_response("get_resource_metrics", answer, params)
        pages = list(pi_pages(lambda service: client, ident, window))
    series = {s.name: s for s in pi_series(pages, window.start, "bw-db")}
    waits = [m for m in answer["MetricList"] if m["Key"].get("Dimensions")]
    assert {
        (m["Key"]["Dimensions"]["db.wait_event.type"], m["Key"]["Dimensions"]["db.wait_event.name"])
        for m in waits
    } >= {("synch", SLEEP_WAIT)}, waits
    assert max(p.value for p in series[f"db.load.avg {SLEEP_WAIT}"].points) >= 1.0
    assert max(p.value for p in series["db.load.avg"].points) >= 1.0
