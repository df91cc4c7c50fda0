"""Each installed native tool runs once for real (small sizes, short runs) and lands in the same
result document as our own workloads; a missing tool says how to install it."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from benchwright.errors import RunnerFailed, SpecError, ToolMissingError
from benchwright.runner.plan import PhaseConfig
from benchwright.runner.workloads.external import memtier, pgbench, redis_benchmark, sysbench
from benchwright.runner.workloads.external.common import find_tool
from benchwright.runner.workloads.external.native import pgbench_settings, run_native
from benchwright.runner.workloads.redisbench.sequential import RedisBenchSettings

pytestmark = pytest.mark.servers


def test_pgbench_init_then_select_only(pg_url: str) -> None:
    lines: list[str] = []
    load = pgbench.run(
        pgbench.PgbenchSettings(mode="init", scale=1, fillfactor=90), pg_url, echo=lines.append
    )
    assert load.phase == "load" and load.operations["INSERT"].operations == 100_000
    assert load.extra["init_steps_s"]
    run = pgbench.run(
        pgbench.PgbenchSettings(builtin="select-only", clients=2, jobs=2, time_s=2), pg_url, echo=lines.append
    )
    op = run.operations["select-only"]
    assert op.operations > 0 and op.statuses == {"OK": op.operations}
    assert run.measurement.source == "pgbench" and run.workload == "tpcb"
    assert op.histogram is not None and 0 < op.p50_us <= op.p99_us  # from the -l transaction log
    assert run.intervals and any(line.startswith("progress: ") for line in lines)  # streamed as printed
    assert run.client.cpu_user_s + run.client.cpu_system_s > 0
    assert "bench:bench@" not in run.model_dump_json()


def test_sysbench_point_select_on_mariadb(mysql_url: str) -> None:
    settings = sysbench.SysbenchSettings(
        test="oltp_point_select", tables=1, table_size=500, threads=2, time_s=2
    )
    prepared = sysbench.run(
        sysbench.SysbenchSettings(test="oltp_point_select", command="prepare", tables=1, table_size=500),
        "mysql",
        mysql_url,
    )
    assert prepared.extra["rows"] == 500
    doc = sysbench.run(settings, "mysql", mysql_url)
    op = doc.operations["oltp_point_select"]  # named as the native oltp workload names it
    assert op.operations > 0 and doc.extra["queries"]["read"] == op.operations
    assert op.histogram is not None  # --histogram is always requested
    assert doc.engine == "mysql" and doc.measurement.source == "sysbench"
    assert "--mysql-password=***" in doc.extra["command"]
    assert "--mysql-password=bench" not in doc.model_dump_json()


def test_oltp_settings_drive_sysbench_on_postgres(pg_url: str) -> None:
    """The native oltp workload's properties map onto sysbench: same tables, same test, same knobs."""
    props = {
        "postgres.url": pg_url,
        "oltp.test": "write_only",
        "oltp.tables": "1",
        "oltp.table_size": "300",
        "oltp.delete_inserts": "2",
    }
    load = run_native(PhaseConfig(workload="oltp", phase="load", engine="postgres", properties=props))
    assert load.phase == "load" and load.extra["rows"] == 300
    doc = run_native(
        PhaseConfig(
            workload="oltp", phase="run", engine="postgres", properties=props, threads=2, max_seconds=2
        )
    )
    assert doc.measurement.source == "sysbench" and doc.workload == "oltp"
    assert doc.operations["oltp_write_only"].operations > 0
    assert doc.extra["queries"]["write"] > 0 and doc.extra["queries"]["read"] == 0
    assert "--delete_inserts=2" in doc.extra["command"]


def test_native_tool_mapping_refuses_what_it_cannot_run() -> None:
    with pytest.raises(SpecError) as err:
        run_native(PhaseConfig(workload="tpcc", phase="run", engine="postgres"))
    assert err.value.field == "workload"
    with pytest.raises(SpecError) as err:
        run_native(
            PhaseConfig(
                workload="tpcb",
                phase="run",
                engine="mysql",
                properties={"mysql.url": "mysql://x@127.0.0.1:1/x"},
            )
        )
    assert err.value.field == "engine"
    settings = pgbench_settings({"tpcb.script": "select-only", "tpcb.scale": "5"}, "run", 8, 30.0, 500.0)
    assert (settings.builtin, settings.scale, settings.clients, settings.time_s, settings.rate) == (
        "select-only",
        5,
        8,
        30,
        500.0,
    )


def test_redis_benchmark_with_our_settings(redis_props: dict[str, str]) -> None:
    settings = RedisBenchSettings(
        tests="set,get", requests=2000, clients=4, datasize=100, keyspace=1000, pipeline=4
    )
    doc = redis_benchmark.run(settings, redis_props)
    assert {n: o.operations for n, o in doc.operations.items()} == {"SET": 2000, "GET": 2000}
    assert set(doc.extra["latency_buckets"]) == {"SET", "GET"}
    assert doc.operations["GET"].histogram is not None
    assert f" {redis_props['redis.password']} " not in doc.extra["command"] + " "


