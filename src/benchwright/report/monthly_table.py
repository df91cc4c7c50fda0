"""Monthly configuration prices in `benchwright table` and the HTML report: each cell's target
configuration (the run's spec with the cell's matrix values) priced per month from the packaged
price list (providers/aws/monthly.py), next to the run's throughput per monthly dollar."""

from __future__ import annotations

import json
import statistics
from collections.abc import Callable, Sequence
from functools import cache, lru_cache
from typing import TYPE_CHECKING, cast

from pydantic import ValidationError

from benchwright.errors import SpecError
from benchwright.runs import CellResult, RunRecord

if TYPE_CHECKING:  # the AWS price code is imported when a monthly metric is asked for
    from benchwright.providers.aws.monthly import MonthlyPrice, MonthlyPricer, Part
    from benchwright.report.table_metrics import Fact
    from benchwright.spec.targets import TargetSpec

MONTHLY_METRICS = ("monthly_server_usd", "monthly_disk_usd", "monthly_io_usd", "monthly_total_usd")
SECTION_METRICS = [*MONTHLY_METRICS, "ops_per_monthly_usd"]
IO_NAMES = (("ReadIOPS", "VolumeReadOps"), ("WriteIOPS", "VolumeWriteOps"))


@cache
def _pricer(region: str) -> MonthlyPricer:
    from benchwright.providers.aws.monthly import MonthlyPricer
    from benchwright.providers.aws.pricelist import PackagedPriceList, packaged_copy

    data = packaged_copy()
    return MonthlyPricer(PackagedPriceList(region, data), dict(data.get("sources") or {}))


def io_rate(cell: CellResult) -> float | None:
    """Mean read + write I/O per second of the cell's CloudWatch series (None without both)."""
    pools = [*cell.metrics, *(s for d in cell.phases.values() for s in d.metrics)]
    total = 0.0
    for names in IO_NAMES:
        series = next(
            (s for s in pools if s.name in names and s.source.startswith("cloudwatch") and s.points), None
        )
        if series is None:
            return None
        total += statistics.fmean(p.value for p in series.points)
    return total


def _on_aws(run: RunRecord) -> bool:
    """The run's target is one AWS bills (not local, not an endpoint)."""
    target = (run.spec or {}).get("target") or {}
    return isinstance(target, dict) and target.get("provider") not in (None, "local", "endpoint")


def monthly_price(run: RunRecord, cell: CellResult) -> MonthlyPrice | None:
    """The cell's configuration priced per month; None for a target AWS does not bill, or a stored
    spec that no longer validates."""
    if not _on_aws(run):
        return None
    targets = _cell_targets(json.dumps(run.spec, default=str))  # key order kept: it names the cells
    found = targets.get(cell.cell_id, targets.get("default")) if targets else None
    if found is None:
        return None
    region, concrete = found
    return _pricer(region).price(concrete, io_rate(cell))


@lru_cache(maxsize=256)
def _cell_targets(spec_json: str) -> dict[str, tuple[str, TargetSpec]] | None:
    """Each matrix cell's region and target (also as ``default`` without a matrix), once per spec."""
    from benchwright.experiments.budget import region_of
    from benchwright.spec import BenchmarkSpec, expand_matrix

    try:
        spec = BenchmarkSpec.model_validate(json.loads(spec_json))
        cells = expand_matrix(spec)
    except (ValidationError, SpecError):
        return None
    targets = {c.cell_id: (region_of(c.spec), c.spec.target) for c in cells}
    if len(cells) == 1:
        targets["default"] = targets[cells[0].cell_id]
    return targets


def part_getter(part: str | None) -> Callable[[Fact], float | None]:
    """A table metric: one part of the monthly price (None: the total)."""
    which = cast("Part | None", part)

    def get(f: Fact) -> float | None:
        price = monthly_price(f.run, f.cell)
        if price is None:
            return None
        return price.total if which is None else price.part_usd(which)

    return get


def ops_per_monthly_usd(f: Fact) -> float | None:
    """The phase's throughput (ops/s) per monthly dollar of its configuration."""
    price = monthly_price(f.run, f.cell)
    total = price.total if price is not None else None
    if not total or f.doc.throughput is None:
        return None
    return f.doc.throughput / total


def notes(runs: Sequence[RunRecord], metrics: Sequence[str] = SECTION_METRICS) -> list[str]:
    """When ``metrics`` has a monthly one: a note per configuration, every line with where its
    price came from, or what is missing."""
    if not any(n in SECTION_METRICS for n in metrics):
        return []
    out: dict[str, str] = {}
    for run in runs:
        if _on_aws(run) and _cell_targets(json.dumps(run.spec, default=str)) is None:
            out[run.run_id] = f"{run.run_id}: its stored spec no longer validates: no monthly price"
        for cell in run.cells:
            price = monthly_price(run, cell)
            if price is None or price.configuration in out:
                continue
            parts = [
                f"{line.item} ({line.source})"
                if line.usd is None
                else f"{line.item} {line.usd:,.2f} ({line.source})"
                for line in price.lines
            ]
            out[price.configuration] = f"{price.configuration}: " + "; ".join([*parts, *price.notes])
    return list(out.values())


def has_aws_target(record: RunRecord) -> bool:
    return any(monthly_price(record, c) is not None for c in record.cells)
