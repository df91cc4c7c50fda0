"""What the rest of Benchwright asks about a workload, declared once in the workload's own folder.

Validation, the duration and cost estimates, the reports, ``--quick`` and the native tools used to
keep each workload's entries in string-keyed tables of their own, and a workload missing from one
was estimated as zero without a word. Each workload's folder now has a ``descriptor.py`` whose
``DESCRIPTOR`` the registered class carries (``base.register`` refuses a class without one), and
those modules read it through the registry (``registry.descriptors()``, ``registry.descriptor_of``). Every field is
required: a workload that has no load-time model says ``None`` there, on purpose, not by default.

This module imports nothing of Benchwright's: a descriptor is plain data and plain functions of a
phase's properties (strings), so reading one never loads a driver.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

Props = Mapping[str, str]


@dataclass(frozen=True)
class UsageShape:
    """Per operation: read and write shares and the bytes of each (from the workload's properties);
    what providers/aws/usage.py multiplies by the operation counts to price I/O and transfer."""

    read_share: float
    write_share: float
    read_bytes: float
    write_bytes: float
    load_bytes: float  # one loaded record
    load_rows: float | None = None  # rows the load writes, when the workload sizes it so
    per_transaction: bool = False  # an operation is a transaction of several statements


@dataclass(frozen=True)
class SeedView:
    """One table a workload's seed experiment publishes: its title, the phase it reads (None: the
    measured phase, "all": every phase) and its metrics (names or report groups such as "buckets")."""

    title: str
    phase: str | None
    metrics: tuple[str, ...]


# the fields that hold a function (or None where the workload says it has no such model)
_FUNCTIONS = ("load_seconds", "fixed_requests", "dataset_bytes", "usage_shape", "from_data_size", "load_share",
              "run_needs_own_load")  # fmt: skip


@dataclass(frozen=True, kw_only=True)
class WorkloadDescriptor:
    """Everything outside a workload's folder needs to know about it. No field has a default."""

    name: str  # the registered name (the class's ``name``)
    # -- estimates (spec/duration.py, experiments/sizing.py, experiments/capacity.py, usage.py)
    load_seconds: Callable[[Props], float] | None  # the load's time by its data size; None: by count/rate
    fixed_requests: Callable[[Props], float | None] | None  # a phase's requests when a property fixes them
    dataset_bytes: Callable[[Props], tuple[int, int]] | None  # Redis keys, value bytes each; ValueError ok
    usage_shape: Callable[[Props, Props], UsageShape] | None  # (phase's, load's properties); None: no model
    write_operations: frozenset[str]  # operation names (upper case) that write, for counted I/O
    # -- sizing and validation (spec/derived.py, spec/checks.py, experiments/capacity.py)
    size_property: str | None  # the property that sizes its data (named in errors), None: none
    from_data_size: Callable[[list[str], dict[str, Any], int], set[str]] | None  # ``data_size`` -> props
    field_records: bool  # records of ``fieldcount`` fields (redis.datatype string needs fieldcount 1)
    native_tools: tuple[str, ...]  # ``native.tool`` values that measure this workload
    property_namespace: str | None  # "tpcc." ...: its own keys, checked against known_properties
    known_properties: frozenset[str]
    quick_caps: Mapping[str, int]  # --quick: property name (last dotted part) -> cap (2: the thread cap)
    # -- runners and sharing (stages/plan.py, sharing.py)
    load_share: Callable[[dict[str, str], int, int], dict[str, str]] | None  # split a load over runners
    run_needs_own_load: Callable[[Props], bool]  # the run changes the data: no other cell may reuse it
    # -- reports (report/table_metrics.py, report/table.py)
    report_groups: Mapping[str, tuple[str, ...]]  # metric groups it adds ("ycsb": its columns)
    default_metrics: tuple[str, ...] | None  # its table's metrics when --metric is not given
    seed_views: tuple[SeedView, ...]  # the tables its seed publishes
    result_aliases: tuple[str, ...]  # native tools' result documents that publish the same tables

    def __post_init__(self) -> None:
        problems = [n for n in _FUNCTIONS if getattr(self, n) is not None and not callable(getattr(self, n))]
        if not callable(self.run_needs_own_load):  # a question every workload answers
            problems.append("run_needs_own_load")
        if not self.name:
            problems.append("name")
        if self.property_namespace is not None and not self.property_namespace.endswith("."):
            problems.append("property_namespace (ends with '.')")
        if self.property_namespace is not None and not self.known_properties:
            problems.append("known_properties (empty for a namespace)")
        if any(not v.title or not v.metrics for v in self.seed_views):
            problems.append("seed_views (a view without a title or metrics)")
        if self.from_data_size is not None and (
            not self.size_property or self.size_property not in self.quick_caps
        ):
            problems.append("size_property (data_size derives it: name it, and cap it in quick_caps)")
        if any(not isinstance(c, int) or c < 1 for c in self.quick_caps.values()):
            problems.append("quick_caps (a cap below 1)")
        if problems:
            raise ValueError(f"workload descriptor {self.name!r}: bad {', '.join(problems)}")


def first_number(props: Props, *names: str, default: float) -> float:
    """The first of ``names`` written, as a number (``default`` when none is, or it is no number):
    a workload's own key ("tpcc.warehouses") or the bare one its native tool takes ("warehouses")."""
    for name in names:
        value = props.get(name)
        if value not in (None, ""):
            try:
                return float(str(value))
            except ValueError:
                return default
    return default
