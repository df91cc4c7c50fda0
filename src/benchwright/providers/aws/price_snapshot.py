"""Make the cached price list that ships with benchwright (providers/aws/price_list.json): price every
given spec, in its own region, on both runner classes (what ``validate`` shows), and the default
measured runner's type in every region a spec names, and keep exactly the Price List rows the
answers came from.

    python -m benchwright.providers.aws.price_snapshot --from tests/data/pricing \\
        --date 2026-11-29 examples/*.aws.yaml infra/nightly.yaml > src/benchwright/providers/aws/price_list.json
    python -m benchwright.providers.aws.price_snapshot --from api --date "$(date -u +%F)" ...

``--from api`` records the rows from the Price List API (needs AWS credentials with
pricing:GetProducts); ``--from DIR`` from saved GetProducts responses, with the provenance recorded
next to them in ``DIR/sources.json``.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchwright.providers.aws.pricelist import ExcerptPriceList, PriceList


class Recorder:
    """Wraps a price list's ``used`` hook: the rows its answers came from, by service."""

    def __init__(self, prices: PriceList) -> None:
        self.rows: dict[str, list[str]] = {}
        self.prices = prices
        prices.on_use = self.keep

    def keep(self, service: str, item: Any) -> None:
        row = item if isinstance(item, str) else json.dumps(item)
        rows = self.rows.setdefault(service, [])
        if row not in rows:
            rows.append(row)


def snapshot(specs: Sequence[str], source: str, date: str, how: str) -> dict[str, Any]:
    """Price every spec file (every cell) and return the packaged copy's content."""
    from benchwright.experiments.budget import estimate_spec, region_of
    from benchwright.experiments.runner_classes import class_costs
    from benchwright.providers.aws.common import Clients
    from benchwright.providers.aws.config import AwsSettings
    from benchwright.spec import load_suite

    rows: dict[str, list[str]] = {}
    missing: list[str] = []
    for path in specs:
        for spec in load_suite(path).benchmarks:
            region = region_of(spec)
            prices = (
                PriceList(Clients(AwsSettings(region=region)), region)
                if source == "api"
                else ExcerptPriceList.from_directory(source, region)
            )
            recorder = Recorder(prices)
            budget = estimate_spec(spec, prices)
            missing += budget.missing
            missing += [m for c in class_costs(spec, budget, prices) for m in c.missing]
            missing += _default_runner(prices, region)
            missing += _monitoring_rate(prices, spec.target.provider)
            for service, found in recorder.rows.items():
                rows.setdefault(service, [])
                rows[service] += [r for r in found if r not in rows[service]]
    if missing:
        raise SystemExit("prices missing: " + "; ".join(sorted(set(missing))))
    provenance = _provenance(source, rows)
    return {"date": date, "how": how, "sources": provenance, "services": dict(sorted(rows.items()))}


def _default_runner(prices: PriceList, region: str) -> list[str]:
    """Price the default measured runner's type (a spec that names none runs on it)."""
    from benchwright.providers.aws.pricelist import PriceNotFound
    from benchwright.providers.aws.pricing import AwsPriceBook
    from benchwright.spec.runners import DEFAULT_RUNNER_INSTANCE_TYPE

    try:
        AwsPriceBook(prices).ec2_hourly(DEFAULT_RUNNER_INSTANCE_TYPE)
    except PriceNotFound:
        return [f"ec2 {DEFAULT_RUNNER_INSTANCE_TYPE} in {region}"]
    return []


def _monitoring_rate(prices: PriceList, provider: str) -> list[str]:
    """An RDS or Aurora spec may ask for Enhanced Monitoring (target.monitoring): its log ingestion
    rate is kept for the run's cost, which is priced with the document size the run measures."""
    from benchwright.providers.aws.pricelist import PriceNotFound
    from benchwright.providers.aws.pricing import AwsPriceBook
    from benchwright.providers.aws.targets.kinds import kind_of_provider

    kind = kind_of_provider(provider)
    if kind is None or "AmazonCloudWatch" not in kind.price_services:  # no Enhanced Monitoring
        return []
    book = AwsPriceBook(prices)
    try:
        book.rate("AmazonCloudWatch", usagetype=f"{book.usage_prefix()}DataProcessing-Bytes")
    except PriceNotFound:
        return [f"cloudwatch logs ingestion in {prices.region}"]
    return []


def _provenance(source: str, rows: dict[str, list[str]]) -> dict[str, Any]:
    """Where each kept row was checked (``DIR/sources.json`` by service|sku), or the API."""
    if source == "api":
        return {"*": "recorded from the Price List API (pricing:GetProducts)"}
    known = json.loads((Path(source) / "sources.json").read_text()).get("rows", {})
    keys = [f"{s}|{json.loads(r)['product']['sku']}" for s, found in rows.items() for r in found]
    return {k: known.get(k, "no provenance recorded") for k in sorted(keys)}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("specs", nargs="+")
    parser.add_argument("--from", dest="source", required=True, help="api, or a directory of responses")
    parser.add_argument("--date", required=True, help="the day the rows were checked (YYYY-MM-DD)")
    parser.add_argument("--how", default="", help="how the rows were obtained, in one sentence")
    args = parser.parse_args(argv)
    how = args.how or (
        "recorded from the Price List API"
        if args.source == "api"
        else f"rows of {args.source}, each checked as its 'sources' entry says"
    )
    json.dump(snapshot(args.specs, args.source, args.date, how), sys.stdout, indent=1)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
