"""Every registered workload's descriptor is complete and its estimates are usable: the contract the
duration, cost, report and --quick code rely on when they read a workload through the registry."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from benchwright.report.table_metrics import expand_groups, resolve_metrics
from benchwright.runner.workloads.base import WORKLOADS, Workload, register
from benchwright.runner.workloads.descriptor import UsageShape, WorkloadDescriptor
from benchwright.runner.workloads.known_keys import check_known_keys
from benchwright.runner.workloads.registry import workload_class
from benchwright.spec.checks import native_tools
from tests.unit.test_registry_contract import SMALL_RUN

workload_class("ycsb")  # importing the package registers every built-in workload
ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src" / "benchwright"
# Modules that may name a workload: its own folder, the CLI's subcommands (native-tool commands, not
# workloads), and the report's sample data.
MAY_NAME = ("runner/workloads/", "commands/", "cli.py", "report/sample.py")


@pytest.mark.parametrize("name", sorted(WORKLOADS))
def test_descriptor_is_its_own_and_its_estimates_are_positive(name: str) -> None:
    found = WORKLOADS[name].descriptor
    assert isinstance(found, WorkloadDescriptor) and found.name == name
    props = dict(SMALL_RUN[name])
    if found.load_seconds is not None:
        assert found.load_seconds(props) > 0
    if found.dataset_bytes is not None:
        keys, per_key = found.dataset_bytes(props)
        assert keys > 0 and per_key > 0
    if found.usage_shape is not None:
        shape = found.usage_shape(props, props)
        assert isinstance(shape, UsageShape)
        assert shape.read_share + shape.write_share > 0 and shape.load_bytes > 0
    if found.fixed_requests is not None:
        assert (found.fixed_requests(props) or 0) > 0
    if found.from_data_size is not None:
        assert found.size_property in found.from_data_size([], {}, 10_000)
    check_known_keys(props)  # its example properties are keys it declares
    for tool in found.native_tools:
        assert name in native_tools()[tool]


@pytest.mark.parametrize("name", sorted(WORKLOADS))
def test_report_groups_and_seed_views_name_known_metrics(name: str) -> None:
    found = WORKLOADS[name].descriptor
    views = [v.metrics for v in found.seed_views] + [found.default_metrics or ()]
    for metrics in views:
        resolved = resolve_metrics(expand_groups(metrics))
        assert len(resolved) >= len([m for m in metrics if m not in found.report_groups])


def test_a_workload_without_a_descriptor_is_refused_at_registration() -> None:
    class Bare(Workload):
        name = "bare"

        def operations(self, phase, driver, thread):  # type: ignore[no-untyped-def]
            return iter(())

    with pytest.raises(ValueError, match="'bare' has no descriptor"):
        register(Bare)
    assert "bare" not in WORKLOADS


def test_a_descriptor_missing_a_field_fails_when_it_is_made() -> None:
    fields = {k: getattr(WORKLOADS["tpcc"].descriptor, k) for k in WorkloadDescriptor.__dataclass_fields__}
    fields.pop("load_seconds")
    with pytest.raises(TypeError, match="load_seconds"):
        WorkloadDescriptor(**fields)
    with pytest.raises(ValueError, match="quick_caps"):
        WorkloadDescriptor(**{**fields, "load_seconds": None, "quick_caps": {"warehouses": 0}})


def test_no_module_outside_a_workload_folder_branches_on_a_workload_name() -> None:
    names = "|".join(re.escape(n) for n in WORKLOADS)
    branch = re.compile(rf"""(==|!=|\bin \(?|\w\[)\s*["']({names})["']|["']({names})["']\s*:""")
    found = [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
        for path in [*SRC.rglob("*.py"), *(ROOT / "functions").rglob("*.py")]
        if not str(path.relative_to(SRC if path.is_relative_to(SRC) else ROOT)).startswith(MAY_NAME)
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if branch.search(line)
    ]
    assert found == []
