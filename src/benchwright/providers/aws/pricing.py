"""Price book from the AWS Price List API (``pricing:GetProducts``), on-demand USD.

Per-run cost = target time (instances / nodes, storage prorated from GB-month, provisioned IOPS and
throughput of RDS and EBS volumes, the Aurora cluster volume at its storage configuration)
+ runner time (Fargate vCPU and GB hours, or the EC2 instance) + the workflow itself (Lambda and
Step Functions, from ``workflow_cost``). Also ops per dollar and the monthly cost of running the
same cell every night. Prices are looked up once per process and cached.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from benchwright.errors import ProvisioningFailed
from benchwright.providers.aws.common import Clients, aws_call
from benchwright.providers.base import PriceBook
from benchwright.runs import CellResult, CostEstimate

HOURS_PER_MONTH = 730.0
RDS_MIN_BILLED_S = 600.0  # RDS and EC2 bill per second with a 10-minute (RDS) / 1-minute minimum
NIGHTS_PER_MONTH = 30

# Workflow cost model (us-east-1 list prices; Lambda arm64 is cheaper, we assume x86 to be safe).
SFN_PER_TRANSITION = 0.000025
LAMBDA_PER_GB_S = 0.0000166667
LAMBDA_PER_REQUEST = 0.0000002
LAMBDA_MEMORY_GB = 0.25
LAMBDA_AVG_S = 1.5

RDS_ENGINE = {"postgres": "PostgreSQL", "mysql": "MySQL"}
AURORA_ENGINE = {"postgres": "Aurora PostgreSQL", "mysql": "Aurora MySQL"}
RDS_VOLUME = {
    "gp2": "General Purpose",
    "gp3": "General Purpose-GP3",
    "io1": "Provisioned IOPS",
    "io2": "Provisioned IOPS-IO2",
    "magnetic": "Magnetic",
}
RDS_IOPS_FAMILY = {"io1": "Provisioned IOPS", "io2": "Provisioned IOPS", "gp3": "Provisioned IOPS"}
# EBS: the usage type's suffix of a volume type's provisioned IOPS; gp3 includes 3,000 IOPS, 125 MiB/s
EBS_IOPS_USAGE = {"io1": "piops", "io2": "io2", "gp3": "gp3"}
GP3_FREE_IOPS = 3000.0
GP3_FREE_MIBPS = 125.0
AURORA_MIN_GB = 10.0  # an Aurora cluster volume starts at 10 GB and grows with the data
# Usage types carry a region prefix except in us-east-1 (e.g. EU-Fargate-GB-Hours)
USAGE_PREFIX = {
    "us-east-1": "",
    "us-east-2": "USE2-",
    "us-west-2": "USW2-",
    "eu-west-1": "EU-",
    "eu-central-1": "EUC1-",
    "ap-northeast-1": "APN1-",
}


def workflow_cost(transitions: int, lambda_invocations: int, avg_s: float = LAMBDA_AVG_S) -> float:
    """Lambda + Step Functions (standard) cost of one execution."""
    return transitions * SFN_PER_TRANSITION + lambda_invocations * (
        LAMBDA_PER_REQUEST + avg_s * LAMBDA_MEMORY_GB * LAMBDA_PER_GB_S
    )


def on_demand_usd(price_item: str | Mapping[str, Any]) -> float:
    """The on-demand USD price of one Price List entry (the first non-zero price dimension)."""
    item = json.loads(price_item) if isinstance(price_item, str) else price_item
    prices = []
    for term in (item.get("terms", {}).get("OnDemand") or {}).values():
        for dim in (term.get("priceDimensions") or {}).values():
            usd = dim.get("pricePerUnit", {}).get("USD")
            if usd is not None:
                prices.append(float(usd))
    nonzero = [p for p in prices if p > 0]
    if not prices:
        raise ProvisioningFailed(
            f"price list item {item.get('product', {}).get('sku')} has no USD on-demand price"
        )
    return nonzero[0] if nonzero else prices[0]


class PriceList:
    """``get_products`` with TERM_MATCH filters; one cached unit price per query."""

    def __init__(self, clients: Clients, region: str) -> None:
        self.clients = clients
        self.region = region
        self._cache: dict[str, float] = {}

    def price(self, service: str, **attributes: str) -> float:
        filters = {"regionCode": self.region, **attributes}
        key = json.dumps([service, sorted(filters.items())])
        if key not in self._cache:
            response = aws_call(
                f"pricing get_products {service}",
                self.clients("pricing").get_products,
                ServiceCode=service,
                Filters=[{"Type": "TERM_MATCH", "Field": k, "Value": v} for k, v in sorted(filters.items())],
                FormatVersion="aws_v1",
                MaxResults=10,
            )
            items = response.get("PriceList") or []
            if not items:
                what = ", ".join(f"{k}={v}" for k, v in sorted(filters.items()))
                raise ProvisioningFailed(f"no on-demand price for {service} ({what})")
            self._cache[key] = on_demand_usd(items[0])
        return self._cache[key]


class AwsPriceBook(PriceBook):
    def __init__(self, prices: PriceList, transitions: int = 40, lambda_invocations: int = 14) -> None:
        self.prices = prices
        self.transitions = transitions
        self.lambda_invocations = lambda_invocations

    def estimate(
        self, spec: Mapping[str, Any], cell: CellResult | None, duration_s: float
    ) -> CostEstimate | None:
        target = dict(spec.get("target") or {})
        runner = dict(spec.get("runner") or {})
        items: dict[str, float] = {}
        missing: list[str] = []
        for part, items_of, params in (
            ("target", self.target_items, target),
            ("runner", self.runner_items, runner),
        ):
            try:
                items.update(items_of(params, duration_s))
            except ProvisioningFailed as exc:  # an unknown price never loses the run's results
                missing.append(f"{part}: {exc}")
        items["workflow (Lambda + Step Functions)"] = workflow_cost(self.transitions, self.lambda_invocations)
        total = round(sum(items.values()), 6)
        measured = cell.measured if cell is not None else None
        ops = measured.operations_total if measured is not None else 0
        return CostEstimate(
            total=total,
            items={k: round(v, 6) for k, v in items.items()},
            ops_per_dollar=(ops / total) if total > 0 and ops else None,
            monthly_nightly=round(total * NIGHTS_PER_MONTH, 4),
            source="aws-pricing-api" + (f" (incomplete: {'; '.join(missing)})" if missing else ""),
        )

    # target ----------------------------------------------------------------------------------
    def target_items(self, t: Mapping[str, Any], duration_s: float) -> dict[str, float]:
        provider = t.get("provider")
        hours = max(duration_s, RDS_MIN_BILLED_S) / 3600
        p = self.prices.price
        if provider == "rds":
            az = "Multi-AZ" if t.get("multi_az") else "Single-AZ"
            engine = RDS_ENGINE[str(t.get("engine"))]
            items = {
                f"rds {t['instance_class']} {az}": hours
                * p(
                    "AmazonRDS",
                    instanceType=str(t["instance_class"]),
                    databaseEngine=engine,
                    deploymentOption=az,
                )
            }
            storage = dict(t.get("storage") or {})
            kind = str(storage.get("type", "gp3"))
            gb_month = p(
                "AmazonRDS",
                productFamily="Database Storage",
                volumeType=RDS_VOLUME[kind],
                deploymentOption=az,
                databaseEngine=engine,
            )
            items[f"rds storage {kind} {storage.get('size_gb')} GB"] = (
                float(storage.get("size_gb", 0)) * gb_month * hours / HOURS_PER_MONTH
            )
            billable = float(storage.get("iops") or 0) - (3000 if kind == "gp3" else 0)
            if billable > 0 and kind in RDS_IOPS_FAMILY:
                iops_month = p(
                    "AmazonRDS",
                    productFamily="Provisioned IOPS",
                    deploymentOption=az,
                    databaseEngine=engine,
                    volumeType=RDS_VOLUME[kind],
                )
                items[f"rds provisioned IOPS {storage['iops']}"] = (
                    max(0.0, billable) * iops_month * hours / HOURS_PER_MONTH
                )
            return items
        if provider == "aurora":
            engine = AURORA_ENGINE[str(t.get("engine"))]
            count = int(t.get("instances", 1))
            if t.get("instance_class", "db.serverless") == "db.serverless":
                acu = float((t.get("serverless_v2") or {}).get("max_acu", 1))  # an upper bound
                unit = p("AmazonRDS", productFamily="ServerlessV2", databaseEngine=engine)
                return {f"aurora serverless v2 {count} x {acu:g} ACU (max)": hours * count * acu * unit}
            return self.aurora_items(t, engine, count, hours)
        if provider == "elasticache":
            nodes = int(t.get("shards", 1)) * (int(t.get("replicas", 0)) + 1)
            engine = "Valkey" if t.get("cache_engine") == "valkey" else "Redis"
            unit = p("AmazonElastiCache", instanceType=str(t["node_type"]), cacheEngine=engine)
            return {f"elasticache {nodes} x {t['node_type']}": hours * nodes * unit}
        if provider == "memorydb":
            nodes = int(t.get("shards", 1)) * (int(t.get("replicas_per_shard", 1)) + 1)
            unit = p("AmazonMemoryDB", instanceType=str(t["node_type"]))
            return {f"memorydb {nodes} x {t['node_type']}": hours * nodes * unit}
        if provider == "ec2":
            nodes = int(t.get("nodes", 1))
            items = {
                f"ec2 {nodes} x {t['instance_type']}": hours
                * nodes
                * self.ec2_hourly(str(t["instance_type"]))
            }
            volume = dict(t.get("volume") or {})
            if volume:
                gb_month = p(
                    "AmazonEC2", productFamily="Storage", volumeApiName=str(volume.get("type", "gp3"))
                )
                items[f"ebs {nodes} x {volume.get('size_gb')} GB {volume.get('type', 'gp3')}"] = (
                    nodes * float(volume.get("size_gb", 0)) * gb_month * hours / HOURS_PER_MONTH
                )
                items.update(self.ebs_performance_items(volume, nodes, hours))
            return items
        return {}

    def ec2_hourly(self, instance_type: str) -> float:
        return self.prices.price(
            "AmazonEC2",
            instanceType=instance_type,
            operatingSystem="Linux",
            tenancy="Shared",
            preInstalledSw="NA",
            capacitystatus="Used",
        )

    # runner ----------------------------------------------------------------------------------
    def runner_items(self, r: Mapping[str, Any], duration_s: float) -> dict[str, float]:
        platform = r.get("platform", "fargate")
        count = int(r.get("count", 1))
        size = dict(r.get("size") or {})
        hours = max(duration_s, 60.0) / 3600
        if platform == "fargate":
            cpu = float(size.get("cpu") or 1)
            memory_gb = float(size.get("memory_mb") or 2048) / 1024
            vcpu = self.prices.price(
                "AmazonECS", productFamily="Compute", usagetype=f"{self._prefix()}Fargate-vCPU-Hours:perCPU"
            )
            gb = self.prices.price(
                "AmazonECS", productFamily="Compute", usagetype=f"{self._prefix()}Fargate-GB-Hours"
            )
            return {
                f"fargate runner {count} x {cpu:g} vCPU / {memory_gb:g} GB": count
                * hours
                * (cpu * vcpu + memory_gb * gb)
            }
        if platform == "ec2":
            instance_type = str(size.get("instance_type") or "c6i.xlarge")
            return {f"ec2 runner {count} x {instance_type}": count * hours * self.ec2_hourly(instance_type)}
        return {}

    def _prefix(self) -> str:
        """Usage types carry a region prefix except in us-east-1 (e.g. EU-Fargate-GB-Hours)."""
        return USAGE_PREFIX.get(self.prices.region, "")

    # usage-type priced parts ---------------------------------------------------------------------
    def aurora_items(self, t: Mapping[str, Any], engine: str, count: int, hours: float) -> dict[str, float]:
        """Instances at the cluster's storage configuration (I/O-Optimized instances cost more: the
        Price List has two rows per class, told apart by usage type) and the cluster volume. Standard
        Aurora also bills I/O per request, which only the run knows: not in this estimate (said in the
        item's name)."""
        optimized = t.get("storage_type") == "aurora-iopt1"
        cls = str(t["instance_class"])
        unit = self.prices.price(
            "AmazonRDS",
            instanceType=cls,
            databaseEngine=engine,
            deploymentOption="Single-AZ",
            usagetype=f"{self._prefix()}InstanceUsage{'IOOptimized' if optimized else ''}:{cls}",
        )
        mode = "I/O-Optimized" if optimized else "Standard, I/O requests not included"
        items = {
            f"aurora {count} x {cls} ({'I/O-Optimized' if optimized else 'Standard'})": hours * count * unit
        }
        size_gb = max(AURORA_MIN_GB, float((t.get("storage") or {}).get("size_gb") or 0))
        gb_month = self.prices.price(
            "AmazonRDS",
            productFamily="Database Storage",
            usagetype=f"{self._prefix()}Aurora:{'IO-Optimized' if optimized else ''}StorageUsage",
        )
        items[f"aurora storage {size_gb:g} GB ({mode})"] = size_gb * gb_month * hours / HOURS_PER_MONTH
        return items

    def ebs_performance_items(self, volume: Mapping[str, Any], nodes: int, hours: float) -> dict[str, float]:
        """Provisioned IOPS (io1, io2; gp3 above its 3,000 included) and gp3 throughput above 125 MiB/s."""
        kind = str(volume.get("type", "gp3"))
        items: dict[str, float] = {}
        iops = float(volume.get("iops") or 0) - (GP3_FREE_IOPS if kind == "gp3" else 0)
        if iops > 0 and kind in EBS_IOPS_USAGE:
            unit = self.prices.price(
                "AmazonEC2",
                productFamily="System Operation",
                volumeApiName=kind,
                usagetype=f"{self._prefix()}EBS:VolumeP-IOPS.{EBS_IOPS_USAGE[kind]}",
            )
            items[f"ebs {nodes} x {kind} provisioned IOPS {iops:g}"] = (
                nodes * iops * unit * hours / HOURS_PER_MONTH
            )
        throughput = float(volume.get("throughput_mbps") or 0) - GP3_FREE_MIBPS
        if kind == "gp3" and throughput > 0:
            unit = self.prices.price(
                "AmazonEC2",
                productFamily="Provisioned Throughput",
                volumeApiName="gp3",
                usagetype=f"{self._prefix()}EBS:VolumeP-Throughput.gp3",
            )
            items[f"ebs {nodes} x gp3 throughput {throughput:g} MiB/s"] = (
                nodes * throughput * unit * hours / HOURS_PER_MONTH
            )
        return items


def matches(price_item: str | Mapping[str, Any], filters: Mapping[str, str]) -> bool:
    """TERM_MATCH semantics: every filter field equals the product field (productFamily or attribute)."""
    item = json.loads(price_item) if isinstance(price_item, str) else price_item
    product = item.get("product", {})
    fields = {**product.get("attributes", {}), "productFamily": product.get("productFamily", "")}
    return all(str(fields.get(k, "")).lower() == str(v).lower() for k, v in filters.items())


class ExcerptPriceList(PriceList):
    """The same lookups answered from saved GetProducts responses (offline runs, tests, dry runs)."""

    def __init__(self, responses: Mapping[str, Mapping[str, Any]], region: str = "us-east-1") -> None:
        super().__init__(Clients.__new__(Clients), region)
        self.responses = responses

    @classmethod
    def from_directory(cls, directory: str, region: str = "us-east-1") -> ExcerptPriceList:
        from pathlib import Path

        return cls({p.stem: json.loads(p.read_text()) for p in Path(directory).glob("*.json")}, region)

    def price(self, service: str, **attributes: str) -> float:
        filters = {"regionCode": self.region, **attributes}
        items = self.responses.get(service, {}).get("PriceList", [])
        found = [i for i in items if matches(i, filters)]
        if not found:
            what = ", ".join(f"{k}={v}" for k, v in sorted(filters.items()))
            raise ProvisioningFailed(f"no on-demand price for {service} ({what}) in the price excerpt")
        return on_demand_usd(found[0])
