"""Cells that share a target measure their own data, judged by their numbers (issue 24).

The issue's repro: seed experiment 2's local example (--quick) loaded its hash cells on top of the
string cells' keys, and every insert and read failed with WRONGTYPE under a READ ops/s figure. Here
each cell's load must be complete and no operation may fail. The PostgreSQL sweep over fieldcount x
fieldlength on one shared endpoint database, in two orders, must be clean the same way.
"""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from benchwright.results import ResultDocument
from benchwright.runs import CellResult, RunRecord
from tests.conftest import PASSWORD, PG_PORT, USER
from tests.judging import assert_numbers_hold

pytestmark = [pytest.mark.servers, pytest.mark.slow]
ROOT = Path(__file__).resolve().parents[2]
DATA_FLAGS = {"dataset_mismatch", "load_mismatch", "incomplete_load"}


def run(tmp_path: Path, *args: str) -> RunRecord:
    done = subprocess.run(
        [sys.executable, "-m", "benchwright.cli", "run", *args, "--store", "s.sqlite", "--out", "out"],
        capture_output=True, text=True, timeout=600, cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT / "src"), "BW_TEST_PW": PASSWORD, "COLUMNS": "200"},
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    record = RunRecord.model_validate_json((tmp_path / "out" / "run.json").read_text())
    assert_numbers_hold(record)
    return record


def failed(doc: ResultDocument) -> dict[str, int]:
    """Failed operations by name: ERROR statuses, and ``<OP>-FAILED`` entries where kept apart."""
    out = {}
    for name, op in doc.operations.items():
        errors = op.statuses.get("ERROR", 0) + (op.operations if name.endswith("-FAILED") else 0)
        if errors:
            out[name] = errors
    return out


def assert_clean(cell: CellResult, loads: bool) -> None:
    """No failed operation; a complete load of the cell's own records; reads that find them."""
    for phase, doc in cell.phases.items():
        assert failed(doc) == {}, (cell.cell_id, phase)
        assert not DATA_FLAGS & {f.code for f in doc.validity}, (cell.cell_id, phase, doc.validity)
        assert doc.extra["dataset"]["workload"] == "ycsb"
    assert ("load" in cell.phases) == loads
    run_doc = cell.phases["run"]
    records = run_doc.extra["dataset"]["rows"]["usertable"]
    if loads:
        load = cell.phases["load"]
        assert load.operations["INSERT"].statuses == {"OK": records}
        assert load.extra["records_after_load"] == records
        assert load.extra["dataset"] == run_doc.extra["dataset"]
    reads = run_doc.operations["READ"]
    assert reads.operations > 0 and reads.statuses == {"OK": reads.operations}


def test_exp2_redis_datatypes_quick_has_no_failed_operation(tmp_path: Path) -> None:
    record = run(tmp_path, str(ROOT / "examples" / "exp2-redis-ycsb-datatypes.local.yaml"), "--quick")
    assert record.status == "succeeded" and len(record.cells) >= 4
    datatypes = set()
    for cell in record.cells:
        loaded = "load" in cell.phases
        assert loaded == ("workloadc" in cell.cell_id)  # workload A runs on its C cell's data
        assert_clean(cell, loads=loaded)
        shape = cell.phases["run"].extra["dataset"]["shape"]
        assert shape["datatype"] == cell.parameters["workload.properties.redis.command_group"]
        assert shape["fieldlength"] == cell.parameters["workload.properties.fieldlength"]
        datatypes.add(shape["datatype"])
    assert {"string", "hash"} <= datatypes  # the order that used to fail: hash loaded after string


@pytest.fixture
def database() -> Iterator[str]:
    import psycopg

    admin = f"postgresql://{USER}:{PASSWORD}@127.0.0.1:{PG_PORT}/bench"
    name = f"bw_ds_{secrets.token_hex(4)}"
    with psycopg.connect(admin, autocommit=True, connect_timeout=5) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    yield name
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


SWEEP = """
name: dataset-sweep
target: {{provider: endpoint, engine: postgres, hosts: ["127.0.0.1:{port}"], user: {user},
          database: {database}, password_env: BW_TEST_PW}}
workload:
  name: ycsb
  files: [workloadc]
  properties: {{recordcount: 300, operationcount: 1000000}}
  phases: {{load: {{threads: 2}}, run: {{threads: 1, duration_s: 1}}}}
matrix:
  workload.properties.fieldcount: {fieldcounts}
  workload.properties.fieldlength: {fieldlengths}
  workload.phases.run.threads: [1, 2]   # a run setting: the second step runs on the first's load
validity: {{min_duration_s: 0}}
"""


@pytest.mark.parametrize("order", ["forward", "reverse"])
def test_postgres_fieldcount_by_fieldlength_sweep_on_one_target(
    tmp_path: Path, database: str, order: str
) -> None:
    counts, lengths = [2, 4], [10, 20]
    if order == "reverse":
        counts, lengths = counts[::-1], lengths[::-1]
    spec = SWEEP.format(port=PG_PORT, user=USER, database=database, fieldcounts=counts, fieldlengths=lengths)
    (tmp_path / "spec.yaml").write_text(spec)
    record = run(tmp_path, "spec.yaml")
    assert record.status == "succeeded" and len(record.cells) == 8
    for cell in record.cells:
        assert cell.shared is not None
        assert_clean(cell, loads=cell.shared.loaded_here)
        shape = cell.phases["run"].extra["dataset"]["shape"]
        assert (shape["fieldcount"], shape["fieldlength"]) == (
            cell.parameters["workload.properties.fieldcount"],
            cell.parameters["workload.properties.fieldlength"],
        )
    assert sum(1 for c in record.cells if c.shared and c.shared.loaded_here) == 4
