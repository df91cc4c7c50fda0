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
from benchwright.providers.aws.pricelist import HOURS_PER_MONTH, PriceList
from benchwright.providers.aws.pricing import USAGE_PREFIX
from benchwright.providers.aws.targets.kinds import kind_of_provider
from benchwright.spec.targets import TargetSpec

Part = Literal["server", "disk", "io"]
PARTS: tuple[Part, ...] = ("server", "disk", "io")
SECONDS_PER_MONTH = HOURS_PER_MONTH * 3600


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

    def unpriced(self, part: Part, item: str, why: str) -> None:
        """A line AWS bills but this price cannot put a figure on: ``why`` says so ("not priced: ...")."""
        self.lines.append(MonthlyLine(part, item, None, why))

    @property
    def missing(self) -> list[str]:
        return [f"{line.item}: {line.source}" for line in self.lines if line.usd is None]


def describe(target: TargetSpec) -> str:
    """The configuration in the words of the seeds' tables (db.t3.small gp2 100 GB), as its kind
    words it (providers/aws/targets/kinds/); a target AWS does not bill is its provider."""
    kind = kind_of_provider(target.provider)
    return kind.describe(target) if kind is not None and kind.describe is not None else target.provider


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
        kind = kind_of_provider(target.provider)
        if kind is None or kind.monthly is None:
            return None
        out = MonthlyPrice(describe(target))
        kind.monthly(self, target, out, io_per_s)
        return out

    def io_requests(
        self, out: MonthlyPrice, service: str, usagetype: str, io_per_s: float | None, multi_az: bool = False
    ) -> None:
        """Magnetic storage bills each I/O request: the run's observed rate kept up all month."""
        item = "magnetic I/O requests"
        if multi_az:
            out.unpriced("io", item, "not priced: a Multi-AZ standby's I/O is not observed")
            return
        if io_per_s is None:
            out.unpriced("io", item, "not priced: the run has no ReadIOPS/WriteIOPS series to rate it")
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