def test_cli_passes_tool_arguments_through(redis_props: dict[str, str], tmp_path: Path) -> None:
    out = tmp_path / "tool.json"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "benchwright.cli",
            "tool",
            "redis-benchmark",
            "--json",
            str(out),
            "--",
            "-h",
            "127.0.0.1",
            "-p",
            redis_props["redis.port"],
            "-a",
            redis_props["redis.password"],
            "--dbnum",
            redis_props["redis.db"],
            "-t",
            "get",
            "-n",
            "1000",
            "-c",
            "2",
            "--csv",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert '"GET"' in result.stderr  # the tool's own lines were streamed
    doc = json.loads(out.read_text())
    assert doc["measurement"]["source"] == "redis-benchmark"
    assert doc["operations"]["GET"]["operations"] == 1000
    assert "-a ***" in doc["extra"]["command"]


needs_memtier = pytest.mark.skipif(
    shutil.which("memtier_benchmark") is None,
    reason="memtier_benchmark not on PATH (Debian 12 has no package; build it as INSTALL_HINTS says)",
)


@needs_memtier
def test_memtier_with_our_settings(redis_props: dict[str, str]) -> None:
    import redis

    lines: list[str] = []
    settings = memtier.MemtierSettings(
        ratio="1:4", threads=1, clients=2, requests=500, key_maximum=1000, pipeline=4
    )
    doc = memtier.run(settings, redis_props, echo=lines.append)
    ops = {n: o.operations for n, o in doc.operations.items()}
    assert set(ops) == {"SET", "GET"} and sum(ops.values()) == 1000  # 1 thread x 2 clients x 500
    assert doc.tool_version.startswith("memtier_benchmark v=")
    assert "not_reported" not in doc.extra  # percentiles printed, the rest from the HDR logs
    get = doc.operations["GET"]
    assert get.histogram is not None and 0 < get.p50_us <= get.p99_us <= get.max_us
    assert set(doc.extra["latency_buckets"]) == {"SET", "GET"}
    assert any(line.startswith("[RUN #1") for line in lines)  # progress streamed as printed
    assert "--authenticate=***" in doc.extra["command"]
    assert f"={redis_props['redis.password']} " not in doc.extra["command"] + " "
    client = redis.Redis(
        host="127.0.0.1",
        port=int(redis_props["redis.port"]),
        password=redis_props["redis.password"],
        db=int(redis_props["redis.db"]),
    )
    try:
        assert client.dbsize() > 0  # --select-db put the keys in this test's own database
    finally:
        client.close()


@needs_memtier
def test_cli_memtier_passthrough_parses_stdout_alone(redis_props: dict[str, str], tmp_path: Path) -> None:
    out = tmp_path / "memtier.json"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "benchwright.cli",
            "tool",
            "memtier",
            "--json",
            str(out),
            "--",
            "--server=127.0.0.1",
            f"--port={redis_props['redis.port']}",
            f"--authenticate={redis_props['redis.password']}",
            f"--select-db={redis_props['redis.db']}",
            "--ratio=1:0",
            "--threads=1",
            "--clients=2",
            "--requests=300",
            "--hide-histogram",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    doc = json.loads(out.read_text())
    assert doc["measurement"]["source"] == "memtier_benchmark"
    assert doc["operations"]["SET"]["operations"] == 600 and "GET" not in doc["operations"]


def test_missing_tool_says_how_to_install_it() -> None:
    with pytest.raises(ToolMissingError) as err:
        find_tool("memtier_benchmark", "memtier_benchmark-not-here")
    assert "not packaged in Debian 12" in str(err.value) and "build it from source" in str(err.value)
    with pytest.raises(ToolMissingError, match="apt-get install postgresql-contrib"):
        pgbench.run(pgbench.PgbenchSettings(), "postgresql://u@127.0.0.1:1/x", binary="pgbench-not-here")
    with pytest.raises(ToolMissingError, match="apt-get install sysbench"):
        find_tool("sysbench", "/nonexistent/sysbench")
    with pytest.raises(ToolMissingError, match="apt-get install redis-tools"):
        find_tool("redis-benchmark", "redis-benchmark-not-here")


def test_cli_missing_memtier_is_one_line() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "benchwright.cli", "tool", "memtier", "--binary", "no-memtier"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 1
    assert result.stderr.startswith(
        "benchwright: error: no-memtier: not found on PATH; to install: memtier_benchmark"
    )
    assert len(result.stderr.strip().splitlines()) == 1


def test_tool_failure_names_the_tool_and_hides_the_password(pg_url: str) -> None:
    bad = pg_url.rsplit("/", 1)[0] + "/no_such_database"
    with pytest.raises(RunnerFailed) as err:
        pgbench.run(pgbench.PgbenchSettings(time_s=1), bad)
    assert str(err.value).startswith("pgbench exited with 1:") and "no_such_database" in str(err.value)
    assert ":bench@" not in str(err.value)
