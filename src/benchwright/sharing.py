"""Which matrix cells share one provisioned target and one loaded dataset.

A YCSB or sysbench user loads once and runs many: a sweep over threads or operation mixes runs every
step on the same loaded data, on the same server. Benchwright does the same:

- A *target group* is the cells (and repeats) of one spec whose ``target`` sections are equal. The
  group provisions its target once, runs its cells one after another and tears it down once, also
  when a cell fails.
- Within a group, a *dataset* is the cells whose load phase would write the same data: the same
  workload and the same load-phase properties once the run settings below are set aside (threads,
  target rate, operation count and mix, redis-benchmark tests and clients, TPC-C mix ...). The first
  cell of a dataset loads; the others run on that data, and their results say so (``SharedData``:
  which cell loaded, how many cells ran on the data before). A load resets the target for its own
  dataset and a run checks that it finds its cell's data (runner/dataset.py), so the datasets of a
  group follow one another on the one target.

Conservative by design: a property not known to be a run setting is taken to shape the data (an
extra load, never wrong data). Cells that change the target itself (``events``: failover, restart;
``operations``) and cells whose measured phase is the load get a target or a dataset of their own.
A run phase that updates (YCSB updates, TPC-C, OLTP) still shares the load, as the seeds did: the
result's ``runs_before`` says how many cells ran on the data first. A YCSB run phase that inserts
(workloads D and E) gets a load of its own: its new keys start after ``recordcount``, so a second
inserting cell on the same data would collide with the first one's keys (YCSB's own guidance is to
reload before such a workload).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from benchwright.spec.duration import phase_seconds
from benchwright.spec.matrix import Cell, expand_matrix
from benchwright.spec.properties import enabled_phases, workload_properties

if TYPE_CHECKING:
    from benchwright.spec import BenchmarkSpec

# Properties that change how the run phase drives the data, never what the load writes.
RUN_SETTINGS = frozenset(
    {
        # YCSB core workload: client, pacing, operation mix and key choice
        "threadcount", "target", "operationcount", "maxexecutiontime", "workload",
        "readproportion", "updateproportion", "insertproportion", "scanproportion",
        "readmodifywriteproportion", "deleteproportion", "requestdistribution", "zipfianconstant",
        "maxscanlength", "minscanlength", "scanlengthdistribution", "readallfields", "writeallfields",
        "readallfieldsbyname", "hotspotdatafraction", "hotspotopnfraction", "measurementtype",
        "measurement.interval", "status.interval", "histogram.buckets", "exponential.percentile",
        "exponential.frac",
        # redis-benchmark
        "redisbench.tests", "redisbench.requests", "redisbench.pipeline", "redisbench.clients",
        # TPC-C, TPC-B (pgbench), OLTP (sysbench), SQL scripts
        "tpcc.mix", "tpcc.think_time", "tpcb.script", "tpcb.protocol", "oltp.test", "oltp.skip_trx",
        "oltp.range_size", "oltp.point_selects", "oltp.simple_ranges", "oltp.sum_ranges",
        "oltp.order_ranges", "oltp.distinct_ranges", "oltp.index_updates", "oltp.non_index_updates",
        "oltp.delete_inserts", "oltp.rand_type", "oltp.rand_spec_iter", "oltp.rand_spec_pct",
        "oltp.rand_spec_res", "oltp.rand_pareto_h", "oltp.rand_zipfian_exp", "sql.script",
        "sql.transaction",
        # the client model and its timeouts
        "client.model", "client.connect_timeout_s", "client.op_timeout_s", "client.give_up_s",
    }
)  # fmt: skip


def _canonical(data: Any) -> str:
    return json.dumps(data, sort_keys=True, default=str)


def target_key(spec: BenchmarkSpec, cell_id: str) -> str:
    """Cells with equal keys share one provisioned target."""
    if spec.events or spec.operations:  # a failover or a restart changes the target for later cells
        return _canonical({"own": cell_id})
    return _canonical(spec.target.model_dump(mode="json"))


def dataset_key(spec: BenchmarkSpec, cell_id: str) -> str:
    """Cells of one target group with equal keys run on one load."""
    # deferred: importing the registry loads every built-in workload
    from benchwright.runner.workloads.registry import descriptors

    phases = enabled_phases(spec)
    if "load" not in phases:
        return _canonical({"workload": spec.workload.name, "load": None})
    if "run" not in phases:  # the load is what is measured: every cell loads
        return _canonical({"own": cell_id})
    own = descriptors().get(spec.workload.name)
    # the run changes the data (YCSB's inserts): no other cell may reuse its load
    if own is not None and own.run_needs_own_load(workload_properties(spec, "run")):
        return _canonical({"own": cell_id})
    props = {k: v for k, v in workload_properties(spec, "load").items() if k.lower() not in RUN_SETTINGS}
    load = spec.workload.phases.load
    # threads and rate are run settings; expected_iops is a hint for the credit forecast: none shapes data
    shape = (
        load.model_dump(mode="json", exclude={"threads", "target_rate", "expected_iops"}) if load else None
    )
    return _canonical({"workload": spec.workload.name, "properties": props, "load": shape})


@dataclass
class Item:
    """One (cell, repeat) of the run, and where it stands in the order the matrix gives."""

    cell: Cell
    repeat: int

    @property
    def label(self) -> str:
        return f"{self.cell.cell_id} #{self.repeat + 1}"


@dataclass
class Dataset:
    name: str  # g1/d2
    loads: bool  # the cells have a load phase (the first one runs it)
    items: list[Item] = field(default_factory=list)


@dataclass
class TargetGroup:
    name: str  # g1
    datasets: list[Dataset] = field(default_factory=list)

    @property
    def items(self) -> list[Item]:
        return [item for d in self.datasets for item in d.items]


def plan(order: list[tuple[Cell, int]]) -> list[TargetGroup]:
    """The (cell, repeat) pairs grouped by target, then by dataset, each in first-seen order."""

    groups: dict[str, TargetGroup] = {}
    datasets: dict[tuple[str, str], Dataset] = {}
    for cell, repeat in order:
        tkey = target_key(cell.spec, cell.cell_id)
        group = groups.get(tkey)
        if group is None:
            group = groups[tkey] = TargetGroup(f"g{len(groups) + 1}")
        dkey = (tkey, dataset_key(cell.spec, cell.cell_id))
        dataset = datasets.get(dkey)
        if dataset is None:
            loads = "load" in enabled_phases(cell.spec)
            dataset = datasets[dkey] = Dataset(f"{group.name}/d{len(group.datasets) + 1}", loads)
            group.datasets.append(dataset)
        dataset.items.append(Item(cell, repeat))
    return list(groups.values())


def without_load(spec: BenchmarkSpec) -> BenchmarkSpec:
    """A cell's spec with its load phase switched off (written ``load: null``, so it stays off in
    every dump): it runs on data another cell loaded."""
    current = spec.workload.phases  # validated again: a spec of a load phase alone has nothing left
    phases = type(current).model_validate({**current.model_dump(), "load": None})
    workload = spec.workload.model_copy(update={"phases": phases})
    return spec.model_copy(update={"workload": workload})


# ---------------------------------------------------------------- estimates that know the sharing
def item_seconds(groups: list[TargetGroup]) -> list[tuple[Item, float, str]]:
    """Each item's share of the wall time: provisioning and teardown on the group's first item, the
    load on each dataset's first, warmup and run on every one; with a word on what it does or shares
    ("provisions, loads", "loads", "shared data", "shared target")."""

    out: list[tuple[Item, float, str]] = []
    for group in groups:
        first = group.items[0] if group.items else None
        for dataset in group.datasets:
            for i, item in enumerate(dataset.items):
                spec = item.cell.spec
                seconds = phase_seconds(spec, "warmup") + phase_seconds(spec, "run") + 3.0
                notes = []
                if item is first:
                    seconds += spec.target.facts.provision_s + spec.target.facts.teardown_s
                    notes.append("provisions")
                if dataset.loads and i == 0:
                    seconds += phase_seconds(spec, "load")
                    notes.append("loads")
                elif dataset.loads:
                    notes.append("shared data")
                out.append((item, seconds, ", ".join(notes) or "shared target"))
    return out


def estimated_seconds(spec: BenchmarkSpec) -> float:
    """Wall seconds for a whole spec, every matrix cell and repeat, with targets and loads shared."""
    order = [(c, r) for c in expand_matrix(spec) for r in range(spec.repeats)]
    return sum(seconds for _, seconds, _ in item_seconds(plan(order)))
