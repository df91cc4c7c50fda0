"""The price dimensions beyond instance hours: Aurora I/O-Optimized instances and the cluster volume,
Aurora Standard I/O requests, EBS provisioned IOPS (io1, gp3 above 3,000) and gp3 throughput above
125 MiB/s, MemoryDB data written, runner <-> target transfer across AZs. The filters are checked as
sent to ``pricing:GetProducts`` (botocore Stubber: moto has no Pricing backend) and answered with the
Price List entries of tests/data/pricing; every AWS example, in its own region, gets a complete
estimate from those excerpts; and an API that cannot be reached hands over to the packaged copy."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber

from benchwright.experiments.budget import estimate_spec, region_of
from benchwright.providers.aws.pricelist import (
    FallbackPriceList,
    PackagedPriceList,
    PriceNotFound,
    packaged_copy,
)
from benchwright.providers.aws.pricing import AwsPriceBook, ExcerptPriceList, Lines, PriceList, matches
from benchwright.providers.aws.targets.kinds.ec2.spec import Ec2Volume
from benchwright.providers.aws.usage_prices import usage_lines
from benchwright.spec import BenchmarkSpec, load_suite, parse_suite, parse_target

ROOT = Path(__file__).resolve().parents[2]
PRICES = ROOT / "tests" / "data" / "pricing"
# every spec the packaged copy must price completely: the examples and the default nightly suite
PRICED_SPECS = [*sorted((ROOT / "examples").glob("*.aws.yaml")), ROOT / "infra" / "nightly.yaml"]


def answer(service: str, filters: dict[str, str]) -> dict[str, Any]:
    data = json.loads((PRICES / f"{service}.json").read_text())
    found = [i for i in data["PriceList"] if matches(i, filters)]
    assert len(found) == 1, (service, filters, len(found))  # the filters pick exactly one row
    return {"FormatVersion": "aws_v1", "PriceList": found}


def expect(stub: Stubber, service: str, region: dict[str, str] | None = None, **filters: str) -> None:
    filters = {**(region or {"regionCode": "us-east-1"}), **filters}
    stub.add_response(
        "get_products",
        answer(service, filters),
        {
            "ServiceCode": service,
            "Filters": [{"Type": "TERM_MATCH", "Field": k, "Value": v} for k, v in sorted(filters.items())],
            "FormatVersion": "aws_v1",
            "MaxResults": 10,
        },
    )


@pytest.fixture
def pricing() -> Any:
    return boto3.client(
        "pricing", region_name="us-east-1", aws_access_key_id="testing", aws_secret_access_key="testing"
    )


def book_for(pricing: Any) -> AwsPriceBook:
    return AwsPriceBook(PriceList(lambda service: pricing, "us-east-1"))


def spec_of(target: dict[str, Any], runner: dict[str, Any] | None = None, **workload: Any) -> BenchmarkSpec:
    return parse_suite(
        {
            "name": "priced",
            "target": target,
            "runner": runner or {"platform": "fargate", "placement": "same-az"},
            "workload": {"name": "ycsb", **workload},
        }
    ).benchmarks[0]


AURORA = {
    "provider": "aurora",
    "engine": "postgres",
    "engine_version": "16.4",
    "instance_class": "db.r6g.2xlarge",
    "storage_type": "aurora-iopt1",
}


def test_aurora_io_optimized_instances_and_cluster_volume(pricing: Any) -> None:
    book = book_for(pricing)
    with Stubber(pricing) as stub:
        expect(
            stub,
            "AmazonRDS",
            instanceType="db.r6g.2xlarge",
            databaseEngine="Aurora PostgreSQL",
            deploymentOption="Single-AZ",
            usagetype="InstanceUsageIOOptimized:db.r6g.2xlarge",
        )
        expect(
            stub, "AmazonRDS", productFamily="Database Storage", usagetype="Aurora:IO-OptimizedStorageUsage"
        )
        items = book.target_items(parse_target(AURORA), 3600)
        stub.assert_no_pending_responses()
    assert items["aurora 1 x db.r6g.2xlarge (I/O-Optimized)"] == pytest.approx(1.3494)
    assert items["aurora storage 10 GB (I/O-Optimized)"] == pytest.approx(10 * 0.225 / 730)
    with Stubber(pricing) as stub:  # Standard: the InstanceUsage row, and the standard volume
        expect(
            stub,
            "AmazonRDS",
            instanceType="db.r6g.2xlarge",
            databaseEngine="Aurora PostgreSQL",
            deploymentOption="Single-AZ",
            usagetype="InstanceUsage:db.r6g.2xlarge",
        )
        expect(stub, "AmazonRDS", productFamily="Database Storage", usagetype="Aurora:StorageUsage")
        items = book.target_items(parse_target({**AURORA, "storage_type": "aurora"}), 3600)
    assert items["aurora 1 x db.r6g.2xlarge (Standard)"] == pytest.approx(1.038)
    assert items["aurora storage 10 GB (Standard)"] == pytest.approx(10 * 0.10 / 730)


def test_aurora_serverless_v2_is_priced_at_its_storage_configuration(pricing: Any) -> None:
    """The ACU row is picked by usage type: I/O-Optimized ACUs cost more than Standard ones (the
    earlier lookup filtered on productFamily alone, which both rows share, and priced no volume)."""
    serverless = {**AURORA, "instance_class": "db.serverless", "serverless_v2": {"min_acu": 1, "max_acu": 4}}
    with Stubber(pricing) as stub:
        expect(
            stub,
            "AmazonRDS",
            databaseEngine="Aurora PostgreSQL",
            usagetype="Aurora:ServerlessV2IOOptimizedUsage",
        )
        expect(
            stub, "AmazonRDS", productFamily="Database Storage", usagetype="Aurora:IO-OptimizedStorageUsage"
        )
        items = book_for(pricing).target_items(parse_target(serverless), 3600)
        stub.assert_no_pending_responses()
    assert items["aurora serverless v2 1 x 4 ACU (max, I/O-Optimized)"] == pytest.approx(4 * 0.16)
    assert items["aurora storage 10 GB (I/O-Optimized)"] == pytest.approx(10 * 0.225 / 730)


def test_aurora_standard_io_requests_are_estimated_from_the_workload_before_the_run(pricing: Any) -> None:
    spec = spec_of(
        {**AURORA, "storage_type": "aurora"},
        properties={"recordcount": 1000, "operationcount": 100000, "fieldcount": 10, "fieldlength": 100},
    )
    lines = Lines()
    with Stubber(pricing) as stub:
        expect(stub, "AmazonRDS", productFamily="System Operation", usagetype="Aurora:StorageIOUsage")
        usage_lines(book_for(pricing), spec, None, lines)
        stub.assert_no_pending_responses()
    # load: 1,000 inserts; run: 100,000 ops at 95% reads / 5% updates; one I/O per write (<= 4 KiB)
    # and one per read (every read a cache miss: the upper bound)
    ios = 1000 + 100000 * 0.05 + 100000 * 0.95
    name = "aurora I/O requests (estimate)"
    assert lines.items[name] == pytest.approx(ios * 0.20 / 1e6)
    assert "estimate from the workload" in lines.notes[name] and "load 1,000 ops" in lines.notes[name]


def test_aurora_standard_io_requests_are_measured_after_the_run_when_cloudwatch_has_them() -> None:
    from benchwright.results import MetricPoint, MetricSeries
    from benchwright.runs import CellResult

    spec = spec_of({**AURORA, "storage_type": "aurora"})
    cell = CellResult(
        cell_id="c1",
        metrics=[
            MetricSeries(
                name=name,
                unit="Count",
                source="cloudwatch:AWS/RDS:DBClusterIdentifier=bw-1",
                points=[MetricPoint(t=0, value=value), MetricPoint(t=300, value=value)],
            )
            for name, value in (("VolumeReadIOPs", 1_000_000.0), ("VolumeWriteIOPs", 500_000.0))
        ],
    )
    lines = Lines()
    usage_lines(AwsPriceBook(ExcerptPriceList.from_directory(str(PRICES))), spec, cell, lines)
    name = "aurora I/O requests (measured)"
    assert lines.items[name] == pytest.approx(3_000_000 * 0.20 / 1e6)
    assert "VolumeReadIOPs + VolumeWriteIOPs" in lines.notes[name]


def test_cross_az_transfer_is_priced_only_when_the_runner_is_in_another_az(pricing: Any) -> None:
    rds = {
        "provider": "rds",
        "engine": "postgres",
        "engine_version": "16.4",
        "instance_class": "db.m6i.large",
        "storage": {"type": "gp3", "size_gb": 100},
        "availability_zone": "us-east-1a",
    }
    props = {"recordcount": 1000, "operationcount": 10000, "fieldcount": 1, "fieldlength": 1000}
    same = spec_of(rds, {"platform": "fargate", "placement": "us-east-1a"}, properties=props)
    lines = Lines()
    usage_lines(book_for(pricing), same, None, lines)  # no lookup at all: a Stubber is not even needed
    assert lines.items == {}
    other = spec_of(rds, {"platform": "fargate", "placement": "other-az"}, properties=props)
    with Stubber(pricing) as stub:
        expect(
            stub,
            "AWSDataTransfer",
            region={"fromRegionCode": "us-east-1", "toRegionCode": "us-east-1"},
            transferType="IntraRegion",
            usagetype="DataTransfer-Regional-Bytes",
        )
        usage_lines(book_for(pricing), other, None, lines)
        stub.assert_no_pending_responses()
    name = "cross-AZ transfer runner <-> target (estimate)"
    # load 1,000 x 1,000 B + run 9,500 reads x 1,000 B + 500 updates x 1,000 B, keys 23 B each op
    moved = (1000 * 1000 + 9500 * 1000 + 500 * 1000 + 11000 * 23) / 1024**3
    assert lines.items[name] == pytest.approx(2 * moved * 0.01)  # $0.01/GB out and $0.01/GB in
    assert lines.notes[name].startswith("Price List API: ")
    assert "runner placement other-az" in lines.notes[name] and "estimate" in lines.notes[name]


def test_memorydb_data_written_is_found_by_its_unit_over_every_page(pricing: Any) -> None:
    memorydb = {
        "provider": "memorydb",
        "engine": "redis",
        "engine_version": "7.1",
        "node_type": "db.r7g.large",
    }
    spec = spec_of(memorydb, properties={"recordcount": 1000}, phases={"run": None})  # the load alone
    rows = json.loads((PRICES / "AmazonMemoryDB.json").read_text())["PriceList"]
    page = {"ServiceCode": "AmazonMemoryDB", "FormatVersion": "aws_v1", "MaxResults": 100}
    filters = [{"Type": "TERM_MATCH", "Field": "regionCode", "Value": "us-east-1"}]
    lines = Lines()
    with Stubber(pricing) as stub:  # two pages: the rate is on the second
        stub.add_response(
            "get_products",
            {"FormatVersion": "aws_v1", "PriceList": rows[:2], "NextToken": "p2"},
            {**page, "Filters": filters},
        )
        stub.add_response(
            "get_products",
            {"FormatVersion": "aws_v1", "PriceList": rows[2:]},
            {**page, "Filters": filters, "NextToken": "p2"},
        )
        usage_lines(book_for(pricing), spec, None, lines)
        stub.assert_no_pending_responses()
    name = "memorydb data written (Redis, estimate)"
    assert lines.items[name] == pytest.approx(1000 * 1000 / 1024**3 * 0.20)  # 10 fields x 100 B a record
    valkey = spec_of(
        {**memorydb, "cache_engine": "valkey"}, properties={"recordcount": 1000}, phases={"run": None}
    )
    lines = Lines()
    usage_lines(AwsPriceBook(ExcerptPriceList.from_directory(str(PRICES))), valkey, None, lines)
    assert lines.items["memorydb data written (Valkey, estimate)"] == 0.0  # the free first 10 TB


def test_a_workload_without_a_model_makes_the_usage_estimate_incomplete() -> None:
    spec = parse_suite(
        {
            "name": "tpcc-aurora",
            "target": {**AURORA, "storage_type": "aurora"},
            "runner": {"platform": "fargate"},
            "workload": {"name": "tpcc", "properties": {"tpcc.warehouses": 1}},
        }
    ).benchmarks[0]
    book = AwsPriceBook(ExcerptPriceList.from_directory(str(PRICES)))
    lines = book.lines(spec, None, 3600)
    assert any("aurora I/O requests: not estimated for workload tpcc" in m for m in lines.missing)
    assert "aurora 1 x db.r6g.2xlarge (Standard)" in lines.items  # the rest is still priced


@pytest.mark.parametrize(
    ("volume", "lookups", "expected"),
    [
        (
            {"type": "gp3", "size_gb": 500, "iops": 6000, "throughput_mbps": 250},
            [
                ("System Operation", {"volumeApiName": "gp3", "usagetype": "EBS:VolumeP-IOPS.gp3"}),
                (
                    "Provisioned Throughput",
                    {"volumeApiName": "gp3", "usagetype": "EBS:VolumeP-Throughput.gp3"},
                ),
            ],
            {
                "ebs 3 x gp3 provisioned IOPS 3000": 3 * 3000 * 0.005 / 730,
                "ebs 3 x gp3 throughput 125 MiB/s": 3 * 125 * 0.04 / 730,
            },
        ),
        (
            {"type": "io1", "size_gb": 200, "iops": 6000},
            [("System Operation", {"volumeApiName": "io1", "usagetype": "EBS:VolumeP-IOPS.piops"})],
            {"ebs 3 x io1 provisioned IOPS 6000": 3 * 6000 * 0.065 / 730},
        ),
        ({"type": "gp3", "size_gb": 100, "iops": 3000}, [], {}),  # within what gp3 includes
    ],
    ids=["gp3-above-baseline", "io1", "gp3-baseline"],
)
def test_ebs_provisioned_iops_and_throughput(
    pricing: Any,
    volume: dict[str, Any],
    lookups: list[tuple[str, dict[str, str]]],
    expected: dict[str, float],
) -> None:
    with Stubber(pricing) as stub:
        for family, filters in lookups:
            expect(stub, "AmazonEC2", productFamily=family, **filters)
        items = book_for(pricing).ebs_performance_items(Ec2Volume.model_validate(volume), 3, 1.0)
        stub.assert_no_pending_responses()
    assert items == pytest.approx(expected)


def test_rds_gp3_iops_are_billed_above_what_the_volume_size_includes() -> None:
    """RDS gp3 includes 3,000 IOPS below 400 GB and 12,000 from 400 GB on: 12,000 IOPS on 500 GB cost
    nothing extra (the earlier book billed 9,000 of them)."""
    book = AwsPriceBook(ExcerptPriceList.from_directory(str(PRICES)))
    rds = {
        "provider": "rds",
        "engine": "postgres",
        "engine_version": "16.4",
        "instance_class": "db.m6i.large",
    }
    big = book.target_items(
        parse_target({**rds, "storage": {"type": "gp3", "size_gb": 500, "iops": 12000}}), 3600
    )
    assert not any("provisioned IOPS" in k for k in big)
    more = book.target_items(
        parse_target({**rds, "storage": {"type": "gp3", "size_gb": 500, "iops": 15000}}), 3600
    )
    assert more["rds provisioned IOPS 15000"] == pytest.approx(3000 * 0.02 / 730)


def test_an_unsized_fargate_runner_is_priced_at_the_stack_task_definition_size() -> None:
    """The launcher sends no size override for an unsized runner, so it runs at the task definition's
    2 vCPU / 4 GB (infra/config.py); the earlier book priced 1 vCPU / 2 GB."""
    from benchwright.spec import RunnerSpec
    from infra.config import RunnerConfig

    book = AwsPriceBook(ExcerptPriceList.from_directory(str(PRICES)))
    items = book.runner_items(RunnerSpec(platform="fargate"), 3600)
    assert items == {"fargate runner 1 x 2 vCPU / 4 GB": pytest.approx(2 * 0.04048 + 4 * 0.004445)}
    stack = RunnerConfig()
    assert (stack.fargate_cpu / 1024, stack.fargate_memory_mib) == (2.0, 4096)


def test_an_unreachable_api_hands_over_to_the_packaged_copy_and_says_so(pricing: Any) -> None:
    prices = FallbackPriceList(
        PriceList(lambda service: pricing, "us-east-1"), PackagedPriceList("us-east-1")
    )
    with Stubber(pricing) as stub:  # one refused call, then no more calls: the copy answers
        stub.add_client_error("get_products", "AccessDeniedException", "not allowed", 400)
        price = prices.lookup("AmazonEC2", {"instanceType": "c6i.8xlarge", "operatingSystem": "Linux",
                                            "tenancy": "Shared", "preInstalledSw": "NA",
                                            "capacitystatus": "Used"})  # fmt: skip
        again = prices.lookup("AmazonEC2", {"instanceType": "c6i.8xlarge", "operatingSystem": "Linux",
                                            "tenancy": "Shared", "preInstalledSw": "NA",
                                            "capacitystatus": "Used"})  # fmt: skip
        stub.assert_no_pending_responses()
    date = packaged_copy()["date"]
    assert price.usd == pytest.approx(1.36) and price.source == f"cached price list of {date}" == again.source
    assert prices.unreachable and "AccessDeniedException" in prices.unreachable
    with Stubber(pricing) as stub:  # an API that answers "no such product" is not second-guessed
        stub.add_response("get_products", {"FormatVersion": "aws_v1", "PriceList": []})
        fresh = FallbackPriceList(
            PriceList(lambda service: pricing, "us-east-1"), PackagedPriceList("us-east-1")
        )
        with pytest.raises(PriceNotFound):
            fresh.lookup("AmazonEC2", {"instanceType": "c6i.8xlarge"})
        assert fresh.unreachable is None


def test_the_packaged_copy_holds_exactly_the_rows_the_examples_need_from_the_excerpts() -> None:
    """The copy is made by price_snapshot from tests/data/pricing: the same rows, and every one of them
    with its provenance (see tests/data/pricing/sources.json)."""
    from benchwright.providers.aws.price_snapshot import snapshot

    copy = packaged_copy()
    specs = [str(p) for p in PRICED_SPECS]
    made = snapshot(specs, str(PRICES), copy["date"], copy["how"])
    assert made["services"] == copy["services"]
    assert made["sources"] == copy["sources"]
    assert "no provenance recorded" not in json.dumps(copy["sources"])


@pytest.mark.parametrize("path", PRICED_SPECS, ids=lambda p: p.stem)
def test_every_aws_example_in_its_own_region_gets_a_complete_estimate(path: Path) -> None:
    """exp2 pins eu-west-1a: its prices come from the eu-west-1 entries of the excerpts. The default
    nightly suite is priced too: the API's cost cap refuses what it cannot estimate (issue 30)."""
    suite = load_suite(path)
    for spec in suite.benchmarks:
        budget = estimate_spec(spec, ExcerptPriceList.from_directory(str(PRICES), region_of(spec)))
        assert budget.missing == [], budget.missing
        assert budget.cells and all(c.usd > 0 for c in budget.cells)
        packaged = estimate_spec(spec, PackagedPriceList(region_of(spec)))
        assert packaged.missing == [] and packaged.total_usd == pytest.approx(budget.total_usd)


