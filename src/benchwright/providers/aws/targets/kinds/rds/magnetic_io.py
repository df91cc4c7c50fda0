"""RDS magnetic (``standard``) storage bills every I/O request (AmazonRDS ``RDS:StorageIOUsage``, per
request; $0.10 per million in us-east-1): the run's cost line for them.

After a run the count is measured: the DB instance's CloudWatch ReadIOPS + WriteIOPS, each point a
60-second average, so a point stands for value x 60 requests. Before it there is no count; the
estimate is the volume's documented average of about 100 IOPS (MAGNETIC_SOURCE) over the cell's
target time, and the line says so. A Multi-AZ standby's I/O is not observed, so a Multi-AZ magnetic
instance's requests are not priced rather than guessed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from benchwright.judge.credits import CLOUDWATCH_PERIOD_S
from benchwright.providers.aws.pricelist import PriceNotFound
from benchwright.providers.aws.targets.kinds.rds.spec import RdsTarget
from benchwright.runs import CellResult

if TYPE_CHECKING:
    from benchwright.providers.aws.pricing import AwsPriceBook, Lines

IO_METRICS = ("ReadIOPS", "WriteIOPS")
MAGNETIC_AVERAGE_IOPS = 100.0
MAGNETIC_SOURCE = (
    "EBS magnetic volumes, which RDS magnetic storage is, deliver approximately 100 IOPS on average "
    "and burst to hundreds: https://docs.aws.amazon.com/ebs/latest/userguide/ebs-volume-types.html, "
    "previous generation volumes"
)


def measured_requests(cell: CellResult | None) -> float | None:
    """Read + write requests of the DB instance over the collected window (None: a series missing)."""
    if cell is None:
        return None
    pools = [*cell.metrics, *(s for d in cell.phases.values() for s in d.metrics)]
    total = 0.0
    for name in IO_METRICS:
        series = next(
            (s for s in pools if s.name == name and s.source.startswith("cloudwatch:AWS/RDS") and s.points),
            None,
        )
        if series is None:
            return None
        total += sum(p.value for p in series.points) * CLOUDWATCH_PERIOD_S
    return total


def magnetic_io_lines(
    book: AwsPriceBook, target: RdsTarget, cell: CellResult | None, duration_s: float, lines: Lines
) -> None:
    """The magnetic I/O request line of an RDS target on magnetic storage (the rds kind's
    ``io_requests`` calls it for one)."""
    if target.multi_az:
        raise PriceNotFound(
            "magnetic I/O requests: not priced for Multi-AZ (the standby's I/O is not observed)"
        )
    unit = book.rate(
        "AmazonRDS", productFamily="System Operation", usagetype=f"{book.usage_prefix()}RDS:StorageIOUsage"
    )
    per_million = f"{unit.usd * 1e6:g} USD per million"
    measured = measured_requests(cell)
    if measured is not None:
        basis = (
            f"measured: CloudWatch ReadIOPS + WriteIOPS (60 s averages x 60), {measured:,.0f} requests "
            f"at {per_million}"
        )
        lines.add("rds magnetic I/O requests (measured)", measured * unit.usd, [unit], basis)
        return
    count = MAGNETIC_AVERAGE_IOPS * duration_s
    basis = (
        f"{count:,.0f} requests = {MAGNETIC_AVERAGE_IOPS:g} IOPS x {duration_s:,.0f} s of target time "
        f"at {per_million} ({MAGNETIC_SOURCE}); the run's CloudWatch ReadIOPS + WriteIOPS replace it "
        "when collected"
    )
    lines.add("rds magnetic I/O requests (estimate)", count * unit.usd, [unit], basis)
