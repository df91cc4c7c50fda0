"""redis-bench on a real Redis: every test does what redis-benchmark's does to the data, counts are
exact with and without pipelining, the CLI writes a document without the password, and a server
restarted mid-run is survived, counted and flagged (on a private redis-server, not the shared one)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from benchwright.runner.engine import PhaseConfig, run_phase
from benchwright.runner.workloads.redisbench.commands import TESTS
from benchwright.runner.workloads.redisbench.sequential import RedisBenchSettings, run_redis_bench
from tests.runner.conftest import _wait_for_port, delay_server_at, free_port
from tests.statuses import assert_honest, statuses_of

pytestmark = pytest.mark.servers


def client(props: dict[str, str]) -> redis.Redis:
    return redis.Redis(
        host=props["redis.host"],
        port=int(props["redis.port"]),
        password=props.get("redis.password"),
        db=int(props.get("redis.db", "0")),
    )


def test_every_test_runs_its_requests_and_leaves_redis_benchmark_s_data_shape(
    redis_props: dict[str, str],
) -> None:
    r = client(redis_props)
    r.flushdb()
    props = {
        **redis_props,
        "redisbench.tests": ",".join(TESTS),
        "redisbench.requests": "200",
        "redisbench.keyspace": "100",
        "redisbench.datasize": "10",
    }
    # one phase, one client: the tests run strictly in order, so the final data shape is exact
    doc = run_phase(
        PhaseConfig(
            workload="redis-bench", phase="run", engine="redis", properties=props, threads=1, processes=1
        )
    )
    assert set(doc.operations) == {t.upper() for t in TESTS}
    for name, op in doc.operations.items():
        assert op.statuses == {"OK": 200}, name
    assert doc.valid, doc.validity
    keys = {k.decode() for k in r.keys("key:*")}
    assert keys and all(len(k) == 16 and k[4:].isdigit() and int(k[4:]) < 100 for k in keys)
    assert r.get(next(iter(keys))) == b"x" * 10
    assert sum(int(r.get(k) or 0) for k in r.keys("counter:*")) == 200  # INCR
    assert r.llen("mylist") == 600  # filled for the LRANGE tests after the push/pop tests
    assert r.xlen("mystream") == 200  # XADD
    assert 0 < r.hlen("myhash") <= 100
    assert r.scard("myset") == 0 and r.zcard("myzset") == 0  # SPOP / ZPOPMIN drained what SADD / ZADD added
    buckets = doc.extra["latency_buckets"]
    assert set(buckets) == set(doc.operations)
    for b in buckets.values():
        shares = [b[k] for k in ("1", "5", "50", "100", "300", "500")]
        assert shares == sorted(shares) and shares[-1] <= 1.0 and b["max_ms"] > 0


@pytest.mark.parametrize("pipeline", [1, 16], ids=["P1", "P16"])
def test_request_counts_are_exact_with_pipelining(redis_props: dict[str, str], pipeline: int) -> None:
    r = client(redis_props)
    r.flushdb()
    settings = RedisBenchSettings(tests="incr", requests=320, clients=2, pipeline=pipeline, processes=1)
    doc = run_redis_bench(settings, "redis", redis_props)
    assert int(r.get("counter:__rand_int__") or 0) == 320  # no -r: redis-benchmark's literal key
    assert doc.operations["INCR"].operations == 320
    assert doc.extra["requests_per_operation"] == pipeline


@pytest.mark.parametrize("model", ["auto", "threads"])
def test_both_client_models_send_the_same_requests_and_say_how_they_timed(
    redis_props: dict[str, str], model: str
) -> None:
    r = client(redis_props)
    r.flushdb()
    props = {
        **redis_props,
        "client.model": model,
        "redisbench.tests": "incr",
        "redisbench.requests": "300",
        "redisbench.pipeline": "3",
    }
    doc = run_phase(
        PhaseConfig(
            workload="redis-bench", phase="run", engine="redis", properties=props, threads=5, processes=2
        )
    )
    assert doc.operations["INCR"].statuses == {"OK": 300}  # per request, as redis-benchmark counts
    assert int(r.get("counter:__rand_int__") or 0) == 300
    timed_by_loop = "event loop" in doc.measurement.method
    assert timed_by_loop is (model == "auto")
    assert doc.intervals and min(s.t for s in doc.intervals) >= 1.0  # nothing sent before the start instant


def test_event_loops_default_to_one_process_per_50_clients_and_the_document_says_how_many(
    redis_props: dict[str, str],
) -> None:
    import os

    cores = os.cpu_count() or 1
    for model, clients, expected in (
        ("auto", 8, 1),
        ("auto", 51, min(2, cores)),
        ("threads", 8, min(8, 2 * cores)),
    ):
        props = {
            **redis_props,
            "client.model": model,
            "redisbench.tests": "get",
            "redisbench.requests": "120",
        }
        config = PhaseConfig(
            workload="redis-bench", phase="run", engine="redis", properties=props, threads=clients
        )
        assert run_phase(config).measurement.processes == expected, (model, clients)


def test_cli_writes_the_document_and_never_the_password(redis_props: dict[str, str], tmp_path: Path) -> None:
    out = tmp_path / "rb.json"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "benchwright.cli",
            "redis-bench",
            "-h",
            redis_props["redis.host"],
            "-p",
            redis_props["redis.port"],
            "-a",
            redis_props["redis.password"],
            "--dbnum",
            redis_props["redis.db"],
            "-t",
            "set,get",
            "-n",
            "500",
            "-c",
            "2",
            "-d",
            "3000",
            "-r",
            "1000",
            "--processes",
            "1",
            "--json",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert "====== SET ======" in result.stdout and "<=1ms" in result.stdout
    text = out.read_text()
    doc = json.loads(text)
    assert doc["workload"] == "redis-bench" and doc["engine"] == "redis"
    assert {n: o["operations"] for n, o in doc["operations"].items()} == {"SET": 500, "GET": 500}
    assert doc["properties"]["redisbench.datasize"] == "3000"
    assert doc["properties"]["redis.password"] == "***"
    assert f'"{redis_props["redis.password"]}"' not in text


def test_cli_refuses_redis_bench_on_postgres_with_one_line() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "benchwright.cli", "redis-bench", "--engine", "postgres"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2
    assert result.stderr.strip() == (
        "benchwright: error: engine: workload 'redis-bench' needs redis-commands, which engine 'postgres' does "
        "not offer"
    )


# ---------------------------------------------------------------- a server restarted mid-run
class RestartableRedis:
    """A private redis-server on a fixed free port that can be shut down and started again."""

    def __init__(self, tmp: Path) -> None:
        binary = shutil.which("redis-server")
        assert binary, "redis-server missing: scripts/local-servers install"
        self.argv = [
            binary,
            "--bind",
            "127.0.0.1",
            "--port",
            str(free_port()),
            "--dir",
            str(tmp),
            "--save",
            "",
            "--appendonly",
            "no",
        ]
        self.port = int(self.argv[4])
        self.proc = self._start()
        self.restarts = 0

    def _start(self) -> subprocess.Popen[bytes]:
        proc = subprocess.Popen(self.argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _wait_for_port(self.port, proc)
        return proc

    def restart(self) -> None:
        self.proc.terminate()
        self.proc.wait(10)
        self.proc = self._start()
        self.restarts += 1

    def stop(self) -> None:
        self.proc.kill()
        self.proc.wait()


@pytest.fixture
def restartable_redis(tmp_path: Path) -> Iterator[RestartableRedis]:
    server = RestartableRedis(tmp_path)
    try:
        yield server
    finally:
        server.stop()


def test_server_restarted_mid_run_is_survived_counted_and_flagged(
    restartable_redis: RestartableRedis,
) -> None:
    server = restartable_redis
    props = {
        "redis.host": "127.0.0.1",
        "redis.port": str(server.port),
        "redisbench.tests": "set",
        "redisbench.requests": "1000000",
        "redisbench.keyspace": "1000",
        "redis.connect_timeout": "1",
    }

    def restart_once(elapsed: float, ops: int, rate: float) -> None:
        if ops > 200 and not server.restarts:
            server.restart()

    doc = run_phase(
        PhaseConfig(
            workload="redis-bench",
            phase="run",
            engine="redis",
            properties=props,
            threads=2,
            processes=1,
            max_seconds=4,
        ),
        progress=restart_once,
    )
    assert server.restarts == 1
    assert not doc.aborted  # the clients reconnected and the run went on to its time limit
    statuses = statuses_of(doc.operations, "SET")
    assert statuses.get("ERROR", 0) > 0 and statuses["OK"] > 200
    assert doc.failed("SET") == statuses["ERROR"] and doc.operations["SET"].operations == statuses["OK"]
    assert_honest(doc)
    assert {"server_restarted", "error_rate"} <= {f.code for f in doc.validity}
    assert any(k.startswith("SET:") for k in doc.extra["error_kinds"])
    # writes reached the new server: the restarted (empty, no persistence) server holds keys again
    assert redis.Redis(port=server.port).dbsize() > 0


LIVE = re.compile(
    r"[A-Z_]+: rps=(\d+\.\d) \(overall: (\d+\.\d)\) avg_msec=(\d+\.\d{3}) \(overall: (\d+\.\d{3})\)"
)


def _cli(redis_props: dict[str, str], *extra: str) -> subprocess.CompletedProcess[str]:
    argv = [
        sys.executable, "-m", "benchwright.cli", "redis-benchmark",
        "-h", redis_props["redis.host"], "-p", redis_props["redis.port"],
        "-a", redis_props["redis.password"], "--dbnum", redis_props["redis.db"], *extra,
    ]  # fmt: skip
    return subprocess.run(argv, capture_output=True, text=True, timeout=180, check=False)


def _seconds(doc: dict[str, object], name: str) -> float:
    op = doc["operations"][name]  # type: ignore[index]
    return float(op["operations"]) / float(op["throughput"])


@pytest.mark.slow
def test_cli_prints_a_live_rps_line_per_second_of_each_test_on_stderr(
    redis_props: dict[str, str], tmp_path: Path
) -> None:
    # given two tests of 80,000 requests from 2 clients (seconds each), printing to a log
    out = tmp_path / "rb.json"
    result = _cli(redis_props, "-t", "ping", "-n", "80000", "-c", "2", "--json", str(out))
    assert result.returncode == 0, result.stderr
    doc = json.loads(out.read_text())
    lines = [line for line in result.stderr.splitlines() if " rps=" in line]
    assert "rps=" not in result.stdout and "\r" not in result.stderr  # not a terminal: plain lines
    for name in ("PING_INLINE", "PING_MBULK"):
        # then each test has one line per whole second it ran, with positive rates and latencies
        mine = [line for line in lines if line.startswith(f"{name}: rps=")]
        seconds = _seconds(doc, name)
        assert seconds > 1.0, f"{name} ran {seconds:.2f} s: too short to show a live line"
        assert len(mine) == int(seconds + 1e-3), (seconds, mine)
        for line in mine:
            found = LIVE.fullmatch(line)
            assert found is not None, line
            assert all(float(v) > 0 for v in found.groups()), line  # rps, overall, avg, overall avg
    assert len(lines) == sum(int(_seconds(doc, n) + 1e-3) for n in ("PING_INLINE", "PING_MBULK"))


@pytest.fixture
def delay_server() -> Iterator[int]:
    """benchmarks/delay_server.py on a port of its own: every GET answered 10 ms after it arrived,
    so a run of N GETs from 2 clients lasts at least N/2 x 10 ms however fast or busy the host."""
    with delay_server_at(10) as port:
        yield port


def test_cli_prints_no_live_line_when_quiet_or_csv(
    redis_props: dict[str, str], delay_server: int, tmp_path: Path
) -> None:
    slow = {**redis_props, "redis.port": str(delay_server)}
    for flag in ("-q", "--csv"):
        out = tmp_path / f"rb{flag}.json"
        # 240 GETs from 2 clients at 10 ms each: 1.2 s at least, long enough to have shown a line
        result = _cli(slow, "-t", "get", "-n", "240", "-c", "2", flag, "--json", str(out))
        assert result.returncode == 0, result.stderr
        doc = json.loads(out.read_text())
        assert doc["operations"]["GET"]["operations"] == 240 and _seconds(doc, "GET") > 1.0, doc["operations"]
        assert "rps=" not in result.stderr + result.stdout
