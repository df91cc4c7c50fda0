"""The cost of ``target.monitoring``: Enhanced Monitoring's CloudWatch Logs ingestion and Performance
Insights' retention.

- Enhanced Monitoring writes one document per interval into CloudWatch Logs for as long as the
  instance lives, billed as log data ingested (AmazonCloudWatch ``DataProcessing-Bytes``, per GB).
  The documents' size is the run's own (the ``em.document_bytes`` series the collector measures);
  before a run there is no honest size, so the line is not priced then (never a guessed figure).
  The account's monthly CloudWatch Logs free allowance is not subtracted: it is the account's.
- Performance Insights at 7 days of retention is free: the free tier, kept as the Standard mode of
  CloudWatch Database Insights, and the PI API has no charge of its own (PI_FREE_SOURCE).
"""

from __future__ import annotations

import statistics
from typing import TYPE_CHECKING

from benchwright.providers.aws.pricelist import Price, PriceNotFound
from benchwright.providers.aws.server_series import DOC_BYTES
from benchwright.providers.aws.usage import GIB
from benchwright.runs import CellResult
from benchwright.spec import BenchmarkSpec

if TYPE_CHECKING:
    from benchwright.providers.aws.pricing import AwsPriceBook, Lines

PI_FREE_SOURCE = (
    "https://docs.aws.amazon.com/AmazonRDS/latest/UserGuide/USER_PerfInsights.Overview.cost.html and "
    "https://docs.aws.amazon.com/AmazonRDS/latest/AuroraUserGuide/USER_PerfInsights.Enabling.html "
    "(checked 2026-11-28: 7 days of retention is the free tier; the API continues unchanged after the "
    "console's end of life, billed with Database Insights, whose Standard mode keeps the free 7 days)"
)


def measured_document_bytes(cell: CellResult | None) -> float | None:
    """The mean size of the run's Enhanced Monitoring documents (None: none collected)."""
    if cell is None:
        return None
    sizes = [p.value for m in cell.metrics if m.name == DOC_BYTES for p in m.points]
    return statistics.fmean(sizes) if sizes else None


def monitoring_lines(
    book: AwsPriceBook, spec: BenchmarkSpec, cell: CellResult | None, duration_s: float, lines: Lines
) -> None:
    monitoring = getattr(spec.target, "monitoring", None)
    if monitoring is None or not monitoring.enabled:
        return
    if monitoring.performance_insights:
        basis = "7 days of retention (PerformanceInsightsRetentionPeriod 7): the free tier"
        lines.add("performance insights retention", 0.0, [Price(0.0, PI_FREE_SOURCE)], basis)
    if not monitoring.enhanced_s:
        return
    unit = book.rate("AmazonCloudWatch", usagetype=f"{book.usage_prefix()}DataProcessing-Bytes")
    size = measured_document_bytes(cell)
    if size is None:
        raise PriceNotFound(
            "enhanced monitoring logs: not estimated before the run (the documents' size is measured "
            "by the run's collection of RDSOSMetrics)"
        )
    documents = duration_s / monitoring.enhanced_s
    gb = documents * size / GIB
    basis = (
        f"{documents:,.0f} documents (one per {monitoring.enhanced_s} s over {duration_s:,.0f} s) x "
        f"{size:,.0f} bytes measured = {gb:,.4f} GB ingested; the account's free allowance not subtracted"
    )
    lines.add("enhanced monitoring logs ingestion (estimate)", gb * unit.usd, [unit], basis)
