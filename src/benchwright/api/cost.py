"""The stage's cost cap per request of ``POST /runs`` (issue 30 item 4): ``api.max_usd_per_request``.

The allow-list of instance classes bounds what one run may start; this bounds what one request may
spend: every benchmark it would start is priced with the same price book as ``validate`` and the
workflow's PriceRun stage (benchwright.experiments.budget), summed, and held to the stage's limit.

Prices come from the cached price list that ships with benchwright (providers/aws/price_list.json):
the API answers within API Gateway's 29 s from data it carries, with no Price List call (which has
no endpoint in most regions and no place in the API role's permissions). A request whose estimate
is incomplete (a class the copy has no row for) is refused, since the cap cannot be promised, unless
the stage sets ``api.allow_unpriced`` (then the priced part alone is held to the cap).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from benchwright.experiments.budget import SpecBudget, estimate_spec, region_of
from benchwright.providers.aws.pricelist import PackagedPriceList, PriceList
from benchwright.spec import BenchmarkSpec

LIMIT_FIELD = "api.max_usd_per_request"
UNPRICED_FIELD = "api.allow_unpriced"


class CostRefused(Exception):
    """The request is over the stage's cost cap, or its cost cannot be estimated."""

    def __init__(self, code: str, message: str, field: str) -> None:
        self.code, self.field = code, field
        super().__init__(message)


@dataclass(frozen=True)
class CostCap:
    max_usd: float
    allow_unpriced: bool = False


def _packaged(region: str) -> PriceList:
    return PackagedPriceList(region)


def estimate(
    specs: Sequence[BenchmarkSpec], prices_for: Callable[[str], PriceList] = _packaged
) -> list[SpecBudget]:
    """Each benchmark's budget, priced in its own region."""
    return [estimate_spec(spec, prices_for(region_of(spec))) for spec in specs]


def check_cost(
    specs: Sequence[BenchmarkSpec],
    cap: CostCap,
    prefix: Callable[[int], str] = lambda i: "",
    prices_for: Callable[[str], PriceList] = _packaged,
) -> float:
    """The request's estimated USD; ``CostRefused`` naming the limit and the estimate when over it,
    or naming the benchmark and the missing prices when it cannot be estimated."""
    budgets = estimate(specs, prices_for)
    total = round(sum(b.total_usd for b in budgets), 4)
    for i, budget in enumerate(budgets):
        if budget.missing and not cap.allow_unpriced:
            raise CostRefused(
                "cost_unknown",
                f"{prefix(i)}{budget.name}: the cost cannot be estimated, so the stage's {LIMIT_FIELD} of "
                f"{cap.max_usd:.2f} USD cannot be checked ({'; '.join(budget.missing)}); nothing was "
                f"started (an operator may set {UNPRICED_FIELD} to admit what the price list lacks)",
                LIMIT_FIELD,
            )
    if total > cap.max_usd:
        worst = max(budgets, key=lambda b: b.total_usd)
        where = budgets.index(worst)
        partial = " (priced part only: prices are missing)" if any(b.missing for b in budgets) else ""
        raise CostRefused(
            "cost_over_limit",
            f"the request is estimated at {total:.2f} USD{partial}, over the stage's {LIMIT_FIELD} of "
            f"{cap.max_usd:.2f} USD (the costliest benchmark, {prefix(where)}{worst.name}, "
            f"{worst.total_usd:.2f} USD); nothing was started",
            LIMIT_FIELD,
        )
    return total
