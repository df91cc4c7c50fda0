"""MemoryDB's data written (per GB), what a MemoryDB target bills by use beyond its hours (its kind's
``usage``; usage_prices.usage_lines adds it to a cell's cost), estimated from the run's writes x
value size (providers/aws/usage.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from benchwright.providers.aws.targets.kinds.memorydb.spec import MemoryDbTarget
from benchwright.providers.aws.usage import traffic
from benchwright.providers.aws.usage_prices import unmodelled
from benchwright.runs import CellResult
from benchwright.spec import BenchmarkSpec

if TYPE_CHECKING:
    from benchwright.providers.aws.pricing import AwsPriceBook, Lines


def memorydb_written_lines(
    book: AwsPriceBook, target: MemoryDbTarget, spec: BenchmarkSpec, cell: CellResult | None, lines: Lines
) -> None:
    found = traffic(spec, cell)
    if found is None:
        raise unmodelled(spec, "memorydb data written")
    engine = "Valkey" if target.cache_engine == "valkey" else "Redis"
    unit = book.prices.lookup_by_unit("AmazonMemoryDB", "GB", ("written", engine.lower()))
    basis = f"{found.basis}; {found.written_gb:,.3f} GB = writes x value size"
    lines.add(f"memorydb data written ({engine}, estimate)", found.written_gb * unit.usd, [unit], basis)
