"""YCSB load + run of workloads A-F against the real local PostgreSQL and Redis servers."""

from __future__ import annotations

import pytest

from benchwright.errors import SchemaMissing
from benchwright.results import ResultDocument
from benchwright.runner.drivers import new_driver
from benchwright.runner.engine import PhaseConfig, run_phase
from benchwright.runner.workloads.ycsb.properties import load_properties
from tests.statuses import assert_honest

pytestmark = pytest.mark.servers
RECORDS, OPERATIONS = 300, 1200
EXPECTED_MIX = {
    "workloada": {"READ": 0.5, "UPDATE": 0.5},
    "workloadb": {"READ": 0.95, "UPDATE": 0.05},
    "workloadc": {"READ": 1.0},
    "workloadd": {"READ": 0.95, "INSERT": 0.05},
    "workloade": {"SCAN": 0.95, "INSERT": 0.05},
    "workloadf": {"READ": 0.5, "READ-MODIFY-WRITE": 0.5},
}


def _phase(engine: str, phase: str, workload: str, conn: dict[str, str], **extra: str) -> ResultDocument:
    props = load_properties(
        [workload], {"recordcount": str(RECORDS), "operationcount": str(OPERATIONS), **conn, **extra}
    )
    return run_phase(
        PhaseConfig(
            workload="ycsb", phase=phase, engine=engine, properties=props, threads=4, processes=2, seed=42
        )
    )


def _check_run(doc: ResultDocument, workload: str) -> None:
    assert doc.operations_total == OPERATIONS
    assert not doc.aborted
    for op, share in EXPECTED_MIX[workload].items():
        assert doc.operations[op].operations / OPERATIONS == pytest.approx(share, abs=0.06), op
    assert doc.failed_total == 0 and doc.error_rate == 0.0  # no -FAILED entry below either
    for op in doc.operations.values():
        assert op.statuses == {"OK": op.operations}  # every key read was loaded (or inserted) first
    assert_honest(doc)
    assert set(doc.operations) <= set(EXPECTED_MIX[workload]) | {"INSERT"}
    ResultDocument.parse(doc.model_dump_json())


def _reset(engine: str, conn: dict[str, str], fieldcount: int = 10) -> None:
    driver = new_driver(engine, conn)
    driver.connect()
    driver.create_table("usertable", fieldcount, drop=True)  # type: ignore[attr-defined]
    driver.close()


@pytest.mark.parametrize("workload", list(EXPECTED_MIX))
def test_postgres_load_then_run(workload: str, pg_url: str) -> None:
    conn = {"postgres.url": pg_url}
    _reset("postgres", conn)
    load = _phase("postgres", "load", workload, conn)
    assert load.operations["INSERT"].statuses == {"OK": RECORDS}
    assert load.extra["records_after_load"] == RECORDS
    assert load.server_version and "PostgreSQL" in load.server_version
    run = _phase("postgres", "run", workload, conn)
    _check_run(run, workload)
    assert run.properties["postgres.url"].startswith("postgresql://bench:***@")  # the password never lands


@pytest.mark.parametrize("workload", list(EXPECTED_MIX))
def test_redis_hash_load_then_run(workload: str, redis_props: dict[str, str]) -> None:
    _reset("redis", redis_props)
    load = _phase("redis", "load", workload, redis_props)
    assert load.extra["records_after_load"] == RECORDS
    _check_run(_phase("redis", "run", workload, redis_props), workload)


@pytest.mark.parametrize("datatype", ["string", "list", "set", "zset"])
@pytest.mark.parametrize("workload", ["workloada", "workloadc", "workloadd", "workloadf"])
def test_redis_datatypes(datatype: str, workload: str, redis_props: dict[str, str]) -> None:
    fields = "1" if datatype == "string" else "10"
    conn = {**redis_props, "redis.datatype": datatype}
    _reset("redis", conn, int(fields))
    load = _phase("redis", "load", workload, conn, fieldcount=fields)
    assert load.extra["records_after_load"] == RECORDS
    _check_run(_phase("redis", "run", workload, conn, fieldcount=fields), workload)


def test_redis_string_scans_work_and_list_scans_are_refused(redis_props: dict[str, str]) -> None:
    from benchwright.errors import SpecError

    conn = {**redis_props, "redis.datatype": "string"}
    _reset("redis", conn, 1)
    _phase("redis", "load", "workloade", conn, fieldcount="1")
    _check_run(_phase("redis", "run", "workloade", conn, fieldcount="1"), "workloade")
    with pytest.raises(SpecError, match="scan"):
        _phase("redis", "run", "workloade", {**redis_props, "redis.datatype": "list"})


def test_run_before_load_names_the_table(pg_url: str) -> None:
    conn = {"postgres.url": pg_url}
    driver = new_driver("postgres", conn)
    driver.connect()
    driver.execute("DROP TABLE IF EXISTS usertable")  # type: ignore[attr-defined]
    driver.close()
    with pytest.raises(SchemaMissing, match="usertable"):
        _phase("postgres", "run", "workloada", conn)


def test_ddl_suffix_and_primary_key_clause_pass_through(pg_url: str) -> None:
    conn = {
        "postgres.url": pg_url,
        "postgres.primary_key": "CONSTRAINT ycsb_pk PRIMARY KEY (YCSB_KEY)",
        "postgres.ddl_suffix": "WITH (fillfactor = 90)",
    }
    driver = new_driver("postgres", conn)
    driver.connect()
    driver.create_table("usertable", 3, drop=True)  # type: ignore[attr-defined]
    options = driver.fetchone("SELECT reloptions FROM pg_class WHERE relname = 'usertable'")  # type: ignore[attr-defined]
    pk = driver.fetchone("SELECT conname FROM pg_constraint WHERE conname = 'ycsb_pk'")  # type: ignore[attr-defined]
    driver.close()
    assert options == (["fillfactor=90"],) and pk == ("ycsb_pk",)


def test_several_hosts_are_spread_over_threads(pg_url: str) -> None:
    # The same server twice under two spellings: threads alternate between the two endpoints.
    two = pg_url.replace(
        "@127.0.0.1:", "@127.0.0.1:{p},localhost:".replace("{p}", pg_url.split(":")[3].split("/")[0])
    )
    drivers = [new_driver("postgres", {"postgres.url": two}, t) for t in range(4)]
    assert [d.endpoint().split(":")[0] for d in drivers] == ["127.0.0.1", "localhost"] * 2
