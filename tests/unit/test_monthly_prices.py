"""Issue 31 part 6: the monthly price of keeping a target configuration (the seeds' price tables of
experiments 3 and 4), in `benchwright table --metric monthly_usd` and the HTML report.

The hand-computed cases use fixture rows made here in the Price List's shape: their prices are
round numbers for the arithmetic, not a claim about AWS. The packaged-list cases use the copy that
ships with benchwright, whose rows say how far they are confirmed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from benchwright.cli import main
from benchwright.providers.aws.monthly import SECONDS_PER_MONTH, MonthlyPricer
from benchwright.providers.aws.pricelist import ExcerptPriceList, PackagedPriceList, packaged_copy
from benchwright.providers.aws.targets.kinds.ec2.spec import Ec2Target
from benchwright.providers.aws.targets.kinds.rds.spec import RdsTarget
from benchwright.providers.local.sqlite_store import SQLiteResultStore
from benchwright.report.html import render_html
from benchwright.report.sample import make_run, noisy_series
from benchwright.report.table import build_table, render
from benchwright.results import MetricPoint, MetricSeries
from benchwright.runs import RunRecord
from benchwright.spec import expand_matrix, parse_spec

FIXTURE = "fixture rows of this test"


def row(sku: str, family: str, usd: float, unit: str, **attributes: str) -> dict[str, Any]:
    """One GetProducts PriceList entry (us-east-1) with a single on-demand price dimension."""
    return {
        "product": {"sku": sku, "productFamily": family, "attributes": {"regionCode": "us-east-1", **attributes}},
        "terms": {"OnDemand": {f"{sku}.T": {"priceDimensions": {f"{sku}.T.D": {
            "unit": unit, "pricePerUnit": {"USD": str(usd)}}}}}},
    }  # fmt: skip


MYSQL = {"databaseEngine": "MySQL"}
SINGLE = {"deploymentOption": "Single-AZ", **MYSQL}
MULTI = {"deploymentOption": "Multi-AZ", **MYSQL}
SINGLE_ROWS = [
    row("M5L", "Database Instance", 0.171, "Hrs", instanceType="db.m5.large",
        usagetype="InstanceUsage:db.m5.large", **SINGLE),
    row("GP2", "Database Storage", 0.115, "GB-Mo", volumeType="General Purpose", **SINGLE),
    row("GP3", "Database Storage", 0.115, "GB-Mo", volumeType="General Purpose-GP3", **SINGLE),
    row("GP3IOPS", "Provisioned IOPS", 0.02, "IOPS-Mo", volumeType="General Purpose-GP3", **SINGLE),
    row("IO1", "Database Storage", 0.125, "GB-Mo", volumeType="Provisioned IOPS", **SINGLE),
    row("IO1IOPS", "Provisioned IOPS", 0.10, "IOPS-Mo", volumeType="Provisioned IOPS", **SINGLE),
    row("MAG", "Database Storage", 0.10, "GB-Mo", volumeType="Magnetic", **SINGLE),
    row("MAGIO", "System Operation", 0.0000001, "IOs", usagetype="RDS:StorageIOUsage"),
]  # fmt: skip
MULTI_ROWS = [
    row("M5LMAZ", "Database Instance", 0.342, "Hrs", instanceType="db.m5.large",
        usagetype="Multi-AZUsage:db.m5.large", **MULTI),
    row("GP2MAZ", "Database Storage", 0.23, "GB-Mo", volumeType="General Purpose", **MULTI),
]  # fmt: skip


def pricer(rows: list[dict[str, Any]]) -> MonthlyPricer:
    return MonthlyPricer(ExcerptPriceList({"AmazonRDS": {"PriceList": rows}}, "us-east-1", FIXTURE))


def rds(storage: dict[str, Any], cls: str = "db.m5.large", **extra: Any) -> RdsTarget:
    return RdsTarget.model_validate({"provider": "rds", "engine": "mysql", "engine_version": "8.0.39",
                                     "instance_class": cls, "storage": storage, **extra})  # fmt: skip


def test_gp2_100_gb_is_the_instance_for_730_hours_plus_its_gb_months() -> None:
    price = pricer(SINGLE_ROWS).price(rds({"type": "gp2", "size_gb": 100}))
    assert price is not None
    assert price.part_usd("server") == pytest.approx(124.83)  # 0.171 x 730
    assert price.part_usd("disk") == pytest.approx(11.50)  # 0.115 x 100
    assert price.part_usd("io") == 0.0  # gp2 has no provisioned IOPS: nothing billed, not "not priced"
    assert price.total == pytest.approx(136.33)
    server = price.lines[0]
    assert "AmazonRDS row M5L (InstanceUsage:db.m5.large, per Hrs)" in server.source
    assert FIXTURE in server.source and "730 h/month" in server.source
    assert price.notes == ["backups: off (backup_retention_days 0), nothing billed"]


def test_io1_1000_gb_10k_iops_bills_every_provisioned_iops() -> None:
    price = pricer(SINGLE_ROWS).price(rds({"type": "io1", "size_gb": 1000, "iops": 10000}))
    assert price is not None
    assert price.part_usd("disk") == pytest.approx(125.00)  # 0.125 x 1000
    assert price.part_usd("io") == pytest.approx(1000.00)  # 0.10 x 10,000
    assert price.total == pytest.approx(124.83 + 125.00 + 1000.00)
    assert "10000 IOPS-month" in price.lines[-1].source


def test_gp3_bills_only_the_iops_above_its_baseline() -> None:
    price = pricer(SINGLE_ROWS).price(rds({"type": "gp3", "size_gb": 400, "iops": 15000}))
    assert price is not None
    assert price.part_usd("io") == pytest.approx(60.0)  # (15,000 - 12,000 included) x 0.02
    assert "above the 12000 gp3 includes" in price.lines[-1].source


def test_multi_az_takes_the_multi_az_rows() -> None:
    price = pricer(SINGLE_ROWS + MULTI_ROWS).price(rds({"type": "gp2", "size_gb": 100}, multi_az=True))
    assert price is not None
    assert price.part_usd("server") == pytest.approx(249.66)  # 0.342 x 730
    assert price.part_usd("disk") == pytest.approx(23.00)  # 0.23 x 100
    assert "M5LMAZ" in price.lines[0].source and "GP2MAZ" in price.lines[1].source
    assert "2 x" not in price.lines[0].source


def test_multi_az_without_either_row_is_not_priced_naming_both() -> None:
    price = pricer(SINGLE_ROWS[:1]).price(rds({"type": "gp2", "size_gb": 100}, multi_az=True))
    assert price is not None
    disk = next(line for line in price.lines if line.part == "disk")
    assert disk.usd is None and price.total is None
    assert disk.source.startswith("not priced: no Multi-AZ row, nor a Single-AZ one: no on-demand price")
    assert "volumeType=General Purpose" in disk.source


def test_multi_az_without_its_rows_is_twice_single_az_and_says_so() -> None:
    price = pricer(SINGLE_ROWS).price(rds({"type": "gp2", "size_gb": 100}, multi_az=True))
    assert price is not None
    assert price.total == pytest.approx(2 * 124.83 + 2 * 11.50)
    for line in price.lines:
        assert line.source.startswith("2 x AmazonRDS row"), line.source
        assert "no Multi-AZ row" in line.source and "USER_OnDemandDBInstances" in line.source


def test_magnetic_io_requests_are_priced_from_the_observed_rate() -> None:
    price = pricer(SINGLE_ROWS).price(rds({"type": "magnetic", "size_gb": 100}), io_per_s=100.0)
    assert price is not None
    requests = 100.0 * SECONDS_PER_MONTH  # 262.8 million a month
    assert price.part_usd("io") == pytest.approx(requests * 0.0000001)  # 26.28 USD
    assert price.part_usd("io") == pytest.approx(26.28)
    assert "0.1 USD per million requests" in price.lines[-1].source
    assert price.total == pytest.approx(124.83 + 10.0 + 26.28)


def test_magnetic_without_an_io_series_is_not_priced_and_so_is_the_total() -> None:
    price = pricer(SINGLE_ROWS).price(rds({"type": "magnetic", "size_gb": 100}))
    assert price is not None
    assert price.part_usd("server") == pytest.approx(124.83)
    assert price.part_usd("io") is None and price.total is None
    assert price.missing == [
        "magnetic I/O requests: not priced: the run has no ReadIOPS/WriteIOPS series to rate it"
    ]


def test_a_price_the_list_lacks_is_not_priced_naming_the_key_never_zero() -> None:
    price = pricer(SINGLE_ROWS).price(rds({"type": "gp2", "size_gb": 100}, cls="db.x2iedn.32xlarge"))
    assert price is not None
    server = price.lines[0]
    assert server.usd is None
    assert "not priced: no on-demand price for AmazonRDS" in server.source
    assert "instanceType=db.x2iedn.32xlarge" in server.source
    assert price.part_usd("server") is None and price.total is None
    assert price.part_usd("disk") == pytest.approx(11.50)  # the rest is still priced


def test_backups_state_the_free_allowance_and_price_nothing() -> None:
    price = pricer(SINGLE_ROWS).price(rds({"type": "gp2", "size_gb": 100}, backup_retention_days=7))
    assert price is not None
    assert price.total == pytest.approx(136.33)
    assert price.notes == [
        "backups: 7 days kept; backup storage up to the provisioned 100 GB is free, beyond it not priced "
        "(it depends on how much the data changes)"
    ]


def test_the_packaged_list_prices_experiment_4s_ec2_configurations_with_its_date() -> None:
    data = packaged_copy()
    monthly = MonthlyPricer(PackagedPriceList("us-east-1", data), data["sources"])
    target = Ec2Target.model_validate({"provider": "ec2", "engine": "redis", "template": "redis-protocol",
        "instance_type": "t2.micro", "volume": {"type": "io1", "size_gb": 200, "iops": 3000}})  # fmt: skip
    price = monthly.price(target)
    assert price is not None
    assert price.part_usd("server") == pytest.approx(0.0116 * 730)
    assert price.part_usd("disk") == pytest.approx(0.125 * 200)
    assert price.part_usd("io") == pytest.approx(0.065 * 3000)
    assert price.total == pytest.approx(228.468)
    for line in price.lines:
        assert f"cached price list of {data['date']}" in line.source
        assert "unverified" in line.source  # the copy's own status for these rows


# ------------------------------------------------------------------ table and report
EXP3 = {
    "name": "exp3-price",
    "target": {"provider": "rds", "engine": "mysql", "engine_version": "8.0.39", "instance_class": "db.t3.small",
               "availability_zone": "us-east-1a", "storage": {"type": "gp2", "size_gb": 100}},
    "workload": {"name": "tpcc", "properties": {"tpcc.warehouses": 1}, "phases": {"run": {"duration_s": 600}}},
    "matrix": {"target.storage": [{"type": "magnetic", "size_gb": 100}, {"type": "gp2", "size_gb": 1000},
                                  {"type": "io1", "size_gb": 100, "iops": 3000}]},
}  # fmt: skip


def exp3_run(run_id: str = "exp3-1") -> RunRecord:
    """A stored AWS run of three storage configurations at ~1,000 ops/s each."""
    cells = [(c.cell_id, c.parameters, noisy_series(1000, 30, seed=i))
             for i, c in enumerate(expand_matrix(parse_spec(EXP3)))]  # fmt: skip
    record = make_run("exp3-price", run_id, cells)
    record.spec = EXP3
    return record


def test_the_table_metric_gives_the_seeds_layout_per_configuration(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    path = tmp_path / "results.sqlite"
    with SQLiteResultStore(path) as store:
        store.save_run(exp3_run())
    argv = ["table", "exp3-1", "--store", str(path), "--metric", "monthly_usd,ops_per_monthly_usd"]
    assert main([*argv, "--format", "json"]) == 0
    doc = __import__("json").loads(capsys.readouterr().out)
    rows = {r["storage"]: r for r in doc["rows"]}
    gp2 = rows["gp2 1000"]
    assert gp2["monthly_server_usd"] == pytest.approx(0.034 * 730)  # db.t3.small MySQL, packaged
    assert gp2["monthly_disk_usd"] == pytest.approx(115.0)  # 0.115 x 1000
    assert gp2["monthly_io_usd"] == 0.0
    assert gp2["monthly_total_usd"] == pytest.approx(139.82)
    run_ops = exp3_run().cells[1].measured
    assert run_ops is not None and run_ops.throughput is not None
    assert gp2["ops_per_monthly_usd"] == pytest.approx(run_ops.throughput / 139.82, rel=1e-3)
    io1 = rows["io1 100 3000"]
    assert io1["monthly_io_usd"] == pytest.approx(300.0)  # 0.10 x 3000, packaged
    assert io1["monthly_total_usd"] == pytest.approx(24.82 + 12.5 + 300.0)
    magnetic = rows["magnetic 100"]  # the run has no IOPS series to rate its I/O requests by
    assert magnetic["monthly_disk_usd"] == pytest.approx(10.0)
    assert magnetic["monthly_io_usd"] is None and magnetic["monthly_total_usd"] is None
    assert magnetic["ops_per_monthly_usd"] is None
    notes = "\n".join(doc["notes"])
    assert "db.t3.small gp2 1000 GB: rds db.t3.small Single-AZ 24.82 (AmazonRDS row 32C64C2EA6A51DF4" in notes
    assert "magnetic I/O requests (not priced: the run has no ReadIOPS/WriteIOPS series to rate it)" in notes
    assert main([*argv, "--format", "md"]) == 0
    md = capsys.readouterr().out
    assert "| server $/mo | disk $/mo | IOPS $/mo | total $/mo | ops/s per $/mo |" in md
    assert "| 139.82 |" in md


def test_magnetic_io_in_the_table_uses_the_runs_cloudwatch_series() -> None:
    record = exp3_run()
    magnetic = record.cells[0]
    for name, value in (("ReadIOPS", 60.0), ("WriteIOPS", 40.0)):
        magnetic.metrics.append(MetricSeries(name=name, unit="Count/Second", source="cloudwatch:AWS/RDS",
                                             points=[MetricPoint(t=float(t), value=value) for t in range(5)]))  # fmt: skip
    table = build_table([record], metrics=["monthly_usd"])
    notes = "\n".join(table.notes)
    line = notes.split("db.t3.small magnetic")[1].split("\n")[0]
    assert "no ReadIOPS/WriteIOPS series" not in line
    # the packaged us-east-1 row: $0.10 per million, 100 I/O per second kept up all month
    assert "magnetic I/O requests 26.28 (AmazonRDS row BWRDSMAGIO000001 (RDS:StorageIOUsage" in line
    assert "0.1 USD per million requests" in line and "263 million requests" in line
    values = {metric: v.mean for (rk, _ck, metric), v in table.cells.items() if "magnetic" in " ".join(rk)}
    assert values["monthly_io_usd"] == pytest.approx(26.28)
    assert values["monthly_total_usd"] == pytest.approx(0.034 * 730 + 10.0 + 26.28)


def test_the_report_has_the_monthly_section_only_for_aws_targets() -> None:
    html = render_html(exp3_run())
    assert '<h2 id="monthly-prices">Monthly price of each configuration</h2>' in html
    section = html[html.index('id="monthly-prices"') :]
    assert "139.82" in section and "cached price list of" in section
    local = make_run("local", "l1", [("c1", {}, noisy_series(1000, 30))])
    assert 'id="monthly-prices"' not in render_html(local)
    assert "| total $/mo |\n|---:|\n| - |" in render(
        build_table([local], metrics=["monthly_total_usd"]), "md"
    )


def test_an_ebs_magnetic_volume_bills_its_io_requests_per_million() -> None:
    rows = [
        row("T2M", "Compute Instance", 0.0116, "Hrs", instanceType="t2.micro", operatingSystem="Linux",
            tenancy="Shared", preInstalledSw="NA", capacitystatus="Used"),
        row("STD", "Storage", 0.05, "GB-Mo", volumeApiName="standard"),
        row("STDIO", "System Operation", 0.00000005, "IOs", usagetype="EBS:VolumeIOUsage"),
    ]  # fmt: skip
    monthly = MonthlyPricer(ExcerptPriceList({"AmazonEC2": {"PriceList": rows}}, "us-east-1", FIXTURE))
    target = Ec2Target.model_validate({"provider": "ec2", "engine": "redis", "template": "redis-protocol",
        "instance_type": "t2.micro", "volume": {"type": "standard", "size_gb": 100}})  # fmt: skip
    price = monthly.price(target, io_per_s=10.0)
    assert price is not None
    assert price.part_usd("disk") == pytest.approx(5.0)  # 0.05 x 100
    assert price.part_usd("io") == pytest.approx(10.0 * SECONDS_PER_MONTH * 0.00000005)  # 1.314 USD
    assert "0.05 USD per million requests" in price.lines[-1].source
    assert price.total == pytest.approx(8.468 + 5.0 + 1.314)


def test_a_cache_cluster_is_its_nodes_for_730_hours() -> None:
    from benchwright.providers.aws.targets.kinds.elasticache.spec import ElastiCacheTarget

    monthly = MonthlyPricer(PackagedPriceList("eu-west-1"))
    target = ElastiCacheTarget.model_validate({"provider": "elasticache", "engine": "redis", "engine_version": "7.1",
        "node_type": "cache.r7g.xlarge", "replicas": 1, "availability_zone": "eu-west-1a"})  # fmt: skip
    price = monthly.price(target)
    assert price is not None and price.configuration == "elasticache 2 x cache.r7g.xlarge"
    assert price.part_usd("server") == pytest.approx(2 * 0.485 * 730)  # 708.10
    assert price.part_usd("disk") == 0.0 and price.total == pytest.approx(708.10)


def test_a_stored_spec_that_no_longer_validates_says_so_instead_of_a_price() -> None:
    record = exp3_run("exp3-old")
    record.spec = {**EXP3, "target": {**EXP3["target"], "instance_class": "m5.large"}}  # no "db." prefix
    table = build_table([record], metrics=["monthly_total_usd"])
    assert all(v.mean is None for v in table.cells.values())
    assert "exp3-old: its stored spec no longer validates: no monthly price" in table.notes
