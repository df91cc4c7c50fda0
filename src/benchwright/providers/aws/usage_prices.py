"""The usage dimensions of a cell's cost: what the target's kind bills by use (its ``usage``: Aurora
Standard's I/O requests, kinds/aurora/usage.py; MemoryDB's data written, kinds/memorydb/usage.py) and
runner <-> target bytes across AZs (per GB, charged in each direction).

Quantities come, best first, from what was measured (CloudWatch's billed VolumeReadIOPs and
VolumeWriteIOPs for Aurora; the EC2 runner hosts' NetworkIn and NetworkOut for bytes), then from the
run's counted operations, then from the workload before the run (providers/aws/usage.py). Each
line's note says which, and that a figure from operations x record size is an estimate.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from benchwright.providers.aws.pricelist import PriceNotFound
from benchwright.providers.aws.targets.kinds import kind_of_provider
from benchwright.providers.aws.usage import GIB, modelled, traffic
from benchwright.runs import CellResult
from benchwright.spec import BenchmarkSpec

if TYPE_CHECKING:
    from benchwright.providers.aws.pricing import AwsPriceBook, Lines

RUNNER_NETWORK_METRICS = ("NetworkIn", "NetworkOut")


def usage_lines(book: AwsPriceBook, spec: BenchmarkSpec, cell: CellResult | None, lines: Lines) -> None:
    """What the target's kind bills by use (its ``usage``: Aurora Standard's I/O, MemoryDB's data
    written), then runner <-> target bytes across AZs."""
    kind = kind_of_provider(spec.target.provider)
    if kind is not None and kind.usage is not None:
        kind.usage(book, spec, cell, lines)
    crossing = crosses_az(spec)
    if crossing:
        _cross_az(book, spec, cell, lines, crossing)


def unmodelled(spec: BenchmarkSpec, what: str) -> PriceNotFound:
    return PriceNotFound(
        f"{what}: not estimated for workload {spec.workload.name} (no per-operation model of its reads "
        "and writes; priced after the run when the cost stage has the measured figure)"
    )


# --------------------------------------------------------------------- cross-AZ transfer
def crosses_az(spec: BenchmarkSpec) -> str | None:
    """Why runner <-> target traffic crosses AZs (None: it stays in one AZ, or no cloud runner, or a
    target no AWS kind places: local, or an endpoint someone else runs)."""
    runner, kind = spec.runner, kind_of_provider(spec.target.provider)
    if runner.platform == "local" or kind is None or kind.zones is None:
        return None
    if runner.placement == "same-az":
        return None
    if runner.placement == "other-az":
        return "runner placement other-az"
    zones = kind.zones(spec.target)
    if runner.placement in zones:
        return None
    where = ", ".join(zones) if zones else "an AZ AWS picks"
    return f"runner in {runner.placement}, target in {where} (counted as crossing)"


def measured_runner_bytes(spec: BenchmarkSpec, cell: CellResult | None) -> float | None:
    """The EC2 runner hosts' NetworkIn + NetworkOut over the cell's window. Only when the target is
    not on EC2 too, whose instances would be counted with the runners'."""
    kind = kind_of_provider(spec.target.provider)
    if cell is None or spec.runner.platform != "ec2" or (kind is not None and kind.on_ec2):
        return None
    series = [m for m in cell.metrics if m.name in RUNNER_NETWORK_METRICS and "AWS/EC2" in m.source]
    if not series:
        return None
    return sum(p.value for m in series for p in m.points)


def _cross_az(
    book: AwsPriceBook, spec: BenchmarkSpec, cell: CellResult | None, lines: Lines, crossing: str
) -> None:
    unit = book.rate(
        "AWSDataTransfer",
        transferType="IntraRegion",
        usagetype=f"{book.usage_prefix()}DataTransfer-Regional-Bytes",
    )
    measured = measured_runner_bytes(spec, cell)
    if measured is not None:
        gb = measured / GIB
        basis = (
            f"{crossing}; measured: runner hosts' NetworkIn + NetworkOut, {gb:,.3f} GB, charged out and in"
        )
        lines.add("cross-AZ transfer runner <-> target (measured)", 2 * gb * unit.usd, [unit], basis)
        return
    if not modelled(spec):
        raise unmodelled(spec, "cross-AZ transfer")
    found = traffic(spec, cell)
    assert found is not None
    basis = f"{crossing}; {found.basis}; {found.moved_gb:,.3f} GB moved, charged out and in"
    lines.add("cross-AZ transfer runner <-> target (estimate)", 2 * found.moved_gb * unit.usd, [unit], basis)
