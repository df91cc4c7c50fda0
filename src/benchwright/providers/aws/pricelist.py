"""Where unit prices come from: the AWS Price List API (``pricing:GetProducts``), saved GetProducts
responses (``--prices DIR``), or the dated cached copy that ships with benchwright, used when the API
cannot be reached. Every answer carries the name of its source, so an estimate can say where each of
its figures came from ("Price List API" or "cached price list of 2026-11-24").
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from benchwright.errors import ProvisioningFailed
from benchwright.providers.aws.common import Clients, aws_call

HOURS_PER_MONTH = 730.0  # the Price List's month: a GB-month or IOPS-month is 730 hours
# EBS: the usage type's suffix of a volume type's provisioned IOPS; gp3 includes 3,000 IOPS, 125 MiB/s
# (the price book's run lines and the EC2 kind's monthly price read them)
EBS_IOPS_USAGE = {"io1": "piops", "io2": "io2", "gp3": "gp3"}
GP3_FREE_IOPS = 3000.0
GP3_FREE_MIBPS = 125.0
HOURS_NOTE = f"{HOURS_PER_MONTH:g} h/month (AWS's convention for a month)"  # monthly prices say so

API_SOURCE = "Price List API"
PACKAGED_FILE = "price_list.json"  # in this package: the cached copy (see its "how" field)
# Products priced by a pair of regions (from, to) rather than one regionCode (data transfer).
REGION_FIELDS: dict[str, tuple[str, ...]] = {"AWSDataTransfer": ("fromRegionCode", "toRegionCode")}


class PriceNotFound(ProvisioningFailed):
    """The source answered, and it has no on-demand price for these filters."""


@dataclass(frozen=True)
class Price:
    usd: float
    source: str  # "Price List API", "cached price list of 2026-11-24", "saved responses in DIR" ...


def on_demand_usd(price_item: str | Mapping[str, Any], first_tier: bool = False) -> float:
    """The on-demand USD price of one Price List entry: the first non-zero price dimension, or with
    ``first_tier`` the dimension that begins at 0 (tiered rates such as MemoryDB Valkey's data written,
    free for the first 10 TB a month: a benchmark run is priced at the tier it starts in)."""
    item = json.loads(price_item) if isinstance(price_item, str) else price_item
    dims = [d for d in _dimensions(item) if d.get("pricePerUnit", {}).get("USD") is not None]
    if not dims:
        raise ProvisioningFailed(
            f"price list item {item.get('product', {}).get('sku')} has no USD on-demand price"
        )
    if first_tier:
        first = [d for d in dims if str(d.get("beginRange", "0")) in ("0", "0.0")]
        return float((first or dims)[0]["pricePerUnit"]["USD"])
    prices = [float(d["pricePerUnit"]["USD"]) for d in dims]
    nonzero = [p for p in prices if p > 0]
    return nonzero[0] if nonzero else prices[0]


def matches(price_item: str | Mapping[str, Any], filters: Mapping[str, str]) -> bool:
    """TERM_MATCH semantics: every filter field equals the product field (productFamily or attribute)."""
    item = json.loads(price_item) if isinstance(price_item, str) else price_item
    product = item.get("product", {})
    fields = {**product.get("attributes", {}), "productFamily": product.get("productFamily", "")}
    return all(str(fields.get(k, "")).lower() == str(v).lower() for k, v in filters.items())


def region_filters(service: str, region: str) -> dict[str, str]:
    return {field: region for field in REGION_FIELDS.get(service, ("regionCode",))}


def _what(service: str, filters: Mapping[str, str]) -> str:
    return f"{service} ({', '.join(f'{k}={v}' for k, v in sorted(filters.items()))})"


class PriceList:
    """``get_products`` with TERM_MATCH filters; one cached unit price per query."""

    source = API_SOURCE

    def __init__(self, clients: Clients | Callable[[str], Any], region: str) -> None:
        self.clients = clients
        self.region = region
        self._cache: dict[str, float] = {}
        self.on_use: Callable[[str, Any], None] | None = None  # price_snapshot records the rows

    def filters(self, service: str, attributes: Mapping[str, str]) -> dict[str, str]:
        return {**region_filters(service, self.region), **attributes}

    def key(self, service: str, attributes: Mapping[str, str], *extra: str) -> str:
        return json.dumps([service, sorted(self.filters(service, attributes).items()), *extra])

    def price(self, service: str, **attributes: str) -> float:
        return self.lookup(service, attributes).usd

    def lookup(self, service: str, attributes: Mapping[str, str], first_tier: bool = False) -> Price:
        """The unit price of the first product matching ``attributes`` (and the region)."""
        filters = self.filters(service, attributes)

        def find() -> float:
            items = self.items(service, filters, all_pages=False)
            if not items:
                raise PriceNotFound(f"no on-demand price for {_what(service, filters)}{self.where()}")
            self.used(service, items[0])
            return on_demand_usd(items[0], first_tier)

        return self.answer(self.key(service, attributes, *(["first-tier"] if first_tier else [])), find)

    def lookup_by_unit(
        self, service: str, unit: str, words: tuple[str, ...], exclude: tuple[str, ...] = ()
    ) -> Price:
        """The first-tier price of the region's product of ``service`` whose on-demand dimension is
        in ``unit`` and whose description has every one of ``words`` and none of ``exclude``: for a
        rate whose Price List attributes are not known well enough to filter on (MemoryDB's data
        written)."""
        filters = self.filters(service, {})

        def wanted(item: str | Mapping[str, Any]) -> bool:
            for dim in _dimensions(item):
                text = str(dim.get("description", "")).lower()
                if (
                    dim.get("unit") == unit
                    and all(w in text for w in words)
                    and not any(w in text for w in exclude)
                ):
                    return True
            return False

        def find() -> float:
            found = [i for i in self.items(service, filters, all_pages=True) if wanted(i)]
            if not found:
                what = f"{service} per {unit} ({' '.join(words)}) in {self.region}"
                raise PriceNotFound(f"no on-demand price for {what}{self.where()}")
            self.used(service, found[0])
            return on_demand_usd(found[0], first_tier=True)

        return self.answer(self.key(service, {}, unit, *words, "-", *exclude), find)

    def where(self) -> str:
        return ""

    def used(self, service: str, item: Any) -> None:
        """The Price List row an answer came from, for ``on_use``."""
        if self.on_use is not None:
            self.on_use(service, item)

    def answer(self, key: str, find: Callable[[], float]) -> Price:
        """``find()`` once per key in this process."""
        if key not in self._cache:
            self._cache[key] = find()
        return Price(self._cache[key], self.source)

    def items(self, service: str, filters: Mapping[str, str], all_pages: bool) -> list[Any]:
        args: dict[str, Any] = {
            "ServiceCode": service,
            "Filters": [{"Type": "TERM_MATCH", "Field": k, "Value": v} for k, v in sorted(filters.items())],
            "FormatVersion": "aws_v1",
            "MaxResults": 100 if all_pages else 10,
        }
        found: list[Any] = []
        while True:
            page = aws_call(f"pricing get_products {service}", self.clients("pricing").get_products, **args)
            found.extend(page.get("PriceList") or [])
            token = page.get("NextToken")
            if not all_pages or not token:
                return found
            args["NextToken"] = token


def _dimensions(price_item: str | Mapping[str, Any]) -> list[dict[str, Any]]:
    item = json.loads(price_item) if isinstance(price_item, str) else price_item
    return [
        dim
        for term in (item.get("terms", {}).get("OnDemand") or {}).values()
        for dim in (term.get("priceDimensions") or {}).values()
    ]


class ExcerptPriceList(PriceList):
    """The same lookups answered from saved GetProducts responses (offline runs, tests, dry runs)."""

    def __init__(
        self, responses: Mapping[str, Mapping[str, Any]], region: str = "us-east-1", source: str = ""
    ) -> None:
        super().__init__(_no_client, region)
        self.responses = responses
        self.source = source or "saved GetProducts responses"

    @classmethod
    def from_directory(cls, directory: str, region: str = "us-east-1") -> ExcerptPriceList:
        responses = {p.stem: json.loads(p.read_text()) for p in Path(directory).glob("*.json")}
        return cls(responses, region, f"saved GetProducts responses in {directory}")

    def where(self) -> str:
        return f" in the {self.source}"

    def items(self, service: str, filters: Mapping[str, str], all_pages: bool) -> list[Any]:
        rows = self.responses.get(service, {}).get("PriceList", [])
        return [i for i in rows if matches(i, filters)]


def _no_client(service: str) -> Any:
    raise ProvisioningFailed(f"{service}: an excerpt price list makes no API calls")


def packaged_copy() -> dict[str, Any]:
    """The cached price list that ships with benchwright: ``date``, ``how`` (how its rows were made),
    ``sources`` (where each row was checked) and ``services`` (GetProducts ``PriceList`` rows)."""
    text = resources.files("benchwright.providers.aws").joinpath(PACKAGED_FILE).read_text()
    data: dict[str, Any] = json.loads(text)
    return data


def copy_provenance(data: Mapping[str, Any] | None = None) -> str:
    """How far to trust the packaged copy, in one sentence: how its rows were made and how many of
    them a source confirmed (its ``sources`` say which and where)."""
    data = data if data is not None else packaged_copy()
    statuses = [str(v.get("status", "")) for v in dict(data.get("sources") or {}).values()]
    confirmed = sum(1 for s in statuses if s in ("verified", "corrected"))
    return (
        f"the copy of {data['date']} was written from public price information, not recorded from the "
        f"API; {confirmed} of its {len(statuses)} price rows are confirmed by a source "
        "(benchwright/providers/aws/price_list.json: sources)"
    )


class PackagedPriceList(ExcerptPriceList):
    """The dated cached copy shipped in the package: "cached price list of YYYY-MM-DD"."""

    def __init__(self, region: str = "us-east-1", data: Mapping[str, Any] | None = None) -> None:
        data = data if data is not None else packaged_copy()
        self.date = str(data["date"])
        responses = {
            service: {"FormatVersion": "aws_v1", "PriceList": rows}
            for service, rows in dict(data["services"]).items()
        }
        super().__init__(responses, region, f"cached price list of {self.date}")


class FallbackPriceList(PriceList):
    """``primary`` (the API) while it answers; once it cannot be reached (no credentials, no network,
    access denied), every further lookup goes to ``fallback`` (the cached copy), and ``unreachable``
    says why. A product the API answers "none" for is missing, not looked up in the copy."""

    def __init__(self, primary: PriceList, fallback: PriceList) -> None:
        super().__init__(primary.clients, primary.region)
        self.primary = primary
        self.fallback = fallback
        self.unreachable: str | None = None

    def lookup(self, service: str, attributes: Mapping[str, str], first_tier: bool = False) -> Price:
        if self.unreachable is None:
            try:
                return self.primary.lookup(service, attributes, first_tier)
            except PriceNotFound:
                raise
            except ProvisioningFailed as exc:  # credentials, network, access: the API is out of reach
                self.unreachable = str(exc)
        return self.fallback.lookup(service, attributes, first_tier)

    def lookup_by_unit(
        self, service: str, unit: str, words: tuple[str, ...], exclude: tuple[str, ...] = ()
    ) -> Price:
        if self.unreachable is None:
            try:
                return self.primary.lookup_by_unit(service, unit, words, exclude)
            except PriceNotFound:
                raise
            except ProvisioningFailed as exc:
                self.unreachable = str(exc)
        return self.fallback.lookup_by_unit(service, unit, words, exclude)


def with_cached_copy(primary: PriceList) -> FallbackPriceList:
    """The API first, the packaged copy when the API cannot be reached."""
    return FallbackPriceList(primary, PackagedPriceList(primary.region))
