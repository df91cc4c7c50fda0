"""The monthly price of keeping a target configuration (the seeds' price tables, experiments 3 and 4):
server, disk, provisioned IOPS / throughput / I/O requests, total, per month of 730 hours (AWS's own
convention for monthly figures).

Unlike providers/aws/pricing.py (what one run cost), this prices the configuration as if kept all
month. Every line names the price-list row and the list's date it came from; a price the list lacks
is "not priced" with the filters it was looked up by, never 0, and makes the total "not priced".
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from benchwright.errors import ProvisioningFailed
from benchwright.providers.aws.pricelist import HOURS_PER_MONTH, PriceList, PriceNotFound
from benchwright.providers.aws.pricing import EBS_IOPS_USAGE, GP3_FREE_IOPS, GP3_FREE_MIBPS, USAGE_PREFIX
from benchwright.providers.aws.targets.kinds.aurora import AURORA_ENGINE
from benchwright.providers.aws.targets.kinds.rds import RDS_ENGINE, RDS_GP3_FREE_IOPS, RDS_VOLUME
from benchwright.spec.targets import (
    AuroraTarget,
    Ec2Target,
    ElastiCacheTarget,
    MemoryDbTarget,
    RdsTarget,
    TargetSpec,
)

Part = Literal["server", "disk", "io"]
PARTS: tuple[Part, ...] = ("server", "disk", "io")
SECONDS_PER_MONTH = HOURS_PER_MONTH * 3600
HOURS_NOTE = f"{HOURS_PER_MONTH:g} h/month (AWS's convention for a month)"
IO2_FIRST_TIER = 32000  # EBS io2 bills provisioned IOPS in tiers; the list's first row is the first tier
# RDS gp3 includes 125 MiB/s below 400 GB and 500 MiB/s from 400 GB on
RDS_GP3_FREE_MIBPS = ((400, 500.0), (0, 125.0))
MULTI_AZ_DOC = (
    "RDS bills a Multi-AZ standby's instance hours and storage like the primary's "
    "(https://docs.aws.amazon.com/AmazonRDS/latest/UserGuide/USER_OnDemandDBInstances.html)"
)


@dataclass(frozen=True)
class MonthlyLine:
    """One thing billed monthly; ``usd`` None: not priced (``source`` says what was missing)."""

    part: Part
    item: str
    usd: float | None
    source: str


@dataclass
class MonthlyPrice:
    """The monthly price of one configuration, by part, with what the lines rest on."""

    configuration: str
    lines: list[MonthlyLine] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def part_usd(self, part: Part) -> float | None:
        """The part's sum; 0.0 when nothing of the kind is billed; None when a line is not priced."""
        found = [line.usd for line in self.lines if line.part == part]
        if any(u is None for u in found):
            return None
        return round(float(sum(u for u in found if u is not None)), 4)

    @property
    def total(self) -> float | None:
        parts = [self.part_usd(p) for p in PARTS]
        return (
            None if any(p is None for p in parts) else round(float(sum(p for p in parts if p is not None)), 4)
        )

    @property
    def missing(self) -> list[str]:
        return [f"{line.item}: {line.source}" for line in self.lines if line.usd is None]


def describe(target: TargetSpec) -> str:
    """The configuration in the words of the seeds' tables (db.t3.small gp2 100 GB)."""
    if isinstance(target, RdsTarget):
        s = target.storage
        iops = f" {s.iops} IOPS" if s.iops else ""
        return f"{target.instance_class} {s.type} {s.size_gb} GB{iops}" + (
            " Multi-AZ" if target.multi_az else ""
        )
    if isinstance(target, Ec2Target):
        v = target.volume
        disk = f"{v.type} {v.size_gb} GB" + (f" {v.iops} IOPS" if v.iops else "") if v else "instance store"
        return f"{target.nodes} x {target.instance_type} {disk}"
    if isinstance(target, AuroraTarget):
        return f"aurora {target.instances} x {target.instance_class} ({target.storage_type})"
    if isinstance(target, ElastiCacheTarget):
        return f"elasticache {target.shards * (target.replicas + 1)} x {target.node_type}"
    if isinstance(target, MemoryDbTarget):
        return f"memorydb {target.shards * (target.replicas_per_shard + 1)} x {target.node_type}"
    return target.provider


