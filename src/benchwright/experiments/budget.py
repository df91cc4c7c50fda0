"""The budget before launch: an estimated USD cost per matrix cell and in total, and ``--max-usd``.

The estimate uses the same price book as the workflow's PriceRun stage (providers/aws/pricing.py:
target instances or nodes, storage and IOPS prorated, the runner, the workflow's Lambda and Step
Functions) over each cell's share of the estimated wall time (benchwright.sharing.item_seconds: the
target's provisioning and teardown once per target group, the load, sized by the data, once per
dataset, warmup and run for every cell and repeat). Local and endpoint targets cost nothing we can
price. Prices come from the AWS Price List API through a cache on disk (``CachedPriceList``); when the
API cannot be reached (no credentials, no network), from the dated cached copy that ships with
benchwright (providers/aws/price_list.json); or from saved GetProducts responses (``--prices DIR``, the
shape of tests/data/pricing). Every line item says which of these its figures came from.

A price that cannot be found makes the estimate incomplete; ``--max-usd`` then refuses, since it
cannot promise the budget holds.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchwright.errors import SpecError
from benchwright.providers.aws.pricelist import (
    ExcerptPriceList,
    FallbackPriceList,
    Price,
    PriceList,
    with_cached_copy,
)

if TYPE_CHECKING:
    from benchwright.experiments.runner_classes import ClassCost
    from benchwright.spec import BenchmarkSpec, SuiteSpec

CACHE_ENV = "BENCHWRIGHT_PRICE_CACHE"
CACHE_MAX_AGE_S = 30 * 86400  # list prices change rarely; a month-old cached price is refreshed


@dataclass
class CellCost:
    cell_id: str
    seconds: float  # per repeat
    usd: float  # all repeats
    items: dict[str, float] = field(default_factory=dict)
    notes: dict[str, str] = field(default_factory=dict)  # item -> price source (and usage basis)
    missing: list[str] = field(default_factory=list)


@dataclass
class SpecBudget:
    name: str
    cells: list[CellCost]
    unreachable: str | None = None  # why the Price List API could not be asked (the copy answered)
    classes: list[ClassCost] = field(default_factory=list)  # both runner classes (validate only)

    @property
    def total_usd(self) -> float:
        return round(sum(c.usd for c in self.cells), 4)

    @property
    def missing(self) -> list[str]:
        return sorted({m for c in self.cells for m in c.missing})

    def line_items(self) -> list[tuple[str, float, str]]:
        """(item, USD over every cell, note) for the spec: where each figure came from."""
        usd: dict[str, float] = {}
        notes: dict[str, str] = {}
        for cell in self.cells:
            for name, value in cell.items.items():
                usd[name] = usd.get(name, 0.0) + value
                notes.setdefault(name, cell.notes.get(name, ""))
        return [(name, round(usd[name], 4), notes[name]) for name in usd]


def region_of(spec: BenchmarkSpec) -> str:
    """The target's region: from its AZ name when it has one, else AWS_REGION / us-east-1."""
    import re

    zones = [
        getattr(spec.target, "availability_zone", None),
        *(getattr(spec.target, "availability_zones", None) or []),
    ]
    for zone in zones:
        if zone and re.match(r"^[a-z]{2}(-gov)?-[a-z]+-\d[a-z]$", zone):
            return str(zone[:-1])
    return os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION") or "us-east-1"


def estimate_spec(spec: BenchmarkSpec, prices: PriceList | None) -> SpecBudget:
    """Cost of every cell of ``spec`` over all its repeats (zero for local targets; ``prices`` unused
    then). Each (cell, repeat) is priced over its share of the wall time (benchwright.sharing): the
    target's provisioning and teardown once per target group, the load once per dataset."""
    from benchwright.sharing import item_seconds, plan
    from benchwright.spec import expand_matrix

    cells = expand_matrix(spec)
    costs = {c.cell_id: CellCost(c.cell_id, 0.0, 0.0) for c in cells}
    for item, seconds, note in item_seconds(plan([(c, r) for c in cells for r in range(spec.repeats)])):
        cost = costs[item.cell.cell_id]
        cost.seconds = cost.seconds or seconds  # the first repeat's (the one that provisions or loads)
        if item.cell.spec.is_local or prices is None:
            cost.missing = [] if item.cell.spec.is_local else ["no price list"]
            continue
        from benchwright.providers.aws.pricing import AwsPriceBook

        facts = item.cell.spec.target.facts
        target_only = facts.provision_s + facts.teardown_s if "provisions" in note else 0.0
        lines = AwsPriceBook(prices).lines(item.cell.spec, None, seconds, seconds - target_only)
        cost.usd = round(cost.usd + lines.total(), 4)
        for name, usd in lines.items.items():
            cost.items[name] = round(cost.items.get(name, 0.0) + usd, 6)
        cost.notes.update(lines.notes)
        cost.missing = sorted({*cost.missing, *lines.missing})
    return SpecBudget(spec.name, list(costs.values()))


