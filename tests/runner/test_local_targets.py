"""Throwaway local servers: started with the spec's settings on a free port, gone afterwards; a server
that cannot start fails clearly and leaves nothing running; the endpoint target creates nothing."""

from __future__ import annotations

import socket
import tempfile
from pathlib import Path
from typing import Any

import psutil
import pytest

from benchwright.errors import ProvisioningFailed, SpecError
from benchwright.providers.base import MetricsWindow
from benchwright.providers.local import local_target
from benchwright.providers.local.hostmetrics import ProcMetricsSource
from benchwright.providers.local.servers import LocalServer, wait_ready
from benchwright.spec import parse_target

pytestmark = pytest.mark.servers


def accepting(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(1)
        return s.connect_ex(("127.0.0.1", port)) == 0


def start(engine: str, **settings: Any) -> LocalServer:
    target = local_target(parse_target({"provider": "local", "engine": engine, **settings}), "test-run")
    assert isinstance(target, LocalServer)
    target.create()
    return target


def assert_gone(pid: int, port: int, directory: str) -> None:
    assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    assert not accepting(port)
    assert not Path(directory).exists()


def test_redis_runs_with_its_settings_and_is_removed() -> None:
    import redis

    target = start("redis", settings={"maxmemory": "64mb", "appendonly": "yes"})
    handle = dict(target.handle)
    try:
        assert wait_ready(target, 30) == "ready"
        props = target.connection_properties()
        assert "password" not in str(props)
        client = redis.Redis(
            host="127.0.0.1", port=int(props["redis.port"]), password=target.credentials().password
        )
        assert client.config_get("maxmemory")["maxmemory"] == str(64 * 2**20)
        assert client.config_get("appendonly")["appendonly"] == "yes"
        client.close()
        assert psutil.Process(int(handle["pid"])).username() in ("redis", psutil.Process().username())
    finally:
        target.delete()
    assert_gone(int(handle["pid"]), int(handle["port"]), handle["dir"])
    target.delete()  # idempotent: already gone is success
    assert target.status() == "deleted"


def test_postgres_runs_with_its_settings_and_is_removed() -> None:
    import psycopg

    target = start("postgres", settings={"shared_buffers": "32MB", "max_connections": 42})
    handle = dict(target.handle)
    try:
        assert wait_ready(target, 60) == "ready"
        url = target.connection_properties()["postgres.url"]
        with psycopg.connect(url, password=target.credentials().password) as conn:
            assert conn.execute("SHOW max_connections").fetchone() == ("42",)
            assert conn.execute("SHOW shared_buffers").fetchone() == ("32MB",)
    finally:
        target.delete()
    assert_gone(int(handle["pid"]), int(handle["port"]), handle["dir"])


def test_mariadb_runs_with_its_settings_and_is_removed() -> None:
    import MySQLdb

    target = start("mysql", settings={"max_connections": 77})
    handle = dict(target.handle)
    try:
        assert wait_ready(target, 90) == "ready"
        assert target.connection_properties()["mysql.url"].startswith("mysql://bench@127.0.0.1:")
        conn = MySQLdb.connect(
            host="127.0.0.1",
            port=int(handle["port"]),
            user="bench",
            password=target.credentials().password,
            database="bench",
        )
        cur = conn.cursor()
        cur.execute("SELECT @@max_connections")
        assert cur.fetchone() == (77,)
        conn.close()
    finally:
        target.delete()
    assert_gone(int(handle["pid"]), int(handle["port"]), handle["dir"])


def test_a_taken_port_is_a_clear_error_and_nothing_is_left(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Server directories go to a temporary directory of this test's own: the shared /tmp also holds
    # those of whatever else runs on the machine (another CI job), which come and go at any moment.
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        target = local_target(
            parse_target({"provider": "local", "engine": "redis", "port": port}), "test-run"
        )
        with pytest.raises(ProvisioningFailed, match=f"127.0.0.1:{port}: port already in use"):
            target.create()
        assert list(tmp_path.iterdir()) == []
        assert target.handle == {}


@pytest.mark.parametrize(
    ("engine", "settings", "expected"),
    [
        # allowed names with typed values the server still refuses (a range): its message is said
        ("postgres", {"max_connections": 0}, "max_connections"),
        ("redis", {"maxmemory-samples": -5}, "maxmemory-samples"),
    ],
    ids=["postgres-out-of-range", "redis-out-of-range"],
)
def test_a_bad_setting_fails_with_the_server_message_and_leaves_nothing(
    engine: str, settings: dict[str, Any], expected: str
) -> None:
    target = start(engine, settings=settings)
    handle = dict(target.handle)
    try:
        assert wait_ready(target, 90) == "failed"  # initdb first: slow on a loaded machine
        reason = target.failure_reason()
        assert expected in reason and handle["port"] in reason
    finally:
        target.delete()
    assert_gone(int(handle["pid"]), int(handle["port"]), handle["dir"])


def test_host_metrics_cover_machine_and_server_aligned_with_the_window() -> None:
    from datetime import UTC, datetime

    import redis

    target = start("redis")
    source = ProcMetricsSource(interval=0.2)
    try:
        assert wait_ready(target, 30) == "ready"
        source.start(target)
        begin = datetime.now(UTC)
        client = redis.Redis(
            host="127.0.0.1", port=int(target.handle["port"]), password=target.credentials().password
        )
        for i in range(3000):  # bounded load so the server process shows CPU
            client.set(f"k{i}", "v" * 100)
        client.close()
        series = source.collect(target, MetricsWindow(start=begin, end=datetime.now(UTC)))
    finally:
        target.delete()
    by_key = {(s.source, s.name): s for s in series}
    for name in (
        "CPUUtilization",
        "CPUIOWait",
        "ReadIOPS",
        "WriteIOPS",
        "NetworkReceiveThroughput",
        "MemoryUsed",
    ):
        assert ("proc:host", name) in by_key, name
    assert ("proc:server", "CPUUtilization") in by_key
    assert by_key[("proc:server", "MemoryRSS")].points[-1].value > 0
    cpu = by_key[("proc:host", "CPUUtilization")].points
    assert cpu and all(0 <= p.value <= 100 for p in cpu)
    assert all(p.t > -1.0 for p in cpu)  # seconds since the window's start


def test_a_window_shorter_than_the_sampling_interval_still_has_host_metrics() -> None:
    """CI once ran a bounded load faster than one interval: the sampler had a single sample and no rates."""
    from datetime import UTC, datetime

    from benchwright.providers.local.hostmetrics import HostSampler, series_from_samples

    sampler = HostSampler(None, interval=30.0)
    begin = datetime.now(UTC)
    sampler.start()
    sampler.stop()  # long before the second tick
    series = series_from_samples(sampler.samples, MetricsWindow(start=begin, end=datetime.now(UTC)), False)
    assert len(sampler.samples) == 2 and sampler.failures == 0
    # CPU needs a jiffy to pass; disk, network and memory are rated for any positive gap
    assert {"ReadIOPS", "NetworkReceiveThroughput", "MemoryUsed"} <= {s.name for s in series}


def test_endpoint_target_creates_nothing_and_reads_the_password_from_env(
    redis_props: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = {
        "provider": "endpoint",
        "engine": "redis",
        "hosts": [f"127.0.0.1:{redis_props['redis.port']}"],
        "password_env": "BW_TEST_REDIS_PW",
        "db": int(redis_props["redis.db"]),
    }
    target = local_target(parse_target(settings), "test-run")
    with pytest.raises(SpecError, match="BW_TEST_REDIS_PW"):
        target.credentials()
    monkeypatch.setenv("BW_TEST_REDIS_PW", redis_props["redis.password"])
    target.create()
    assert target.status() == "ready"
    assert target.credentials().password == redis_props["redis.password"]
    assert target.connection_properties()["redis.db"] == redis_props["redis.db"]
    target.delete()
    assert accepting(int(redis_props["redis.port"]))  # the shared server is untouched
