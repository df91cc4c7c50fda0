"""Failed operations (issue 24) wherever a result is shown or stored: next to every throughput the
share that failed, each ``<OP>-FAILED`` entry on its own with its count and never as a throughput,
in the terminal summary, the HTML report, YCSB's text, ``benchwright table``, Slack, the time-series points and the SQLite store;
a native tool's failures become their own entry; a version 1 document reads with its failures
moved out of the throughput."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path

import pytest

from benchwright.providers.aws.points import rows as point_rows
from benchwright.providers.local.sqlite_store import SQLiteResultStore
from benchwright.report.html import phase_table
from benchwright.report.sample import make_document, make_run
from benchwright.report.slack import headline_rows
from benchwright.report.table import build_table, render
from benchwright.report.text import render_summary
from benchwright.report.units import fmt_share
from benchwright.report.ycsb_text import ycsb_summary
from benchwright.results import SCHEMA_VERSION, ResultDocument
from benchwright.runner.workloads.external import pgbench
from benchwright.runner.workloads.external.common import ToolRun, build_document
from benchwright.runs import RunRecord
from tests.statuses import assert_honest

SECONDS = 30
# 1,000 ops/s for 30 s, half READ and half UPDATE: 15,000 each tried, 150 of each failed (1.0 %)
TRIED, FAILED = 15_000, 150


def failing_run(errors: int = 2 * FAILED) -> RunRecord:
    run = make_run("demo", "r1", [("c1", {}, [1000.0] * SECONDS)])
    run.cells[0].phases["run"] = make_document([1000.0] * SECONDS, errors=errors)
    return run


def test_the_sample_document_records_failures_as_the_runner_does() -> None:
    doc = failing_run().cells[0].phases["run"]
    assert set(doc.operations) == {"READ", "READ-FAILED", "UPDATE", "UPDATE-FAILED"}
    assert doc.operations["READ"].statuses == {"OK": TRIED - FAILED}
    assert doc.operations["READ-FAILED"].statuses == {"ERROR": FAILED}
    assert doc.operations_total == 2 * (TRIED - FAILED) and doc.failed_total == 2 * FAILED
    assert doc.error_rate == pytest.approx(0.01)
    assert doc.throughput == pytest.approx(doc.operations_total / SECONDS)


def test_the_terminal_summary_shows_the_error_rate_and_failures_on_their_own_rows() -> None:
    text = render_summary(failing_run(), width=200)
    assert "err%" in text
    read = next(line for line in text.splitlines() if re.search(r"│ READ\s+│", line))
    # successes only: 14,850 / 30 s = 495 ops/s, and 150 of 15,000 tried failed = 1.0 %
    assert re.search(r"│ READ\s+│\s+495\.0 │\s+1\.0 │", read), read
    failed = next(line for line in text.splitlines() if "READ-FAILED" in line)
    assert re.search(r"│ READ-FAILED\s+│\s+150 failed │\s+│", failed), failed  # a count, no rate
    assert "ops/s" not in failed and "5.00" not in failed  # 150 / 30 s is never shown as a rate
    every = next(line for line in text.splitlines() if re.search(r"│ ALL\s+│", line))
    assert re.search(r"│ ALL\s+│\s+990\.0 │\s+1\.0 │", every), every


def test_the_terminal_summary_of_a_clean_run_shows_a_zero_error_rate_and_no_failed_row() -> None:
    text = render_summary(failing_run(errors=0), width=200)
    assert "FAILED" not in text
    read = next(line for line in text.splitlines() if re.search(r"│ READ\s+│", line))
    assert re.search(r"│ READ\s+│\s+500\.0 │\s+0 │", read), read


def test_table_adds_the_error_rate_when_a_phase_has_failures_and_only_then() -> None:
    clean = build_table([failing_run(errors=0)], phase="run")
    assert "error_rate" not in [m.name for m in clean.metrics]
    table = build_table([failing_run()], phase="run")
    assert "error_rate" in [m.name for m in table.metrics]
    text = render(table, "csv")
    header, *lines = text.strip().splitlines()
    column = header.split(",").index("error_rate_pct")
    assert {line.split(",")[column] for line in lines} == {"1.0"}, text  # 150 of 15,000 of each type
    throughput = header.split(",").index("throughput")
    by_op = {line.split(",")[0]: line.split(",") for line in lines}
    assert by_op["READ"][throughput] == "495.0"  # successes / run time
    assert by_op["READ-FAILED"][throughput] == ""  # a rate of failures is never a throughput
    markdown = render(table, "md")
    assert "| err % |" in markdown and "| READ | 14,850 | 495.0 |" in markdown, markdown
    assert re.search(r"\| READ \|.*\| 1\.00% \|", markdown), markdown


def test_the_error_metrics_of_a_table_count_the_failed_entries() -> None:
    table = build_table([failing_run()], phase="run", metrics=["throughput", "errors", "error_rate"])
    text = render(table, "csv")
    header, *lines = text.strip().splitlines()
    cols = header.split(",")
    values = [dict(zip(cols, line.split(","), strict=True)) for line in lines]
    assert values, text
    for row in values:
        assert float(row["errors"].replace(",", "")) in {FAILED, 2 * FAILED}, row
        assert float(row["error_rate_pct"]) == pytest.approx(1.0), row


def test_slack_headline_says_which_share_failed() -> None:
    (line,) = headline_rows(failing_run())
    assert "990.0 ops/s" in line and "1.0% failed" in line, line
    (clean,) = headline_rows(failing_run(errors=0))
    assert "failed" not in clean, clean


def test_time_series_rows_of_a_failed_entry_are_errors_never_throughput() -> None:
    rows = [r for r in point_rows(failing_run()) if r.measurement == "operation" and r.tags["phase"] == "run"]
    by_op = {r.tags["operation"]: r.fields for r in rows}
    failed = by_op["READ-FAILED"]
    assert failed["errors"] == FAILED and failed["errors_per_s"] == pytest.approx(FAILED / SECONDS)
    assert "throughput" not in failed and "operations" not in failed
    read = by_op["READ"]
    assert read["operations"] == TRIED - FAILED
    assert read["throughput"] == pytest.approx((TRIED - FAILED) / SECONDS)
    assert read["errors"] == FAILED and read["error_rate"] == pytest.approx(FAILED / TRIED)
    intervals = [r for r in point_rows(failing_run()) if r.measurement == "interval"]
    assert intervals and all("errors_per_s" in r.fields for r in intervals)


def test_the_store_keeps_each_operations_failures_and_the_phase_total(tmp_path: Path) -> None:
    with SQLiteResultStore(tmp_path / "results.sqlite") as store:
        store.save_run(failing_run())
        got = {
            op: (operations, errors)
            for op, operations, errors in store._conn.execute(
                "SELECT operation, operations, errors FROM phase_summaries WHERE phase = 'run'"
            )
        }
    assert got == {
        "READ": (TRIED - FAILED, FAILED),
        "READ-FAILED": (FAILED, FAILED),
        "UPDATE": (TRIED - FAILED, FAILED),
        "UPDATE-FAILED": (FAILED, FAILED),
        "ALL": (2 * (TRIED - FAILED), 2 * FAILED),  # the successes, and every failure once
    }


def test_a_native_tools_failures_are_their_own_entry() -> None:
    """pgbench's "number of failed transactions" comes in addition to the transactions processed."""
    output = (Path(__file__).parent.parent / "data" / "pgbench_tpcb.txt").read_text()
    assert "number of failed transactions: 0 (0.000%)" in output
    output = output.replace(
        "number of failed transactions: 0 (0.000%)", "number of failed transactions: 37 (0.362%)"
    )
    output = output.replace("stddev 0.886, 0 failed", "stddev 0.886, 37 failed")
    parsed = pgbench.parse(output)
    now = datetime.now(UTC)
    tool_run = ToolRun(
        argv=["pgbench"],
        output=output,
        returncode=0,
        started_at=now,
        ended_at=now,
        wall_s=3.1,
        cpu_user_s=0.1,
        cpu_system_s=0.1,
        peak_rss_mb=5.0,
    )
    doc = build_document(
        tool="pgbench",
        workload="tpcb",
        engine="postgres",
        phase="run",
        parsed=parsed,
        run=tool_run,
        endpoint="127.0.0.1:15432",
        settings={},
    )
    assert doc.operations["tpcb-like"].operations == 10193
    assert doc.operations["tpcb-like"].statuses == {"OK": 10193}
    failed = doc.operations["tpcb-like-FAILED"]
    assert failed.statuses == {"ERROR": 37} and failed.operations == 37
    assert doc.operations_total == 10193 and doc.failed_total == 37
    runtime_s = doc.runtime_ms / 1000
    assert doc.throughput == pytest.approx(3412.539652, rel=1e-3)  # pgbench's own tps: successes
    assert failed.throughput == pytest.approx(37 / runtime_s, rel=1e-3)
    assert set(doc.extra["not_reported"]["tpcb-like-FAILED"]) >= {"p99_us", "average_us"}
    assert sum(s.errors for s in doc.intervals) == 37
    assert any(f.code == "error_rate" and f.severity == "warning" for f in doc.validity), doc.validity
    assert_honest(doc)