class MonthlyPricer:
    """Monthly prices from one price list; ``statuses`` (the packaged copy's ``sources``) add how far
    each row is confirmed."""

    def __init__(self, prices: PriceList, statuses: Mapping[str, Any] | None = None) -> None:
        self.prices = prices
        self.statuses = statuses or {}
        self._rows: dict[str, str] = {}

    # rows ------------------------------------------------------------------------------------
    def row(self, service: str, **attributes: str) -> tuple[float, str]:
        """The unit price and where it came from: the row (service, SKU, usage type, unit), the
        list (and its date), and the row's confirmation status when known."""
        key = self.prices.key(service, attributes)
        seen: list[Any] = []
        before = self.prices.on_use
        self.prices.on_use = lambda _service, item: seen.append(item)
        try:
            price = self.prices.lookup(service, attributes)
        finally:
            self.prices.on_use = before
        if seen:
            self._rows[key] = self._row_text(service, seen[0])
        where = self._rows.get(key, f"{service} row")
        return price.usd, f"{where}, {price.source}"

    def _row_text(self, service: str, raw: Any) -> str:
        item = json.loads(raw) if isinstance(raw, str) else raw
        product = item.get("product", {})
        sku = str(product.get("sku", "?"))
        attrs = product.get("attributes", {})
        what = attrs.get("usagetype") or product.get("productFamily", "")
        units = [
            str(d.get("unit", ""))
            for t in (item.get("terms", {}).get("OnDemand") or {}).values()
            for d in (t.get("priceDimensions") or {}).values()
        ]
        status = self.statuses.get(f"{service}|{sku}", {})
        checked = f", {status['status']}" if isinstance(status, dict) and status.get("status") else ""
        return f"{service} row {sku} ({what}, per {units[0] if units else '?'}{checked})"

    def prefix(self) -> str:
        return USAGE_PREFIX.get(self.prices.region, "")

    @staticmethod
    def line(out: MonthlyPrice, part: Part, item: str, price: Callable[[], tuple[float, str]]) -> None:
        """Add a line; a lookup that finds nothing is "not priced" naming what was looked up."""
        try:
            usd, source = price()
        except ProvisioningFailed as exc:
            out.lines.append(MonthlyLine(part, item, None, f"not priced: {exc}"))
            return
        out.lines.append(MonthlyLine(part, item, round(usd, 4), source))

    # configurations --------------------------------------------------------------------------
    def price(self, target: TargetSpec, io_per_s: float | None = None) -> MonthlyPrice | None:
        """The monthly price of ``target``; None for targets AWS does not bill (local, endpoint).
        ``io_per_s``: the run's observed read + write I/O rate, for storage billed per request."""
        handlers: dict[type, Callable[[Any, MonthlyPrice, float | None], None]] = {
            RdsTarget: self._rds,
            Ec2Target: self._ec2,
            AuroraTarget: self._aurora,
            ElastiCacheTarget: self._nodes,
            MemoryDbTarget: self._nodes,
        }
        handler = handlers.get(type(target))
        if handler is None:
            return None
        out = MonthlyPrice(describe(target))
        handler(target, out, io_per_s)
        return out

    def rds_rate(self, multi_az: bool, **attributes: str) -> tuple[float, str]:
        """An RDS storage/IOPS row at the deployment option; a Multi-AZ price the list lacks is
        twice the Single-AZ row, saying so."""
        az = "Multi-AZ" if multi_az else "Single-AZ"
        try:
            return self.row("AmazonRDS", deploymentOption=az, **attributes)
        except PriceNotFound:
            if not multi_az:
                raise
        try:
            usd, source = self.row("AmazonRDS", deploymentOption="Single-AZ", **attributes)
        except PriceNotFound as exc:
            raise PriceNotFound(f"no Multi-AZ row, nor a Single-AZ one: {exc}") from None
        return 2 * usd, f"2 x {source} (the list has no Multi-AZ row; {MULTI_AZ_DOC})"

    def _rds(self, t: RdsTarget, out: MonthlyPrice, io_per_s: float | None) -> None:
        engine, az, cls = RDS_ENGINE[t.engine], "Multi-AZ" if t.multi_az else "Single-AZ", t.instance_class
        p = self.prefix()

        def instance() -> tuple[float, str]:
            usage = "Multi-AZUsage" if t.multi_az else "InstanceUsage"
            attrs = {"instanceType": cls, "databaseEngine": engine}
            try:
                usd, src = self.row("AmazonRDS", deploymentOption=az, usagetype=f"{p}{usage}:{cls}", **attrs)
            except PriceNotFound:
                if not t.multi_az:
                    raise
                usd, src = self.row(
                    "AmazonRDS", deploymentOption="Single-AZ", usagetype=f"{p}InstanceUsage:{cls}", **attrs
                )
                usd, src = 2 * usd, f"2 x {src} (the list has no Multi-AZ row; {MULTI_AZ_DOC})"
            return usd * HOURS_PER_MONTH, f"{src}; x {HOURS_NOTE}"

        self.line(out, "server", f"rds {cls} {az}", instance)
        s = t.storage
        common = {"databaseEngine": engine, "volumeType": RDS_VOLUME[s.type]}

        def storage() -> tuple[float, str]:
            usd, src = self.rds_rate(t.multi_az, productFamily="Database Storage", **common)
            return s.size_gb * usd, f"{src}; {s.size_gb} GB-month"

        self.line(out, "disk", f"storage {s.type} {s.size_gb} GB", storage)
        free_iops = next(i for gb, i in RDS_GP3_FREE_IOPS if s.size_gb >= gb) if s.type == "gp3" else 0.0
        billable = float(s.iops or 0) - free_iops
        if billable > 0 and s.type in ("io1", "io2", "gp3"):

            def iops() -> tuple[float, str]:
                usd, src = self.rds_rate(t.multi_az, productFamily="Provisioned IOPS", **common)
                above = f" above the {free_iops:g} gp3 includes" if free_iops else ""
                return billable * usd, f"{src}; {billable:g} IOPS-month{above}"

            self.line(out, "io", f"provisioned IOPS {billable:g}", iops)
        free_mibps = next(m for gb, m in RDS_GP3_FREE_MIBPS if s.size_gb >= gb)
        extra = float(s.throughput_mbps or 0) - free_mibps
        if s.type == "gp3" and extra > 0:

            def throughput() -> tuple[float, str]:
                usd, src = self.rds_rate(t.multi_az, productFamily="Provisioned Throughput", **common)
                return extra * usd, f"{src}; {extra:g} MiB/s-month above the {free_mibps:g} gp3 includes"

            self.line(out, "io", f"gp3 throughput {extra:g} MiB/s", throughput)
        if s.type == "magnetic":
            self._io_requests(out, "AmazonRDS", f"{p}RDS:StorageIOUsage", io_per_s, t.multi_az)
        self._backups(t, out)

    def _io_requests(
        self, out: MonthlyPrice, service: str, usagetype: str, io_per_s: float | None, multi_az: bool = False
    ) -> None:
        """Magnetic storage bills each I/O request: the run's observed rate kept up all month."""
        item = "magnetic I/O requests"
        if multi_az:
            out.lines.append(
                MonthlyLine("io", item, None, "not priced: a Multi-AZ standby's I/O is not observed")
            )
            return
        if io_per_s is None:
            out.lines.append(
                MonthlyLine(
                    "io", item, None, "not priced: the run has no ReadIOPS/WriteIOPS series to rate it"
                )
            )
            return
        rate = io_per_s

        def requests() -> tuple[float, str]:
            usd, src = self.row(service, productFamily="System Operation", usagetype=usagetype)
            count = rate * SECONDS_PER_MONTH
            return count * usd, (
                f"{src} ({usd * 1e6:g} USD per million requests); {count / 1e6:,.0f} million requests: "
                f"the run's mean {rate:,.1f} read + write I/O per second kept up all month"
            )

        self.line(out, "io", item, requests)

    @staticmethod
    def _backups(t: RdsTarget, out: MonthlyPrice) -> None:
        if t.backup_retention_days == 0:
            out.notes.append("backups: off (backup_retention_days 0), nothing billed")
            return
        out.notes.append(
            f"backups: {t.backup_retention_days} days kept; backup storage up to the provisioned "
            f"{t.storage.size_gb} GB is free, beyond it not priced (it depends on how much the data changes)"
        )

    def _ec2(self, t: Ec2Target, out: MonthlyPrice, io_per_s: float | None) -> None:
        def instance() -> tuple[float, str]:
            usd, src = self.row(
                "AmazonEC2",
                instanceType=t.instance_type,
                operatingSystem="Linux",
                tenancy="Shared",
                preInstalledSw="NA",
                capacitystatus="Used",
            )
            return t.nodes * usd * HOURS_PER_MONTH, f"{src}; {t.nodes} x {HOURS_NOTE}"

        self.line(out, "server", f"ec2 {t.nodes} x {t.instance_type}", instance)
        v = t.volume
        if v is None:
            out.notes.append(
                "disk: the instance's own storage, in the instance price (root volume not priced)"
            )
            return
        n, p = t.nodes, self.prefix()

        def storage() -> tuple[float, str]:
            usd, src = self.row("AmazonEC2", productFamily="Storage", volumeApiName=v.type)
            return n * v.size_gb * usd, f"{src}; {n} x {v.size_gb} GB-month"

        self.line(out, "disk", f"ebs {n} x {v.type} {v.size_gb} GB", storage)
        iops = float(v.iops or 0) - (GP3_FREE_IOPS if v.type == "gp3" else 0.0)
        if iops > 0 and v.type in EBS_IOPS_USAGE:

            def piops() -> tuple[float, str]:
                usd, src = self.row(
                    "AmazonEC2",
                    productFamily="System Operation",
                    volumeApiName=v.type,
                    usagetype=f"{p}EBS:VolumeP-IOPS.{EBS_IOPS_USAGE[v.type]}",
                )
                return n * iops * usd, f"{src}; {n} x {iops:g} IOPS-month"

            self.line(out, "io", f"provisioned IOPS {n} x {iops:g}", piops)
            if v.type == "io2" and iops > IO2_FIRST_TIER:
                out.notes.append(
                    f"io2 IOPS above {IO2_FIRST_TIER:,} are billed at lower tiers: all priced at the first"
                )
        mibps = float(v.throughput_mbps or 0) - GP3_FREE_MIBPS
        if v.type == "gp3" and mibps > 0:

            def throughput() -> tuple[float, str]:
                usd, src = self.row(
                    "AmazonEC2",
                    productFamily="Provisioned Throughput",
                    volumeApiName="gp3",
                    usagetype=f"{p}EBS:VolumeP-Throughput.gp3",
                )
                return n * mibps * usd, f"{src}; {n} x {mibps:g} MiB/s-month above the 125 gp3 includes"

            self.line(out, "io", f"gp3 throughput {n} x {mibps:g} MiB/s", throughput)
        if v.type == "standard" and n > 1:  # one series per run does not tell the nodes' volumes apart
            item, why = "magnetic I/O requests", "not priced: one I/O series for several nodes' volumes"
            out.lines.append(MonthlyLine("io", item, None, why))
        elif v.type == "standard":
            self._io_requests(out, "AmazonEC2", f"{p}EBS:VolumeIOUsage", io_per_s)

    def _aurora(self, t: AuroraTarget, out: MonthlyPrice, _io: float | None) -> None:
        engine, optimized = AURORA_ENGINE[t.engine], t.storage_type == "aurora-iopt1"
        p, mode = self.prefix(), "I/O-Optimized" if optimized else "Standard"
        if t.instance_class == "db.serverless":
            out.lines.append(
                MonthlyLine("server", "aurora serverless v2", None, "not priced: ACUs follow the load")
            )
        else:
            cls = t.instance_class

            def instances() -> tuple[float, str]:
                usd, src = self.row(
                    "AmazonRDS",
                    instanceType=cls,
                    databaseEngine=engine,
                    deploymentOption="Single-AZ",
                    usagetype=f"{p}InstanceUsage{'IOOptimized' if optimized else ''}:{cls}",
                )
                return t.instances * usd * HOURS_PER_MONTH, f"{src}; {t.instances} x {HOURS_NOTE}"

            self.line(out, "server", f"aurora {t.instances} x {cls} ({mode})", instances)
        out.lines.append(
            MonthlyLine("disk", "aurora cluster volume", None, "not priced: billed for the data it holds")
        )
        if not optimized:
            out.lines.append(
                MonthlyLine("io", "aurora I/O requests", None, "not priced: Standard bills each request")
            )

    def _nodes(self, t: ElastiCacheTarget | MemoryDbTarget, out: MonthlyPrice, _io: float | None) -> None:
        if isinstance(t, ElastiCacheTarget):
            nodes, service = t.shards * (t.replicas + 1), "AmazonElastiCache"
            attrs = {
                "instanceType": t.node_type,
                "cacheEngine": "Valkey" if t.cache_engine == "valkey" else "Redis",
            }
        else:
            nodes, service = t.shards * (t.replicas_per_shard + 1), "AmazonMemoryDB"
            attrs = {"instanceType": t.node_type}

        def hourly() -> tuple[float, str]:
            usd, src = self.row(service, **attrs)
            return nodes * usd * HOURS_PER_MONTH, f"{src}; {nodes} x {HOURS_NOTE}"

        self.line(out, "server", f"{nodes} x {t.node_type}", hourly)
        if isinstance(t, MemoryDbTarget):
            out.notes.append("data written: billed per GB written, usage not in this monthly price")
