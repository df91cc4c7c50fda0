"""`benchwright table`: the pivot (rows, columns, metrics, repeats), its four formats, the seed views,
and the command reading a store (a run, an id prefix, a suite's runs) with --store."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from benchwright.cli import main
from benchwright.errors import SpecError
from benchwright.providers.local.sqlite_store import SQLiteResultStore
from benchwright.report.sample import make_run, noisy_series
from benchwright.report.table import build_table, render, seed_views
from benchwright.report.table_metrics import resolve_metrics
from benchwright.results import MetricPoint, MetricSeries
from benchwright.runs import CostEstimate, RunRecord


def grid_run(spec: str = "exp2", run_id: str = "grid-1", repeats: int = 1) -> RunRecord:
    """A datatype x fieldlength grid like experiment 2: throughput falls with the value size."""
    cells = []
    for dt_i, datatype in enumerate(("hash", "zset")):
        for fl in (128, 1024):
            level = 10_000 / (1 + dt_i) / (fl / 128) ** 0.5
            params = {"workload.properties.redis.datatype": datatype, "workload.properties.fieldlength": fl}
            cells.append((f"datatype={datatype},fieldlength={fl}", params, noisy_series(level, 10)))
    return make_run(spec, run_id, cells, repeats=repeats)


def test_rows_by_one_parameter_columns_by_another_is_the_seed_grid() -> None:
    table = build_table([grid_run()], rows=["datatype"], cols="fieldlength", metrics=["throughput"])
    text = render(table, "md")
    assert "| datatype | operation | fieldlength=128 | fieldlength=1024 |" in text
    grid = table.grid(formatted=False)
    assert [line[:2] for line in grid] == [
        ["hash", "READ"],
        ["hash", "UPDATE"],
        ["zset", "READ"],
        ["zset", "UPDATE"],
    ]
    hash_read_128, hash_read_1024 = grid[0][2], grid[0][3]
    assert hash_read_128 > hash_read_1024 > 0  # the larger value is slower, as generated


def test_defaults_are_the_workloads_seed_figures_and_matrix_parameters_by_short_name() -> None:
    table = build_table([grid_run()])
    assert table.rows == ["datatype", "fieldlength", "operation"]
    assert [m.name for m in table.metrics] == ["operations", "throughput", "avg", "min", "max", "p95", "p99"]
    assert "['" not in render(table, "md")


def test_load_phase_and_phase_level_metrics_have_no_operation_rows() -> None:
    run = grid_run()
    load = build_table([run], phase="load", metrics=["throughput"])
    assert {line[2] for line in load.grid()} == {"INSERT"}
    cloud = build_table([run], metrics=["read_iops", "write_iops", "cpu"])
    assert cloud.rows == ["datatype", "fieldlength"]
    assert all(isinstance(v, float) and v > 0 for line in cloud.grid(formatted=False) for v in line[2:4])
    assert {line[4] for line in cloud.grid()} == {"-"}  # host CPU is not the server's CPU


def test_repeats_are_averaged_and_counted() -> None:
    run = grid_run(repeats=3)
    table = build_table([run], metrics=["throughput"])
    doc = json.loads(render(table, "json"))
    first = doc["rows"][0]
    values = [
        c.phases["run"].operations["READ"].throughput for c in run.cells if c.cell_id == run.cells[0].cell_id
    ]
    assert first["throughput_n"] == 3
    assert first["throughput"] == pytest.approx(sum(values) / 3, rel=1e-3)


def test_csv_keeps_raw_microseconds_and_json_names_units() -> None:
    table = build_table([grid_run()], rows=["datatype"], cols="fieldlength", metrics=["p99"])
    rows = list(csv.reader(io.StringIO(render(table, "csv"))))
    assert rows[0] == ["datatype", "operation", "128_p99_us", "1024_p99_us"]
    assert float(rows[1][2]) > 100  # microseconds, not "2.2 ms"
    assert json.loads(render(table, "json"))["units"] == {"p99": "us"}
    html = render(table, "html")
    assert html.count("<tr>") == 5 and "table-scroll" in html


def test_cloud_metrics_cost_and_buckets() -> None:
    run = grid_run()
    for cell in run.cells:
        points = [MetricPoint(t=float(t), value=100.0 - 10 * t) for t in range(5)]
        cell.metrics.append(
            MetricSeries(name="BurstBalance", unit="Percent", source="cloudwatch:AWS/RDS", points=points)
        )
        cell.cost = CostEstimate(total=2.0, source="test")
    table = build_table([run], metrics=["burst", "usd", "ops_per_usd"])
    line = table.grid(formatted=False)[0]
    assert line[2:4] == [60.0, 2.0]
    assert line[4] == pytest.approx(run.cells[0].phases["run"].operations_total / 2.0)
    assert [t.title for t in seed_views(run)][-1] == "server and storage per cell"


def test_unknown_metric_and_parameter_are_named() -> None:
    with pytest.raises(SpecError, match="did you mean 'p99'"):
        resolve_metrics(["p98"])
    with pytest.raises(SpecError, match="no parameter 'warehouses'"):
        build_table([grid_run()], rows=["warehouses"])
    assert [m.name for m in resolve_metrics(["buckets"])] == [
        "<=1ms",
        "<=5ms",
        "<=50ms",
        "<=100ms",
        "<=300ms",
        "<=500ms",
        "max",
    ]


def test_command_reads_a_run_a_prefix_and_a_suite_from_the_store(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store_path = tmp_path / "s.sqlite"
    a = grid_run("exp2-types", "20260101-000000-aaaaaa")
    b = make_run(
        "exp2-string",
        "20260101-000100-bbbbbb",
        [("fieldlength=128", {"workload.properties.fieldlength": 128}, noisy_series(20_000, 10))],
    )
    b.cells[0].phases["run"].properties["redis.datatype"] = "string"
    for run in (a, b):
        run.tags["suite"] = "exp2"
    with SQLiteResultStore(store_path) as store:
        store.save_run(a)
        store.save_run(b)
    assert main(["table", "20260101-000000", "--store", str(store_path), "--metric", "throughput"]) == 0
    assert "hash" in capsys.readouterr().out
    code = main(["table", "exp2", "--store", str(store_path), "--rows", "datatype", "--cols", "fieldlength",
                 "--metric", "throughput", "--format", "csv"])  # fmt: skip
    assert code == 0
    rows = list(csv.reader(io.StringIO(capsys.readouterr().out)))
    assert [r[0] for r in rows[1:]] == ["hash", "hash", "zset", "zset", "string", "string"]
    assert rows[-1][2] != "" and rows[-1][3] == ""  # the string run has only 128-byte values
    assert main(["table", "nope", "--store", str(store_path)]) != 0
