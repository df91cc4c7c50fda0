"""redis-benchmark's live `rps=` line from reporting periods: the figures (per request with -P,
successes only), the terminal's in-place rewrite and wipe, and a log's line per second."""

from __future__ import annotations

import io

from benchwright.commands.redisbench_live import LiveLines, RpsLine
from benchwright.runner.engine import Period
from benchwright.runner.measure import PeriodTotals


def period(index: int, ok: int, latency_sum_us: int, failed: int = 0) -> Period:
    totals = PeriodTotals(counts={"SET": ok} if ok else {}, latency_sum_us=latency_sum_us)
    if failed:
        totals.statuses["ERROR"] = failed
    return Period(
        index=index,
        start_s=float(index),
        end_s=float(index + 1),
        totals=totals,
        exact=True,
        latency_kind="service_time",
        threads=4,
    )


def test_a_log_gets_a_line_per_second_with_the_second_s_and_the_test_s_figures() -> None:
    out = io.StringIO()
    line = RpsLine("SET", pipeline=1, stream=out, tty=False)
    line.period(period(0, 1000, 1_000_000))  # 1,000 requests of 1 ms
    line.period(period(1, 3000, 1_500_000))  # 3,000 of 0.5 ms
    assert out.getvalue().splitlines() == [
        "SET: rps=1000.0 (overall: 1000.0) avg_msec=1.000 (overall: 1.000)",
        "SET: rps=3000.0 (overall: 2000.0) avg_msec=0.500 (overall: 0.625)",
    ]


def test_failed_requests_are_neither_rate_nor_latency() -> None:
    out = io.StringIO()
    line = RpsLine("GET", pipeline=1, stream=out, tty=False)
    line.period(period(0, 500, 500_000, failed=9_000))
    line.period(period(1, 0, 0, failed=7_000))  # a second of failures only
    assert out.getvalue().splitlines() == [
        "GET: rps=500.0 (overall: 500.0) avg_msec=1.000 (overall: 1.000)",
        "GET: rps=0.0 (overall: 250.0) avg_msec=-nan (overall: 1.000)",
    ]


def test_a_pipeline_counts_its_requests_and_keeps_its_round_trip_as_their_latency() -> None:
    out = io.StringIO()
    RpsLine("INCR", pipeline=16, stream=out, tty=False).period(period(0, 100, 200_000))
    assert out.getvalue() == "INCR: rps=1600.0 (overall: 1600.0) avg_msec=2.000 (overall: 2.000)\n"


def test_a_terminal_line_is_rewritten_in_place_and_wiped_at_the_test_s_end() -> None:
    out = io.StringIO()
    lines = LiveLines(pipeline=1, stream=out, tty=True)
    first = lines.for_test("lrange_100")
    first.on_period(period(0, 12_000, 12_000_000))
    first.on_period(period(1, 2_000, 2_000_000))
    lines.for_test("mset")  # the next test wipes the last one's line
    text = out.getvalue()
    assert "\n" not in text
    writes = text.split("\r")[1:]
    long = "LRANGE_100 (first 100 elements): rps=12000.0 (overall: 12000.0) avg_msec=1.000 (overall: 1.000)"
    short = "LRANGE_100 (first 100 elements): rps=2000.0 (overall: 7000.0) avg_msec=1.000 (overall: 1.000)"
    assert writes[0] == long
    assert writes[1] == short + " " * (len(long) - len(short))  # the longer line leaves no tail
    assert writes[2] == " " * len(short) and writes[3] == ""
    lines.close()  # nothing on screen: nothing more written
    assert out.getvalue() == text