def price_list(spec: BenchmarkSpec, prices_dir: str | None = None) -> PriceList | None:
    """The price source for a cloud spec: saved responses, or the API through the disk cache with
    the packaged cached copy behind it for when the API cannot be reached."""
    if spec.is_local:
        return None
    region = region_of(spec)
    if prices_dir:
        if not Path(prices_dir).is_dir():
            raise SpecError("--prices", f"{prices_dir}: not a directory of GetProducts responses")
        return ExcerptPriceList.from_directory(prices_dir, region)
    return with_cached_copy(CachedPriceList.for_region(region))


def check_budget(budgets: list[SpecBudget], max_usd: float | None) -> None:
    """Refuse (SpecError naming --max-usd, the estimate and the budget) a spec over the budget."""
    if max_usd is None:
        return
    total = round(sum(b.total_usd for b in budgets), 4)
    missing = sorted({m for b in budgets for m in b.missing})
    if missing:
        raise SpecError(
            "--max-usd",
            f"cannot check the budget of {max_usd:.2f} USD: the estimate is incomplete ({'; '.join(missing)})",
        )
    if total > max_usd:
        worst = max((c for b in budgets for c in b.cells), key=lambda c: c.usd)
        raise SpecError(
            "--max-usd",
            f"the estimated cost {total:.2f} USD is over the budget of {max_usd:.2f} USD (the costliest "
            f"cell, {worst.cell_id}, {worst.usd:.2f} USD); nothing was created",
        )


def spec_budget(spec: BenchmarkSpec, prices_dir: str | None = None) -> tuple[SpecBudget, PriceList | None]:
    """One benchmark's budget, and the price list it was priced from (to price it again)."""
    prices = price_list(spec, prices_dir)
    budget = estimate_spec(spec, prices)
    budget.unreachable = prices.unreachable if isinstance(prices, FallbackPriceList) else None
    return budget, prices


def suite_budgets(suite: SuiteSpec, prices_dir: str | None = None) -> list[SpecBudget]:
    """Each benchmark's budget (``runner_classes.suite_budgets_both_classes`` adds the other class)."""
    return [spec_budget(spec, prices_dir)[0] for spec in suite.benchmarks]


def enforce(suite: SuiteSpec, max_usd: float | None, prices_dir: str | None = None) -> list[SpecBudget]:
    """What ``run``, ``submit`` and ``rehearse`` call before creating anything."""
    if max_usd is None:
        return []
    if max_usd < 0:
        raise SpecError("--max-usd", f"must not be negative, got {max_usd}")
    budgets = suite_budgets(suite, prices_dir)
    check_budget(budgets, max_usd)
    return budgets


# ---------------------------------------------------------------- the API with a cache on disk
def _cache_path() -> Path:
    configured = os.environ.get(CACHE_ENV)
    if configured:
        return Path(configured)
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "benchwright" / "prices.json"


class CachedPriceList(PriceList):
    """``PriceList`` whose answers are kept in a JSON file (``$BENCHWRIGHT_PRICE_CACHE`` or
    ~/.cache/benchwright/prices.json) for a month: validate prices a spec once, then offline. A figure
    read back from the file says so, with the day it was fetched."""

    def __init__(self, clients: Any, region: str, path: Path | None = None) -> None:
        super().__init__(clients, region)
        self.path = path or _cache_path()

    @classmethod
    def for_region(cls, region: str, path: Path | None = None) -> CachedPriceList:
        from benchwright.providers.aws.common import Clients
        from benchwright.providers.aws.config import AwsSettings

        return cls(Clients(AwsSettings(region=region)), region, path)

    def _load(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text())
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def answer(self, key: str, find: Callable[[], float]) -> Price:
        stored = self._load()
        hit = stored.get(key)
        if isinstance(hit, dict) and time.time() - float(hit.get("at", 0)) < CACHE_MAX_AGE_S:
            day = time.strftime("%Y-%m-%d", time.gmtime(float(hit["at"])))
            return Price(float(hit["usd"]), f"{self.source} (cached on this machine {day})")
        price = super().answer(key, find)
        stored[key] = {"usd": price.usd, "at": time.time()}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(stored, indent=0, sort_keys=True))
        tmp.replace(self.path)
        return price