def _version_1(doc: ResultDocument) -> str:
    """``doc`` as a version 1 writer wrote it: the failures inside their operation's entry and in
    every count and throughput."""
    raw = doc.model_dump(mode="json")
    raw["schema_version"] = 1
    raw["failed_total"] = 0
    ops = raw["operations"]
    for name in [n for n in ops if n.endswith("-FAILED")]:
        failed = ops.pop(name)["operations"]
        base = ops[name.removesuffix("-FAILED")]
        base["operations"] += failed
        base["statuses"]["ERROR"] = failed
        base["throughput"] = base["operations"] / (raw["runtime_ms"] / 1000)
    raw["operations_total"] = sum(o["operations"] for o in ops.values())
    raw["throughput"] = raw["operations_total"] / (raw["runtime_ms"] / 1000)
    raw.pop("failed_total")
    return json.dumps(raw)


def test_a_version_1_document_reads_with_its_failures_moved_out() -> None:
    now = failing_run().cells[0].phases["run"]
    old = ResultDocument.parse(_version_1(now))
    assert old.schema_version == SCHEMA_VERSION == 2
    assert old.operations["READ"].operations == TRIED - FAILED
    assert old.operations["READ"].statuses == {"OK": TRIED - FAILED}
    assert old.operations["READ"].throughput == pytest.approx((TRIED - FAILED) / SECONDS)
    assert old.operations["READ-FAILED"].statuses == {"ERROR": FAILED}
    assert old.operations["READ-FAILED"].throughput == pytest.approx(FAILED / SECONDS)
    assert old.operations_total == now.operations_total == 2 * (TRIED - FAILED)
    assert old.failed_total == 2 * FAILED
    assert old.throughput == pytest.approx(now.throughput)
    flags = {f.code: f for f in old.validity}
    assert flags["failures_mixed_v1"].severity == "info"
    assert "300 failed operations" in flags["failures_mixed_v1"].message


