"""TPC-C on the real local PostgreSQL and MariaDB: a full 1-warehouse load, a short run at the
standard mix, the consistency conditions holding afterwards, and the errors a user meets first
(run before load, wrong warehouse count, TPC-C on Redis)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from benchwright.cli import main
from benchwright.errors import CapabilityError, SchemaMissing, SpecError
from benchwright.results import ResultDocument
from benchwright.runner.engine import PhaseConfig, run_phase
from benchwright.runner.workloads.registry import check_capability
from tests.statuses import assert_honest, failures_of

pytestmark = [pytest.mark.servers, pytest.mark.slow]

ENGINES = ["postgres", "mysql"]


@pytest.fixture(scope="module")
def urls(pg_url: str, mysql_url: str) -> dict[str, dict[str, str]]:
    return {"postgres": {"postgres.url": pg_url}, "mysql": {"mysql.url": mysql_url}}


def phase(engine: str, props: dict[str, str], name: str, **kw: Any) -> ResultDocument:
    config = PhaseConfig(
        workload="tpcc", phase=name, engine=engine, properties=props, processes=1, seed=7, **kw
    )
    return run_phase(config)


@pytest.mark.parametrize("engine", ENGINES)
def test_run_before_load_names_the_missing_table(engine: str, urls: dict[str, dict[str, str]]) -> None:
    with pytest.raises(SchemaMissing) as err:
        phase(engine, {**urls[engine], "tpcc.warehouses": "1"}, "run", threads=1, max_seconds=1)
    assert "table warehouse does not exist" in str(err.value) and "run the load phase first" in str(err.value)


@pytest.mark.parametrize("engine", ENGINES)
def test_load_then_run_keeps_the_consistency_conditions(engine: str, urls: dict[str, dict[str, str]]) -> None:
    props = {**urls[engine], "tpcc.warehouses": "1"}
    load = phase(engine, props, "load", threads=2)
    assert load.valid, load.validity
    rows = load.extra["rows"]
    assert rows["item"] == 100_000 and rows["stock"] == 100_000 and rows["customer"] == 30_000
    assert rows["new_order"] == 9_000 and 30_000 * 5 <= rows["order_line"] <= 30_000 * 15

    # a count of transactions, not a duration: how many a few seconds hold depends on the machine's
    # load, and the rarer types (4 % each) may not come up at all in a short run
    doc = phase(engine, props, "run", threads=4, operation_count=400, max_seconds=600)
    names = set(doc.operations)
    assert names == {"NewOrder", "Payment", "OrderStatus", "Delivery", "StockLevel"}
    assert sum(sum(op.statuses.values()) for op in doc.operations.values()) == 400
    assert doc.operations_total == 400 and doc.failed_total == 0  # user aborts are no failures
    assert_honest(doc)
    extra = doc.extra
    assert extra["consistency"]["ok"], extra["consistency"]
    assert [f.code for f in doc.validity if f.code == "tpcc_consistency"] == ["tpcc_consistency"]
    assert {f.severity for f in doc.validity if f.code == "tpcc_consistency"} == {"info"}
    new_order = doc.operations["NewOrder"]
    assert failures_of(doc.operations, "NewOrder") == 0
    assert extra["tpmC"] == pytest.approx(
        (new_order.statuses.get("OK", 0) + new_order.statuses.get("USER_ABORT", 0)) * 60000 / doc.runtime_ms,
        rel=1e-3,
    )
    for name, figures in extra["transactions"].items():
        assert {"tps", "avg_ms", "p90_ms", "p99_ms"} <= set(figures), name
        assert figures["p90_ms"] <= figures["p99_ms"]
    # Rolled-back New-Orders are user aborts, never errors; they did not advance d_next_o_id
    # (condition 2 above would fail otherwise).
    assert extra["user_aborts"] == new_order.statuses.get("USER_ABORT", 0)


@pytest.mark.parametrize("engine", ENGINES)
def test_run_with_another_warehouse_count_is_refused(engine: str, urls: dict[str, dict[str, str]]) -> None:
    with pytest.raises(SpecError) as err:
        phase(engine, {**urls[engine], "tpcc.warehouses": "3"}, "run", threads=1, max_seconds=1)
    assert err.value.field == "tpcc.warehouses" and "hold 1 warehouse(s)" in str(err.value)


def test_tpcc_on_redis_is_refused_before_anything_runs() -> None:
    with pytest.raises(CapabilityError) as err:
        check_capability("tpcc", "redis")
    assert "needs sql" in str(err.value)


def test_cli_run_prints_the_seed_s_columns_and_writes_the_document(
    urls: dict[str, dict[str, str]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "tpcc.json"
    code = main(
        [
            "tpcc",
            "run",
            "postgres",
            "--url",
            urls["postgres"]["postgres.url"],
            "-c",
            "2",
            "-T",
            "1",
            "--json",
            str(out),
        ]
    )
    text = capsys.readouterr().out
    assert code == 0
    assert text.splitlines()[0].split() == [
        "transaction",
        "count",
        "tps",
        "avg",
        "ms",
        "p90",
        "ms",
        "p99",
        "ms",
        "aborts",
        "retries",
        "errors",
    ]
    assert "tpmC: " in text and "consistency 4: ok" in text
    doc = ResultDocument.read(out)
    assert doc.workload == "tpcc" and doc.extra["consistency"]["ok"]
    assert "bench:bench@" not in out.read_text()  # the password never reaches the document
