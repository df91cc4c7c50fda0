"""Usage the spec alone does not give the price book: the reads and writes a workload makes and the
bytes they move. Before a run they are estimated from the workload (operation counts x record size);
after it, from the operations the run counted. Each figure carries its basis, which the price book
writes next to the line item it prices ("estimate from the workload: ...").

Modelled workloads are those whose descriptor (runner/workloads/<name>/descriptor.py) gives a
``usage_shape``: YCSB (its proportions, record and field sizes), redis-bench (its tests, requests
and value size), and per transaction TPC-B (pgbench's script: 1 SELECT, 3 UPDATEs, 1 INSERT) and
sysbench OLTP (its statement counts; a range is counted as one read). Others (TPC-C, SQL scripts)
have no model; a dimension that needs one says so and the estimate is incomplete.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from benchwright.results import base_operation
from benchwright.runs import CellResult
from benchwright.spec import BenchmarkSpec, phase_seconds
from benchwright.spec.duration import ASSUMED_OPS_PER_S
from benchwright.spec.properties import enabled_phases, workload_properties

if TYPE_CHECKING:  # the registry imports every workload: read only when a shape is asked for
    from benchwright.runner.workloads.descriptor import UsageShape

KEY_BYTES = 23  # a YCSB key: "user" and up to 19 digits
GIB = 1024.0**3


@dataclass(frozen=True)
class Traffic:
    """What a cell's operations read and write, and on what that figure rests."""

    reads: float  # operations that read a record
    writes: float  # operations that write one
    read_bytes: float  # bytes one read returns
    write_bytes: float  # bytes one write sends
    basis: str

    @property
    def written_gb(self) -> float:
        return self.writes * self.write_bytes / GIB

    @property
    def moved_gb(self) -> float:
        """Bytes between client and server, both ways: values and keys (protocol framing left out)."""
        ops = self.reads + self.writes
        return (self.reads * self.read_bytes + self.writes * self.write_bytes + ops * KEY_BYTES) / GIB


def _shape_of(spec: BenchmarkSpec) -> Callable[[BenchmarkSpec, str], UsageShape] | None:
    """The workload's usage shape by phase (its descriptor's ``usage_shape``), None: no model."""
    from benchwright.runner.workloads.registry import descriptors

    found = descriptors().get(spec.workload.name)
    if found is None or found.usage_shape is None:
        return None
    shape = found.usage_shape

    def of(spec: BenchmarkSpec, phase: str) -> UsageShape:
        return shape(workload_properties(spec, phase), workload_properties(spec, "load"))

    return of


def _write_operations() -> set[str]:
    """Operation names that write, as the results record them (every workload's descriptor)."""
    from benchwright.runner.workloads.registry import descriptors

    return {op for found in descriptors().values() for op in found.write_operations}


def modelled(spec: BenchmarkSpec) -> bool:
    return _shape_of(spec) is not None


def _phase_ops(spec: BenchmarkSpec, phase: str, shape: UsageShape) -> tuple[float, str]:
    """Operations a phase will make: its count, or its time at its rate (or the assumed rate)."""
    if phase == "load" and shape.load_rows:
        return shape.load_rows, "the rows the load writes"
    p = getattr(spec.workload.phases, phase)
    props = workload_properties(spec, phase)
    key = "recordcount" if phase == "load" else "operationcount"
    requests = _fixed_requests(spec, props)
    if requests is not None:
        return requests, "requests x tests"
    count = (p.operation_count if p is not None else None) or _number(props.get(key))
    seconds = phase_seconds(spec, phase)
    rate = (p.target_rate if p is not None else None) or _number(props.get("target"))
    if count and (rate is None or count / rate <= seconds):
        return count, key
    if rate:
        return rate * seconds, f"{rate:g} ops/s x {seconds:g} s"
    return ASSUMED_OPS_PER_S * seconds, f"an assumed {ASSUMED_OPS_PER_S:g} ops/s x {seconds:g} s"


def _fixed_requests(spec: BenchmarkSpec, props: dict[str, str]) -> float | None:
    from benchwright.runner.workloads.registry import descriptors

    found = descriptors().get(spec.workload.name)
    return None if found is None or found.fixed_requests is None else found.fixed_requests(props)


def _number(value: str | None) -> float | None:
    try:
        return float(value) if value else None
    except ValueError:
        return None


def planned(spec: BenchmarkSpec) -> Traffic | None:
    """The workload's reads and writes before the run (None: no model for this workload)."""
    shape_of = _shape_of(spec)
    if shape_of is None:
        return None
    reads = writes = read_bytes = write_bytes = 0.0
    basis: list[str] = []
    for phase in enabled_phases(spec):
        shape = shape_of(spec, phase)
        ops, how = _phase_ops(spec, phase, shape)
        if phase == "load":
            writes += ops
            write_bytes += ops * shape.load_bytes
        else:
            reads += ops * shape.read_share
            writes += ops * shape.write_share
            read_bytes += ops * shape.read_share * shape.read_bytes
            write_bytes += ops * shape.write_share * shape.write_bytes
        basis.append(f"{phase} {ops:,.0f} ops ({how})")
    return Traffic(
        reads,
        writes,
        read_bytes / reads if reads else 0.0,
        write_bytes / writes if writes else 0.0,
        "estimate from the workload: " + ", ".join(basis),
    )


def counted(spec: BenchmarkSpec, cell: CellResult) -> Traffic | None:
    """The reads and writes the run counted (every phase, failed operations included: they were
    sent), sized by the workload's record and value sizes."""
    shape_of = _shape_of(spec)
    if shape_of is None or not cell.phases:
        return None
    writes_of = _write_operations()
    reads = writes = read_bytes = write_bytes = 0.0
    for phase, doc in cell.phases.items():
        shape = shape_of(spec, phase if phase in ("load", "warmup", "run") else "run")
        if shape.per_transaction:  # every operation a transaction of the shape's statements
            ops = shape.load_rows if phase == "load" and shape.load_rows else float(doc.operations_total)
            reads += 0.0 if phase == "load" else ops * shape.read_share
            writes += ops if phase == "load" else ops * shape.write_share
            read_bytes += 0.0 if phase == "load" else ops * shape.read_share * shape.read_bytes
            write_bytes += ops * (
                shape.load_bytes if phase == "load" else shape.write_share * shape.write_bytes
            )
            continue
        for name, summary in doc.operations.items():
            if base_operation(name).upper() in writes_of:  # a failed write still reached the server
                size = shape.load_bytes if phase == "load" else shape.write_bytes
                writes += summary.operations
                write_bytes += summary.operations * size
            else:
                reads += summary.operations
                read_bytes += summary.operations * shape.read_bytes
    return Traffic(
        reads,
        writes,
        read_bytes / reads if reads else 0.0,
        write_bytes / writes if writes else 0.0,
        f"estimate from the run's counted operations ({reads:,.0f} reads, {writes:,.0f} writes)",
    )


def traffic(spec: BenchmarkSpec, cell: CellResult | None) -> Traffic | None:
    """After a run, what it counted; before it (or with no operations recorded), the plan."""
    if cell is not None:
        found = counted(spec, cell)
        if found is not None and found.reads + found.writes > 0:
            return found
    return planned(spec)
