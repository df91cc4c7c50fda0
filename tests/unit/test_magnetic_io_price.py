"""Issue 31: RDS magnetic storage's I/O requests priced in the run's cost (AmazonRDS
RDS:StorageIOUsage, us-east-1 $0.10 per million, from the price list that ships with benchwright):
estimated before the run from the volume's documented average, measured after it from CloudWatch."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from benchwright.experiments.budget import estimate_spec
from benchwright.providers.aws.pricelist import ExcerptPriceList, PackagedPriceList, packaged_copy
from benchwright.providers.aws.pricing import AwsPriceBook
from benchwright.results import MetricPoint, MetricSeries
from benchwright.runs import CellResult
from benchwright.spec import BenchmarkSpec, load_suite, parse_suite

ROOT = Path(__file__).resolve().parents[2]
PRICES = ROOT / "tests" / "data" / "pricing"
PER_REQUEST = 0.0000001  # the packaged us-east-1 row: $0.10 per million
ESTIMATE = "rds magnetic I/O requests (estimate)"
MEASURED = "rds magnetic I/O requests (measured)"


def magnetic(storage: dict[str, Any] | None = None, **target: Any) -> BenchmarkSpec:
    fields = {"provider": "rds", "engine": "mysql", "engine_version": "8.0.39", "instance_class": "db.t3.small",
              "availability_zone": "us-east-1a", "storage": storage or {"type": "magnetic", "size_gb": 100},
              **target}  # fmt: skip
    return parse_suite({
        "name": "mag",
        "target": {k: v for k, v in fields.items() if v is not None},
        "runner": {"platform": "fargate", "placement": "same-az"},
        "workload": {"name": "tpcc", "properties": {"tpcc.warehouses": 1}},
    }).benchmarks[0]  # fmt: skip


def io_cell(read: float, write: float, points: int = 10) -> CellResult:
    """A cell whose DB instance's CloudWatch ReadIOPS/WriteIOPS are 60-second averages."""
    return CellResult(cell_id="c1", metrics=[
        MetricSeries(name=name, unit="Count/Second", source="cloudwatch:AWS/RDS:DBInstanceIdentifier=bw-1",
                     points=[MetricPoint(t=60.0 * i, value=value) for i in range(points)])
        for name, value in (("ReadIOPS", read), ("WriteIOPS", write))
    ])  # fmt: skip


def packaged() -> AwsPriceBook:
    return AwsPriceBook(PackagedPriceList("us-east-1"))


def test_before_the_run_the_requests_are_the_documented_average_over_the_target_time() -> None:
    lines = packaged().lines(magnetic(), None, 3600.0)
    assert lines.missing == []
    assert lines.items[ESTIMATE] == pytest.approx(100 * 3600 * PER_REQUEST)  # 0.036 USD
    note = lines.notes[ESTIMATE]
    assert f"cached price list of {packaged_copy()['date']}" in note
    assert "360,000 requests = 100 IOPS x 3,600 s" in note and "0.1 USD per million" in note
    assert "ebs-volume-types" in note


def test_after_the_run_the_requests_are_cloudwatchs_read_and_write_iops() -> None:
    lines = packaged().lines(magnetic(), io_cell(60.0, 40.0), 3600.0)
    requests = (60.0 + 40.0) * 60 * 10  # ten 60-second points of 100 I/O per second
    assert lines.items[MEASURED] == pytest.approx(requests * PER_REQUEST)
    assert ESTIMATE not in lines.items
    assert "60,000 requests" in lines.notes[MEASURED]


def test_a_missing_series_falls_back_to_the_estimate_not_to_half_a_count() -> None:
    cell = io_cell(60.0, 40.0)
    cell.metrics = cell.metrics[:1]  # ReadIOPS only
    lines = packaged().lines(magnetic(), cell, 1800.0)
    assert MEASURED not in lines.items and lines.items[ESTIMATE] == pytest.approx(100 * 1800 * PER_REQUEST)


def test_other_storage_has_no_request_line_and_multi_az_magnetic_is_not_priced() -> None:
    gp2 = packaged().lines(magnetic({"type": "gp2", "size_gb": 100}), None, 3600.0)
    assert not any("magnetic" in k for k in gp2.items) and gp2.missing == []
    multi = packaged().lines(magnetic(multi_az=True, availability_zone=None), io_cell(1.0, 1.0), 3600.0)
    assert not any("magnetic I/O" in k for k in multi.items)
    assert any("not priced for Multi-AZ" in m for m in multi.missing), multi.missing


def test_a_region_without_the_row_is_incomplete_naming_the_usage_type() -> None:
    spec = magnetic(availability_zone="eu-west-1a")
    lines = AwsPriceBook(ExcerptPriceList.from_directory(str(PRICES), "eu-west-1")).lines(spec, None, 3600.0)
    assert any("EU-RDS:StorageIOUsage" in m for m in lines.missing), lines.missing


def test_experiment_3s_magnetic_cells_carry_the_line_in_validate_s_estimate() -> None:
    (spec,) = load_suite(ROOT / "examples" / "exp3-rds-mysql-storage.aws.yaml").benchmarks
    budget = estimate_spec(spec, ExcerptPriceList.from_directory(str(PRICES), "us-east-1"))
    assert budget.missing == []
    on_magnetic = [c for c in budget.cells if "magnetic" in c.cell_id]
    assert len(on_magnetic) == 4 and len(budget.cells) == 16
    for cell in budget.cells:
        assert (ESTIMATE in cell.items) == (cell in on_magnetic), cell.cell_id