def test_the_runner_is_priced_without_the_target_provisioning_and_teardown() -> None:
    """The runner starts once the target is ready and is stopped before teardown: a one-cell spec's
    runner line covers its phases, the target's covers provisioning and teardown too."""
    from benchwright.providers.aws.targets.kinds.aurora.spec import AuroraTarget

    spec = spec_of(
        {**AURORA, "storage_type": "aurora-iopt1"},
        {"platform": "ec2", "placement": "same-az", "size": {"instance_type": "c6i.8xlarge"}},
        properties={"recordcount": 1000},
        phases={"run": {"duration_s": 600}},
    )
    budget = estimate_spec(spec, ExcerptPriceList.from_directory(str(PRICES)))
    (cell,) = budget.cells
    runner_s = cell.seconds - AuroraTarget.facts.provision_s - AuroraTarget.facts.teardown_s
    assert 600 <= runner_s < 700
    assert cell.items["ec2 runner 1 x c6i.8xlarge"] == pytest.approx(runner_s / 3600 * 1.36, abs=1e-4)
    assert cell.items["aurora 1 x db.r6g.2xlarge (I/O-Optimized)"] == pytest.approx(
        cell.seconds / 3600 * 1.3494, abs=1e-4
    )
    assert "less the target's provisioning and teardown" in cell.notes["ec2 runner 1 x c6i.8xlarge"]


def test_tpcb_is_estimated_per_transaction_from_pgbench_s_script() -> None:
    """One TPC-B transaction: 1 SELECT and 3 UPDATEs + 1 INSERT; the load writes scale x 100,000 rows."""
    from benchwright.providers.aws.usage import planned

    spec = parse_suite(
        {
            "name": "tpcb-aurora",
            "target": {**AURORA, "storage_type": "aurora"},
            "runner": {"platform": "fargate"},
            "workload": {
                "name": "tpcb",
                "properties": {"tpcb.scale": 2},
                "phases": {"run": {"operation_count": 1000}},
            },
        }
    ).benchmarks[0]
    found = planned(spec)
    assert found is not None
    assert (found.reads, found.writes) == (1000, 2 * 100_000 + 4 * 1000)
