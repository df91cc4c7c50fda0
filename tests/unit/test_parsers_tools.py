"""The native-tool parsers read what the tools really print on this machine (tests/data holds
captured outputs of redis-benchmark 7.0, pgbench 15, sysbench 1.0.20 and memtier_benchmark 2.3.0, the
last built from source since Debian 12 does not package it; tests/data/memtier_2.3.0_commands.txt
lists how each memtier capture was made)."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchwright.errors import RunnerFailed, SpecError
from benchwright.runner.measure import decode_histogram
from benchwright.runner.workloads.external import memtier, pgbench, redis_benchmark, sysbench
from benchwright.runner.workloads.external.common import Parsed, ToolRun, build_document, scrub
from benchwright.runner.workloads.redisbench.buckets import latency_buckets

DATA = Path(__file__).resolve().parents[1] / "data"


def read(name: str) -> str:
    return (DATA / name).read_text()


# ---------------------------------------------------------------- redis-benchmark
def test_redis_benchmark_full_report_gives_counts_rates_percentiles_and_a_histogram() -> None:
    parsed = redis_benchmark.parse(read("redis_benchmark_set_get.txt"))
    assert list(parsed.operations) == ["SET", "GET"]
    set_ = parsed.operations["SET"]
    assert set_.operations == 2000
    assert set_.throughput == pytest.approx(83333.34)
    assert set_.average_us == pytest.approx(84.0)
    assert set_.min_us == pytest.approx(16.0) and set_.max_us == pytest.approx(4711.0)
    assert set_.percentiles_us == {
        50.0: pytest.approx(63.0),
        95.0: pytest.approx(95.0),
        99.0: pytest.approx(263.0),
    }
    assert set_.histogram is not None and set_.histogram.get_total_count() == 2000
    assert parsed.threads == 10


def test_redis_benchmark_pipelined_report() -> None:
    parsed = redis_benchmark.parse(read("redis_benchmark_set_get_p16.txt"))
    assert {n: o.operations for n, o in parsed.operations.items()} == {"SET": 4000, "GET": 4000}
    assert parsed.operations["GET"].throughput == pytest.approx(571428.56)


def test_redis_benchmark_csv_takes_the_request_count_from_the_settings() -> None:
    parsed = redis_benchmark.parse(read("redis_benchmark_set_get.csv"), requests=2000, clients=10)
    get = parsed.operations["GET"]
    assert (get.operations, get.throughput) == (2000, pytest.approx(76923.08))
    assert get.percentiles_us[99.0] == pytest.approx(199.0)
    assert get.max_us == pytest.approx(4615.0)
    assert get.histogram is None


def test_redis_benchmark_quiet_names_every_test_including_the_lrange_fill() -> None:
    parsed = redis_benchmark.parse(read("redis_benchmark_quiet.txt"), requests=2000)
    assert list(parsed.operations) == [
        "SET",
        "GET",
        "INCR",
        "LPUSH",
        "LPUSH_FOR_LRANGE",
        "LRANGE_100",
        "MSET",
    ]
    assert parsed.operations["MSET"].throughput == pytest.approx(117647.05)
    assert parsed.operations["LRANGE_100"].percentiles_us == {50.0: pytest.approx(111.0)}


def test_redis_benchmark_progress_lines_do_not_leak_into_the_results() -> None:
    parsed = redis_benchmark.parse(read("redis_benchmark_get_progress.txt"))
    assert list(parsed.operations) == ["GET"]
    assert parsed.operations["GET"].operations == 150000


def test_buckets_from_the_printed_distribution_are_never_overstated() -> None:
    doc = _document(redis_benchmark.parse(read("redis_benchmark_set_get.txt")), "redis-benchmark")
    buckets = latency_buckets(doc)["SET"]
    # printed: "99.600% <= 0.807 milliseconds (cumulative count 1992)", next point 4.663 ms: within 1 ms
    # is the share at 0.807 ms, not more
    assert buckets["1"] == pytest.approx(1992 / 2000)
    assert buckets["5"] == 1.0 and buckets["500"] == 1.0
    assert buckets["max_ms"] == pytest.approx(4.711, abs=0.01)


# ---------------------------------------------------------------- pgbench
def test_pgbench_select_only_summary_and_progress_lines() -> None:
    parsed = pgbench.parse(read("pgbench_select_only.txt"))
    op = parsed.operations["select-only"]
    assert (op.operations, op.errors) == (125375, 0)
    assert op.throughput == pytest.approx(42031.850672)
    assert op.average_us == pytest.approx(90.0) and op.stddev_us == pytest.approx(105.0)
    assert [s.t for s in parsed.intervals] == [1.0, 2.0, 3.0]
    assert parsed.intervals[1].throughput == pytest.approx(42547.6)
    assert parsed.intervals[1].average_us == {"select-only": pytest.approx(89.0)}
    assert parsed.extra["query_mode"] == "simple" and parsed.threads == 4


def test_pgbench_tpcb_like_with_the_prepared_protocol() -> None:
    parsed = pgbench.parse(read("pgbench_tpcb.txt"))
    assert list(parsed.operations) == ["tpcb-like"]
    assert parsed.extra["query_mode"] == "prepared" and parsed.extra["scaling_factor"] == 2


def test_pgbench_per_statement_latencies() -> None:
    parsed = pgbench.parse(read("pgbench_tpcb_per_statement.txt"))
    statements = parsed.extra["statement_latencies_ms"]
    assert len(statements) == 11
    assert statements[-1] == {"latency_ms": 0.436, "failures": 0, "statement": "END;"}
    assert parsed.operations["tpcb-like"].operations == 400


def test_pgbench_transaction_log_becomes_a_full_histogram() -> None:
    log = read("pgbench_transaction_log.txt").splitlines()
    parsed = pgbench.parse(read("pgbench_select_only_logged.txt"), log)
    hist = parsed.operations["select-only"].histogram
    assert hist is not None and hist.get_total_count() == 100 == len(log)
    assert hist.get_max_value() >= max(int(line.split()[2]) for line in log)


def test_pgbench_init_step_timings() -> None:
    parsed = pgbench.parse(read("pgbench_init.txt"))
    assert parsed.operations["INSERT"].operations == 200000
    assert parsed.extra["init_seconds"] == pytest.approx(0.27)
    assert parsed.extra["init_steps_s"]["client-side generate"] == pytest.approx(0.15)


def test_pgbench_password_goes_to_the_environment_not_the_command_line() -> None:
    argv, env = pgbench.build_argv(
        "pgbench",
        pgbench.PgbenchSettings(clients=4, builtin="select-only"),
        "postgresql://bench:s3cret@db1:5432,db2:5432/bench",
    )
    assert "s3cret" not in " ".join(argv)
    assert argv[-1] == "postgresql://bench@db1:5432,db2:5432/bench"
    assert env == {"PGPASSWORD": "s3cret"}
    assert argv[argv.index("-b") + 1] == "select-only"


# ---------------------------------------------------------------- sysbench
def test_sysbench_point_select_statistics_and_intervals() -> None:
    parsed = sysbench.parse(read("sysbench_oltp_point_select.txt"))
    op = parsed.operations["transaction"]
    assert op.operations == 148431 and op.throughput == pytest.approx(49359.02)
    assert (op.min_us, op.average_us, op.max_us) == (
        pytest.approx(20.0),
        pytest.approx(80.0),
        pytest.approx(22920.0),
    )
    assert op.percentiles_us == {95.0: pytest.approx(150.0)}
    assert len(parsed.intervals) == 3 and parsed.intervals[0].throughput == pytest.approx(53531.68)
    assert parsed.extra["queries"] == {"read": 148431, "write": 0, "other": 0, "total": 148431}


def test_sysbench_write_only_counts_queries_by_kind_and_ignored_errors() -> None:
    parsed = sysbench.parse(read("sysbench_oltp_write_only.txt"))
    assert parsed.extra["queries"] == {"read": 0, "write": 34177, "other": 17092, "total": 51269}
    assert parsed.extra["ignored_errors"] == 12
    assert parsed.intervals[0].errors == 7


def test_sysbench_histogram_table_becomes_an_hdr_histogram() -> None:
    parsed = sysbench.parse(read("sysbench_oltp_read_write_histogram.txt"))
    op = parsed.operations["transaction"]
    assert op.histogram is not None and op.histogram.get_total_count() == op.operations == 1220
    pg = sysbench.parse(read("sysbench_pgsql_point_select_histogram.txt")).operations["transaction"]
    assert pg.percentiles_us == {99.0: pytest.approx(90.0)}


def test_sysbench_prepare_output() -> None:
    parsed = sysbench.parse(read("sysbench_prepare.txt"))
    assert parsed.extra == {"tables": ["sbtest1", "sbtest2"], "rows": 4000}


def test_sysbench_mysql_password_is_scrubbed_from_what_we_store() -> None:
    argv, env, secrets = sysbench.build_argv(
        "sysbench", sysbench.SysbenchSettings(), "mysql", "mysql://bench:s3cret@127.0.0.1:3306/bench"
    )
    assert "--mysql-password=s3cret" in argv and env == {}
    assert "s3cret" not in scrub(" ".join(argv), secrets)
    argv, env, _ = sysbench.build_argv(
        "sysbench", sysbench.SysbenchSettings(), "postgres", "postgresql://bench:s3cret@127.0.0.1:5432/bench"
    )
    assert "s3cret" not in " ".join(argv) and env == {"PGPASSWORD": "s3cret"}


# ---------------------------------------------------------------- memtier_benchmark
def _memtier(name: str, hdr: bool = True) -> Parsed:
    """A capture parsed as the wrapper parses it: stdout plus the .hgrm logs written next to it."""
    histograms = memtier.read_hdr_logs(DATA / f"memtier_2.3.0_{name}") if hdr else None
    return memtier.parse(read(f"memtier_2.3.0_{name}.txt"), histograms)


def test_memtier_default_ratio_with_hdr_logs_gives_exact_counts() -> None:
    parsed = _memtier("ratio_1_10")
    assert list(parsed.operations) == ["SET", "GET"]  # the zero-rate Waits row is left out
    set_, get = parsed.operations["SET"], parsed.operations["GET"]
    assert (set_.operations, get.operations) == (1820, 18180)  # 2 threads x 5 clients x 2000 requests
    assert set_.throughput == pytest.approx(7590.01) and get.throughput == pytest.approx(75816.66)
    assert get.average_us == pytest.approx(116.38)
    assert get.percentiles_us == {
        50.0: pytest.approx(111.0),
        90.0: pytest.approx(143.0),
        95.0: pytest.approx(151.0),
        99.0: pytest.approx(207.0),
        99.9: pytest.approx(4607.0),
    }
    assert set_.percentiles_us[99.9] == pytest.approx(4223.0)
    assert get.histogram is not None and get.histogram.get_total_count() == 18180
    # memtier prints percentiles at the bucket's highest equivalent value, as we re-record them
    assert get.histogram.get_value_at_percentile(99.0) == 207
    assert parsed.runtime_s == pytest.approx(20000 / 83406.66)  # "0 secs" on the progress line
    assert parsed.threads == 10
    assert parsed.extra["get_hits_per_sec"] == pytest.approx(75816.66)
    assert parsed.extra["kb_per_sec"] == pytest.approx(5811.30)
    assert (parsed.extra["memtier_table"], parsed.extra["memtier_runs"]) == ("ALL STATS", 1)


def test_memtier_stdout_alone_splits_the_final_total_by_rate() -> None:
    parsed = _memtier("ratio_1_10", hdr=False)
    assert {n: o.operations for n, o in parsed.operations.items()} == {"SET": 1820, "GET": 18180}
    assert all(o.histogram is None for o in parsed.operations.values())


def test_memtier_sets_only_for_a_time_takes_the_last_final_progress_line() -> None:
    parsed = _memtier("sets_only_2s")
    assert list(parsed.operations) == ["SET"]  # Gets 0.00 ops/sec is not an operation
    set_ = parsed.operations["SET"]
    # two "[RUN #1 100%" lines are printed (124917 then 124922 ops); the last one is the total
    assert set_.operations == 124922 and set_.histogram is not None
    assert set_.histogram.get_total_count() == 124922
    assert set_.throughput == pytest.approx(62438.96)
    assert set_.percentiles_us[99.0] == pytest.approx(2671.0)
    assert parsed.runtime_s == pytest.approx(2.0007, abs=1e-3)
    assert parsed.threads == 8


def test_memtier_pipelined_run() -> None:
    parsed = _memtier("pipeline16")
    assert {n: o.operations for n, o in parsed.operations.items()} == {"SET": 20000, "GET": 20000}
    get = parsed.operations["GET"]
    assert get.throughput == pytest.approx(144566.12)
    assert (get.percentiles_us[95.0], get.percentiles_us[99.9]) == (
        pytest.approx(2559.0),
        pytest.approx(9919.0),
    )
    assert parsed.extra["kb_per_sec"] == pytest.approx(20721.29)


def test_memtier_printed_latency_distribution_becomes_a_histogram() -> None:
    parsed = _memtier("histogram", hdr=False)
    assert {n: o.operations for n, o in parsed.operations.items()} == {"SET": 200, "GET": 800}
    get = parsed.operations["GET"]
    assert get.percentiles_us == {
        50.0: pytest.approx(23.0),
        99.0: pytest.approx(47.0),
        99.9: pytest.approx(3199.0),
    }
    assert get.histogram is not None and get.histogram.get_total_count() == 800
    assert get.histogram.get_max_value() == pytest.approx(4159, rel=1e-3)  # "GET  4.159  100.000"
    assert parsed.operations["SET"].throughput == pytest.approx(11676.79)


def test_memtier_several_runs_use_the_aggregated_average_table() -> None:
    parsed = _memtier("run_count_2", hdr=False)
    assert parsed.extra["memtier_table"] == "AGGREGATED AVERAGE RESULTS (2 runs)"
    assert parsed.extra["memtier_runs"] == 2
    assert sum(o.operations for o in parsed.operations.values()) == 2000  # 1000 ops in each run
    set_ = parsed.operations["SET"]
    assert set_.throughput == pytest.approx(3173.37)  # not the BEST or WORST run's 5000-odd
    assert set_.percentiles_us[99.0] == pytest.approx(2431.0)


def test_memtier_document_reports_every_summary_field() -> None:
    doc = _document(_memtier("pipeline16"), "memtier_benchmark")
    assert "not_reported" not in doc.extra  # p90/p95 printed on request, min/max/stddev from the logs
    get = doc.operations["GET"]
    assert (get.operations, get.p95_us, get.p999_us) == (20000, pytest.approx(2559.0), pytest.approx(9919.0))
    assert 0 < get.min_us <= get.p50_us <= get.max_us
    assert set(latency_buckets(doc)) == {"SET", "GET"}


def test_memtier_command_line_asks_for_the_percentiles_and_logs_we_read(tmp_path: Path) -> None:
    conn = {"redis.host": "db1", "redis.port": "6380", "redis.db": "7", "redis.password": "s3cret"}
    settings = memtier.MemtierSettings(requests=None, test_time_s=5, pipeline=8)
    argv, secrets = memtier.build_argv("memtier_benchmark", settings, conn, hdr_prefix=str(tmp_path / "m"))
    assert "--print-percentiles=50,90,95,99,99.9" in argv and f"--hdr-file-prefix={tmp_path}/m" in argv
    assert {"--test-time=5", "--pipeline=8", "--select-db=7", "--server=db1", "--port=6380"} <= set(argv)
    assert "s3cret" not in scrub(" ".join(argv), secrets)
    with pytest.raises(SpecError) as err:
        memtier.build_argv("memtier_benchmark", memtier.MemtierSettings(ratio="1/10"), conn)
    assert err.value.field == "memtier.ratio"


def test_memtier_unreadable_hdr_log_names_the_file(tmp_path: Path) -> None:
    assert memtier.read_hdr_logs(tmp_path / "none") == {}  # no command ran, no file
    bad = tmp_path / "m_GET_command_run_1.hgrm"
    bad.write_text(
        '"StartTimestamp","EndTimestamp","Interval_Max","Interval_Compressed_Histogram"\n1.0,2.0,3.0,HISTFAAAnotbase64\n'
    )
    with pytest.raises(RunnerFailed, match=r"m_GET_command_run_1\.hgrm"):
        memtier.read_hdr_logs(tmp_path / "m")


# ---------------------------------------------------------------- the document
def test_tool_document_names_the_tool_lists_what_it_did_not_report_and_hides_secrets() -> None:
    output = read("redis_benchmark_quiet.txt") + "\nconnected with -a hunter2\n"
    doc = _document(redis_benchmark.parse(output, requests=2000), "redis-benchmark", secrets=["hunter2"])
    assert doc.measurement.source == "redis-benchmark"
    assert "redis-benchmark's own" in doc.measurement.method
    assert "p99_us" in doc.extra["not_reported"]["SET"]
    assert "hunter2" not in doc.model_dump_json()
    assert doc.operations["SET"].operations == 2000


def test_document_histogram_round_trips() -> None:
    doc = _document(sysbench.parse(read("sysbench_oltp_read_write_histogram.txt")), "sysbench")
    summary = doc.operations["transaction"]
    assert summary.histogram is not None
    assert decode_histogram(summary.histogram).get_total_count() == 1220
    assert 0 < summary.p50_us <= summary.p99_us <= summary.max_us * 1.01


def _document(parsed: Parsed, tool: str, secrets: list[str] | None = None):  # type: ignore[no-untyped-def]
    from datetime import UTC, datetime

    now = datetime.now(UTC)
    run = ToolRun(
        argv=[tool, "-a", "hunter2"],
        output="raw -a hunter2",
        returncode=0,
        started_at=now,
        ended_at=now,
        wall_s=1.0,
        cpu_user_s=0.1,
        cpu_system_s=0.1,
        peak_rss_mb=5.0,
    )
    return build_document(
        tool=tool,
        workload="redis-bench",
        engine="redis",
        phase="run",
        parsed=parsed,
        run=run,
        endpoint="127.0.0.1:6379",
        settings={},
        secrets=secrets or ["hunter2"],
    )