def test_a_version_1_document_without_failures_reads_unchanged() -> None:
    clean = failing_run(errors=0).cells[0].phases["run"]
    old = ResultDocument.parse(_version_1(clean))
    assert old.operations == clean.operations and old.throughput == clean.throughput
    assert old.failed_total == 0 and not any(f.code == "failures_mixed_v1" for f in old.validity)


def test_the_html_report_shows_failures_as_counts_and_the_error_rate_per_cell() -> None:
    table = phase_table(failing_run(), "run")
    assert table is not None
    (row,) = table.rows
    assert row.total == "990.0" and row.errors == "1.0"  # successes/s, and 300 of 30,000 failed
    figures = dict(zip(table.ops, row.ops, strict=True))
    assert figures["READ"][0] == "495.0"
    assert figures["READ-FAILED"] == ["150 failed", "-", "-", "-"]  # no rate, no latency it lacks
    clean = phase_table(failing_run(errors=0), "run")
    assert clean is not None and clean.rows[0].errors == "0" and "READ-FAILED" not in clean.ops


def test_the_ycsb_text_counts_successes_in_the_throughput_and_names_the_failures() -> None:
    lines = ycsb_summary(failing_run().cells[0].phases["run"]).splitlines()
    assert "[OVERALL], Throughput(ops/sec), 990.0" in lines
    assert "[OVERALL], Failed, 300" in lines
    assert "[READ], Operations, 14850" in lines and "[READ], Return=ERROR, 150" in lines
    assert "[READ-FAILED], Operations, 150" in lines


@pytest.mark.parametrize(
    ("part", "whole", "shown"),
    [
        (0, 100, "0"),
        (1, 1_000_000, "0.0001"),  # never rounded down to 0 when some failed
        (150, 15_000, "1.0"),
        (1, 3, "33.3"),
        (9_996, 10_000, "99.9"),  # never rounded up to 100 when some succeeded
        (10_000, 10_000, "100"),
        (5, 0, "0"),
    ],
)
def test_an_error_rate_is_shown_without_rounding_to_none_or_all(part: int, whole: int, shown: str) -> None:
    assert fmt_share(part, whole) == shown
