"""Every registered workload earns these tests the moment it is registered (BenchBase-style):
it declares a capability, the capability check agrees with the drivers, and it runs on the null
driver through the real engine, producing a document that validates."""

from __future__ import annotations

import pytest

from benchwright.errors import CapabilityError
from benchwright.results import ResultDocument
from benchwright.runner.drivers import DRIVERS, capabilities
from benchwright.runner.drivers.base import Capability
from benchwright.runner.engine import PhaseConfig, run_phase
from benchwright.runner.workloads.base import WORKLOADS
from benchwright.runner.workloads.registry import check_capability, workload_class

workload_class("ycsb")  # importing the package registers every built-in workload

# The smallest properties each workload needs for a short run on the null driver. A new workload
# without an entry here fails test_every_workload_has_a_contract_entry: add one.
SMALL_RUN: dict[str, dict[str, str]] = {
    "ycsb": {"recordcount": "100", "operationcount": "200"},
    "redis-bench": {"redisbench.tests": "set,get", "redisbench.requests": "100"},
    "sql": {"sql.script": "insert into t values ({{int:1:10}}, '{{string:8}}', '{{uuid}}');"},
    "tpcc": {"tpcc.warehouses": "1"},
    "tpcb": {"tpcb.scale": "1"},
    "oltp": {"oltp.test": "point_select", "tables": "1", "table_size": "100"},
    "pgbench-script": {
        "pgscript.scripts": '[["a.sql", 1, "\\\\set x random(1, 10)\\nSELECT :x;\\n"]]',
        "pgscript.per_statement": "true",
    },
}
EXPECTED = {
    "ycsb": Capability.KEY_VALUE,
    "redis-bench": Capability.REDIS,
    "sql": Capability.SQL,
    "tpcc": Capability.SQL,
    "tpcb": Capability.SQL,
    "oltp": Capability.SQL,
    "pgbench-script": Capability.SQL,
}


def test_every_workload_has_a_contract_entry() -> None:
    assert set(WORKLOADS) == set(SMALL_RUN)


@pytest.mark.parametrize("name", sorted(WORKLOADS))
def test_declared_capability(name: str) -> None:
    cls = WORKLOADS[name]
    assert cls.requires is EXPECTED.get(name, cls.requires)
    assert cls.description, f"{name} needs a one-line description"
    assert "run" in cls.phases


@pytest.mark.parametrize("engine", sorted(e for e in DRIVERS if e != "null"))
@pytest.mark.parametrize("name", sorted(WORKLOADS))
def test_capability_check_agrees_with_the_drivers(name: str, engine: str) -> None:
    if WORKLOADS[name].requires in capabilities(engine):
        check_capability(name, engine)
    else:
        with pytest.raises(CapabilityError) as err:
            check_capability(name, engine)
        assert name in str(err.value) and engine in str(err.value)


@pytest.mark.parametrize("name", sorted(WORKLOADS))
def test_runs_on_the_null_driver(name: str) -> None:
    doc = run_phase(
        PhaseConfig(
            workload=name,
            phase="run",
            engine="null",
            properties=SMALL_RUN[name],
            threads=2,
            processes=1,
            max_seconds=2.0,
            seed=3,
        )
    )
    assert doc.operations_total > 0
    assert doc.workload == name and doc.engine == "null"
    ResultDocument.parse(doc.model_dump_json())
