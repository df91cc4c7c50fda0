"""Aurora Standard's I/O requests (per million), what an Aurora target bills by use beyond its hours
(its kind's ``usage``; usage_prices.usage_lines adds it to a cell's cost).

The count comes, best first, from CloudWatch's billed VolumeReadIOPs and VolumeWriteIOPs, then from
the run's counted operations, then from the workload before the run (providers/aws/usage.py); the
line's note says which, and that a figure from operations x record size is an estimate.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from benchwright.providers.aws.usage import Traffic, traffic
from benchwright.providers.aws.usage_prices import unmodelled
from benchwright.runs import CellResult
from benchwright.spec import BenchmarkSpec

if TYPE_CHECKING:
    from benchwright.providers.aws.pricing import AwsPriceBook, Lines

AURORA_IO_BYTES = 4096.0  # a write I/O carries up to 4 KiB of log records (Aurora's I/O unit)
AURORA_IO_METRICS = ("VolumeReadIOPs", "VolumeWriteIOPs")  # billed I/Os per 5-minute period, per cluster


def measured_aurora_io(cell: CellResult | None) -> float | None:
    """Billed read + write I/Os from CloudWatch over the cell's window (each point a 5-minute count)."""
    if cell is None:
        return None
    series = [m for m in cell.metrics if m.name in AURORA_IO_METRICS and "DBClusterIdentifier" in m.source]
    if not series:
        return None
    return sum(p.value for m in series for p in m.points)


def aurora_io_lines(book: AwsPriceBook, spec: BenchmarkSpec, cell: CellResult | None, lines: Lines) -> None:
    unit = book.rate(
        "AmazonRDS", productFamily="System Operation", usagetype=f"{book.usage_prefix()}Aurora:StorageIOUsage"
    )
    measured = measured_aurora_io(cell)
    if measured is not None:
        basis = f"measured: CloudWatch VolumeReadIOPs + VolumeWriteIOPs, {measured:,.0f} billed I/Os"
        lines.add("aurora I/O requests (measured)", measured * unit.usd, [unit], basis)
        return
    found = traffic(spec, cell)
    if found is None:
        raise unmodelled(spec, "aurora I/O requests")
    ios = aurora_ios(found)
    basis = (
        f"{found.basis}; {ios:,.0f} I/Os = writes x 4 KiB log units + every read a cache miss "
        "(an upper bound for reads)"
    )
    lines.add("aurora I/O requests (estimate)", ios * unit.usd, [unit], basis)


def aurora_ios(found: Traffic) -> float:
    """Write I/Os: one per 4 KiB of log per write; read I/Os: one per read (every read missing the
    buffer cache, the most a read can cost)."""
    per_write = max(1.0, -(-found.write_bytes // AURORA_IO_BYTES))
    return found.writes * per_write + found.reads
