"""The price dimensions beyond instance hours: Aurora I/O-Optimized instances and the cluster volume,
EBS provisioned IOPS (io1, gp3 above 3,000) and gp3 throughput above 125 MiB/s. The filters are
checked as sent to ``pricing:GetProducts`` (botocore Stubber: moto has no Pricing backend) and answered
with the Price List entries of tests/data/pricing; and every AWS example, in its own region, gets a
complete estimate from those excerpts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber

from benchwright.experiments.budget import estimate_spec, region_of
from benchwright.providers.aws.pricing import AwsPriceBook, ExcerptPriceList, PriceList, matches
from benchwright.spec import load_suite

ROOT = Path(__file__).resolve().parents[2]
PRICES = ROOT / "tests" / "data" / "pricing"


def answer(service: str, filters: dict[str, str]) -> dict[str, Any]:
    data = json.loads((PRICES / f"{service}.json").read_text())
    found = [i for i in data["PriceList"] if matches(i, filters)]
    assert len(found) == 1, (service, filters, len(found))  # the filters pick exactly one row
    return {"FormatVersion": "aws_v1", "PriceList": found}


def expect(stub: Stubber, service: str, **filters: str) -> None:
    filters = {"regionCode": "us-east-1", **filters}
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


def test_aurora_io_optimized_instances_and_cluster_volume(pricing: Any) -> None:
    book = AwsPriceBook(PriceList(lambda service: pricing, "us-east-1"))  # type: ignore[arg-type]
    target = {
        "provider": "aurora",
        "engine": "postgres",
        "instance_class": "db.r6g.2xlarge",
        "storage_type": "aurora-iopt1",
    }
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
        items = book.target_items(target, 3600)
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
        items = book.target_items({**target, "storage_type": "aurora"}, 3600)
    assert items["aurora 1 x db.r6g.2xlarge (Standard)"] == pytest.approx(1.038)
    assert items["aurora storage 10 GB (Standard, I/O requests not included)"] == pytest.approx(
        10 * 0.10 / 730
    )


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
    book = AwsPriceBook(PriceList(lambda service: pricing, "us-east-1"))  # type: ignore[arg-type]
    with Stubber(pricing) as stub:
        for family, filters in lookups:
            expect(stub, "AmazonEC2", productFamily=family, **filters)
        items = book.ebs_performance_items(volume, 3, 1.0)
        stub.assert_no_pending_responses()
    assert items == pytest.approx(expected)


@pytest.mark.parametrize("path", sorted((ROOT / "examples").glob("*.aws.yaml")), ids=lambda p: p.stem)
def test_every_aws_example_in_its_own_region_gets_a_complete_estimate(path: Path) -> None:
    """exp2 pins eu-west-1a: its prices come from the eu-west-1 entries of the excerpts."""
    suite = load_suite(path)
    for spec in suite.benchmarks:
        budget = estimate_spec(spec, ExcerptPriceList.from_directory(str(PRICES), region_of(spec)))
        assert budget.missing == [], budget.missing
        assert budget.cells and all(c.usd > 0 for c in budget.cells)
