"""Usage the spec alone does not give the price book: the reads and writes a workload makes and the
bytes they move. Before a run they are estimated from the workload (operation counts x record size);
after it, from the operations the run counted. Each figure carries its basis, which the price book
writes next to the line item it prices ("estimate from the workload: ...").

Modelled workloads: YCSB (its proportions, record and field sizes), redis-bench (its tests, requests
and value size), and per transaction TPC-B (pgbench's script: 1 SELECT, 3 UPDATEs, 1 INSERT) and
sysbench OLTP (its statement counts; a range is counted as one read). Others (TPC-C, SQL scripts)
have no model here; a dimension that needs one says so and the estimate is incomplete.
"""

from __future__ import annotations

from dataclasses import dataclass

from benchwright.results import base_operation
from benchwright.runs import CellResult
from benchwright.spec import BenchmarkSpec, phase_seconds
from benchwright.spec.checks import enabled_phases, workload_properties
from benchwright.spec.duration import ASSUMED_OPS_PER_S

KEY_BYTES = 23  # a YCSB key: "user" and up to 19 digits
TPCB_ROW_BYTES = 100.0  # pgbench_accounts: aid, bid, abalance, filler char(84)
TPCB_ROWS_PER_SCALE = 100_000
OLTP_ROW_BYTES = 190.0  # sbtest: id, k, c char(120), pad char(60)
REDIS_BENCH_WRITES = {"set", "incr", "lpush", "rpush", "sadd", "hset", "zadd", "mset", "lpop", "rpop", "spop"}
WRITE_OPERATIONS = {
    "UPDATE",
    "INSERT",
    "READ-MODIFY-WRITE",
    "DELETE",
    *(t.upper() for t in REDIS_BENCH_WRITES),
}
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


@dataclass(frozen=True)
class _Shape:
    """Per operation: read and write shares and the bytes of each (from the workload's properties)."""

    read_share: float
    write_share: float
    read_bytes: float
    write_bytes: float
    load_bytes: float  # one loaded record
    load_rows: float | None = None  # rows the load writes, when the workload sizes it so
    per_transaction: bool = False  # an operation is a transaction of several statements


def _ycsb_shape(spec: BenchmarkSpec, phase: str) -> _Shape:
    from benchwright.runner.workloads.ycsb.properties import core_settings

    s = core_settings(workload_properties(spec, phase))
    record = float(s.fieldcount * s.fieldlength)
    field = float(s.fieldlength)
    scan = (s.minscanlength + s.maxscanlength) / 2.0
    reads = s.readproportion + s.readmodifywriteproportion + s.scanproportion * scan
    update_bytes = record if s.writeallfields else field
    writes = s.updateproportion + s.insertproportion + s.readmodifywriteproportion
    written = s.updateproportion * update_bytes + s.insertproportion * record
    written += s.readmodifywriteproportion * update_bytes
    return _Shape(reads, writes, record, written / writes if writes else 0.0, record)


def _redis_bench_shape(spec: BenchmarkSpec, phase: str) -> _Shape:
    props = workload_properties(spec, phase)
    tests = [t.strip().lower() for t in props.get("redisbench.tests", "set,get").split(",") if t.strip()]
    size = float(props.get("redisbench.datasize", "3") or 3)
    writes = sum(1 for t in tests if t in REDIS_BENCH_WRITES) / max(len(tests), 1)
    return _Shape(1.0 - writes, writes, size, size, size)


def _tpcb_shape(spec: BenchmarkSpec, phase: str) -> _Shape:
    scale = _number(workload_properties(spec, "load").get("tpcb.scale")) or 1.0
    row = TPCB_ROW_BYTES
    return _Shape(1.0, 4.0, row, row, row, scale * TPCB_ROWS_PER_SCALE, per_transaction=True)


def _oltp_shape(spec: BenchmarkSpec, phase: str) -> _Shape:
    from benchwright.runner.workloads.oltp.workload import DEFAULTS

    props = workload_properties(spec, phase)

    def n(key: str) -> float:
        return _number(props.get(f"oltp.{key}")) or float(DEFAULTS.get(key, 1))

    test = props.get("oltp.test", "read_write")
    ranges = sum(n(k) for k in ("simple_ranges", "sum_ranges", "order_ranges", "distinct_ranges"))
    reads = 1.0 if test == "point_select" else (0.0 if test == "write_only" else n("point_selects") + ranges)
    writes = (
        0.0
        if test in ("read_only", "point_select")
        else (n("index_updates") + n("non_index_updates") + 2 * n("delete_inserts"))
    )
    returned = (n("point_selects") + ranges * n("range_size")) * OLTP_ROW_BYTES / max(reads, 1.0)
    rows = n("tables") * n("table_size")
    return _Shape(reads, writes, returned, OLTP_ROW_BYTES, OLTP_ROW_BYTES, rows, per_transaction=True)


SHAPES = {"ycsb": _ycsb_shape, "redis-bench": _redis_bench_shape, "tpcb": _tpcb_shape, "oltp": _oltp_shape}


def modelled(spec: BenchmarkSpec) -> bool:
    return spec.workload.name in SHAPES


def _phase_ops(spec: BenchmarkSpec, phase: str, shape: _Shape) -> tuple[float, str]:
    """Operations a phase will make: its count, or its time at its rate (or the assumed rate)."""
    if phase == "load" and shape.load_rows:
        return shape.load_rows, "the rows the load writes"
    p = getattr(spec.workload.phases, phase)
    props = workload_properties(spec, phase)
    key = "recordcount" if phase == "load" else "operationcount"
    if spec.workload.name == "redis-bench" and props.get("redisbench.requests"):
        tests = [t for t in props.get("redisbench.tests", "set,get").split(",") if t.strip()]
        return float(props["redisbench.requests"]) * max(len(tests), 1), "requests x tests"
    count = (p.operation_count if p is not None else None) or _number(props.get(key))
    seconds = phase_seconds(spec, phase)
    rate = (p.target_rate if p is not None else None) or _number(props.get("target"))
    if count and (rate is None or count / rate <= seconds):
        return count, key
    if rate:
        return rate * seconds, f"{rate:g} ops/s x {seconds:g} s"
    return ASSUMED_OPS_PER_S * seconds, f"an assumed {ASSUMED_OPS_PER_S:g} ops/s x {seconds:g} s"


def _number(value: str | None) -> float | None:
    try:
        return float(value) if value else None
    except ValueError:
        return None


def planned(spec: BenchmarkSpec) -> Traffic | None:
    """The workload's reads and writes before the run (None: no model for this workload)."""
    shape_of = SHAPES.get(spec.workload.name)
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
    shape_of = SHAPES.get(spec.workload.name)
    if shape_of is None or not cell.phases:
        return None
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
            if base_operation(name).upper() in WRITE_OPERATIONS:  # a failed write still reached the server
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
