"""Each installed native tool runs once for real (small sizes, short runs) and lands in the same
result document as our own workloads; a missing tool says how to install it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from benchwright.errors import RunnerFailed, SpecError, ToolMissingError
from benchwright.runner.workloads.external import pgbench, redis_benchmark, sysbench
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
    load = run_native("oltp", "load", "postgres", props)
    assert load.phase == "load" and load.extra["rows"] == 300
    doc = run_native("oltp", "run", "postgres", props, threads=2, seconds=2)
    assert doc.measurement.source == "sysbench" and doc.workload == "oltp"
    assert doc.operations["oltp_write_only"].operations > 0
    assert doc.extra["queries"]["write"] > 0 and doc.extra["queries"]["read"] == 0
    assert "--delete_inserts=2" in doc.extra["command"]


def test_native_tool_mapping_refuses_what_it_cannot_run() -> None:
    with pytest.raises(SpecError) as err:
        run_native("tpcc", "run", "postgres", {})
    assert err.value.field == "workload"
    with pytest.raises(SpecError) as err:
        run_native("tpcb", "run", "mysql", {"mysql.url": "mysql://x@127.0.0.1:1/x"})
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
