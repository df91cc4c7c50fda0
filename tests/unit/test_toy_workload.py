"""A new workload is one folder plus one registry line: the toy ``kv-scan`` (tests/unit/toy_workload/,
no edit anywhere else) registered here is validated, estimated (time, size, cost shape), tabulated by
its own seed view and capped by --quick, all through its descriptor. Server-free."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from itertools import islice
from typing import Any

import pytest

from benchwright.errors import SpecError
from benchwright.experiments.capacity import REDIS_KEY_OVERHEAD, dataset_bytes
from benchwright.providers.aws.usage import modelled, planned
from benchwright.quick import scale_down
from benchwright.report.sample import make_document
from benchwright.report.table import build_table, seed_views
from benchwright.runner.drivers.null import NullDriver
from benchwright.runner.measure import Status
from benchwright.runner.workloads.base import WORKLOADS, ThreadInfo, register
from benchwright.runner.workloads.registry import workload_class
from benchwright.runs import CellResult, RunRecord
from benchwright.spec import parse_spec, phase_seconds
from tests.unit.toy_workload.workload import KvScanWorkload

workload_class("ycsb")  # the built-ins first, so that the toy is the only one added


@pytest.fixture
def toy() -> Iterator[None]:
    register(KvScanWorkload)  # the one registry line
    try:
        yield
    finally:
        WORKLOADS.pop("kv-scan", None)  # leave the registry as the other tests expect it


def spec(**props: Any) -> Any:
    return parse_spec({
        "name": "toy", "target": {"provider": "local", "engine": "redis"},
        "workload": {"name": "kv-scan", "properties": {"kvscan.keys_loaded": 50_000, **props}},
    })  # fmt: skip


def test_validation_knows_its_properties(toy: None) -> None:
    assert spec(**{"kvscan.length": 20}).workload.name == "kv-scan"
    with pytest.raises(SpecError, match=r"did you mean kvscan\.length") as err:
        spec(**{"kvscan.lenght": 20})
    assert err.value.field == "workload.properties.kvscan.lenght"
    with pytest.raises(SpecError, match=r"sized by its own properties \(.*kvscan\.keys_loaded"):
        parse_spec({"name": "toy", "target": {"provider": "local", "engine": "redis"},
                    "workload": {"name": "kv-scan", "data_size": "1MB"}})  # fmt: skip


def test_estimates_read_its_descriptor(toy: None) -> None:
    s = spec(**{"kvscan.length": 20})
    assert phase_seconds(s, "load") == pytest.approx(5.0)  # 50,000 keys at 10,000 a second
    assert dataset_bytes(s) == 50_000 * (100 + REDIS_KEY_OVERHEAD)
    assert modelled(s)
    traffic = planned(s)
    assert traffic is not None
    assert traffic.writes == 50_000  # the load's keys
    assert traffic.reads > 0 and traffic.read_bytes == 20 * 100  # a scan of 20 values of 100 bytes


def test_quick_caps_its_own_size(toy: None) -> None:
    small = scale_down(spec())
    assert small.workload.properties["kvscan.keys_loaded"] == 300


def test_its_seed_view_and_default_metrics_tabulate_it(toy: None) -> None:
    # Documents as its phases would write them (a run in worker processes needs the workload
    # registered where they import the registry, runner/workloads/__init__.py: a test folder is not)
    docs = {
        "load": make_document([400.0] * 3, operations={"INSERT": 1.0}, phase="load", workload="kv-scan"),
        "run": make_document([900.0] * 5, operations={"SCAN": 1.0}, workload="kv-scan"),
    }
    now = datetime(2026, 11, 29, tzinfo=UTC)
    run = RunRecord(
        run_id="toy-1", spec_name="toy", spec={"name": "toy"}, status="succeeded", started_at=now,
        ended_at=now, cells=[CellResult(cell_id="c", parameters={}, repeat=0, phases=docs)],
    )  # fmt: skip
    views = seed_views(run, cloud=False)
    assert [v.title for v in views] == ["kv-scan scans"]
    assert [m.name for m in views[0].metrics] == ["throughput", "avg", "p99", "runtime"]
    table = build_table([run])
    assert [m.name for m in table.metrics] == ["throughput", "avg", "p99"]  # its group, by default
    assert all(v.mean is not None and v.mean > 0 for v in table.cells.values())


def test_its_operations_run_on_the_null_driver() -> None:
    props = {"kvscan.keys_loaded": "20", "kvscan.length": "5"}
    driver = NullDriver(props)
    workload = KvScanWorkload(props)
    workload.setup(driver, "load")
    loaded = [call() for _, call in workload.operations("load", driver, ThreadInfo(index=0, count=1, seed=3))]
    assert loaded == [Status.OK] * 20 and driver.count("kvscan") == 20
    scans = workload.operations("run", driver, ThreadInfo(index=0, count=1, seed=3))
    assert {name for name, _ in islice(scans, 10)} == {"SCAN"}
