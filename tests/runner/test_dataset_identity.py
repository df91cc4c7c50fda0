"""Dataset identity on the real servers: cells that share one target measure only their own data.

Per engine, three YCSB cells whose loads write different data (field count and length on SQL, the
data type on Redis) run one after another on one database, in every order of the three (one
sequence of ten cells holds all six orders as consecutive runs: ``every_order``). Each cell
loads (as cells of different datasets do on a shared target) and runs workload C. In every order
each cell is clean: its load is complete, no operation failed and every read found one of its own
records. A run on data that is not the cell's is invalid with a reason naming what differed; with
the reset removed the same orders are no longer clean (the mutation check).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from itertools import permutations

import pytest

from benchwright.errors import SpecError
from benchwright.results import ResultDocument
from benchwright.runner import dataset
from benchwright.runner.drivers import new_driver
from benchwright.runner.engine import PhaseConfig, run_phase
from benchwright.runner.workloads.ycsb.properties import load_properties

pytestmark = pytest.mark.servers
RECORDS, OPERATIONS = 150, 300

SQL_CELLS = {
    "fc2-fl10": {"fieldcount": "2", "fieldlength": "10"},
    "fc4-fl10": {"fieldcount": "4", "fieldlength": "10"},
    "fc2-fl30": {"fieldcount": "2", "fieldlength": "30"},
}
REDIS_CELLS = {
    "string": {"redis.datatype": "string", "fieldcount": "1", "fieldlength": "20"},
    "hash": {"redis.datatype": "hash", "fieldcount": "3", "fieldlength": "20"},
    "zset": {"redis.datatype": "zset", "fieldcount": "3", "fieldlength": "20"},
}


def _phase(engine: str, phase: str, conn: dict[str, str], cell: dict[str, str]) -> ResultDocument:
    props = load_properties(
        ["workloadc"], {"recordcount": str(RECORDS), "operationcount": str(OPERATIONS), **conn, **cell}
    )
    config = PhaseConfig(
        workload="ycsb", phase=phase, engine=engine, properties=props, threads=2, processes=1, seed=7
    )  # type: ignore[arg-type]
    return run_phase(config)


def _invalid(doc: ResultDocument) -> list[str]:
    return sorted(f.code for f in doc.validity if f.severity == "invalid")


def _cell(engine: str, conn: dict[str, str], cell: dict[str, str]) -> tuple[str, ...]:
    """Load and run one cell; return its result class (the invalid codes of both phases), after
    asserting its numbers are honest when it is clean."""
    load = _phase(engine, "load", conn, cell)
    run = _phase(engine, "run", conn, cell)
    result = tuple(_invalid(load) + _invalid(run))
    if result:
        return result
    assert load.operations["INSERT"].statuses == {"OK": RECORDS}  # the load is complete
    assert load.extra["records_after_load"] == RECORDS
    assert load.extra["dataset"]["shape"]["fieldcount"] == int(cell["fieldcount"])
    reads = run.operations["READ"]
    assert reads.operations == OPERATIONS
    assert reads.statuses == {"OK": OPERATIONS}  # no ERROR, and every read found its record
    assert run.extra["dataset"] == load.extra["dataset"]
    return result


def every_order(names: Sequence[str]) -> list[str]:
    """Three names in one sequence that holds every order of the three as consecutive runs (the
    shortest such sequence, a b c a b a c b a), then the last again: each cell follows every other
    cell and itself, and each three-cell history occurs, in 10 cells where the six orders one after
    another took 18 (the fixed cost of a phase, not its records, is what these tests spend)."""
    a, b, c = names
    sequence = [a, b, c, a, b, a, c, b, a, a]
    windows = {tuple(sequence[i : i + 3]) for i in range(len(sequence) - 2)}
    assert set(permutations(names)) <= windows, "every order must occur"
    return sequence


def _every_order(engine: str, conn: dict[str, str], cells: dict[str, dict[str, str]]) -> dict[str, set]:
    classes: dict[str, set] = {name: set() for name in cells}
    for name in every_order(list(cells)):
        classes[name].add(_cell(engine, conn, cells[name]))
    return classes


@pytest.fixture
def pg(pg_url: str) -> Iterator[dict[str, str]]:
    yield {"postgres.url": pg_url}


@pytest.fixture
def my(mysql_url: str) -> Iterator[dict[str, str]]:
    yield {"mysql.url": mysql_url}


@pytest.mark.parametrize("engine", ["postgres", "mysql"])
def test_sql_cells_are_clean_in_every_order(engine: str, request: pytest.FixtureRequest) -> None:
    conn = request.getfixturevalue("pg" if engine == "postgres" else "my")
    classes = _every_order(engine, conn, SQL_CELLS)
    assert classes == {name: {()} for name in SQL_CELLS}


def test_redis_cells_are_clean_in_every_order(redis_props: dict[str, str]) -> None:
    classes = _every_order("redis", redis_props, REDIS_CELLS)
    assert classes == {name: {()} for name in REDIS_CELLS}


def test_a_run_on_another_cells_data_is_invalid_naming_what_differed(pg: dict[str, str]) -> None:
    _phase("postgres", "load", pg, SQL_CELLS["fc2-fl10"])
    run = _phase("postgres", "run", pg, SQL_CELLS["fc4-fl10"])  # its load skipped: shared data
    assert _invalid(run) == [dataset.MISMATCH]
    message = next(f.message for f in run.validity if f.code == dataset.MISMATCH)
    assert "fieldcount: 2 on the target, 4 wanted" in message


def test_a_redis_run_on_another_datatype_is_invalid(redis_props: dict[str, str]) -> None:
    _phase("redis", "load", redis_props, REDIS_CELLS["string"])
    run = _phase("redis", "run", redis_props, REDIS_CELLS["hash"])
    message = next(f.message for f in run.validity if f.code == dataset.MISMATCH)
    assert "datatype: 'string' on the target, 'hash' wanted" in message


def test_without_the_reset_a_second_load_is_caught(
    pg: dict[str, str], redis_props: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The mutation check: with the reset a no-op, loads land on the earlier dataset (the bug of
    issue 24); the cells are then no longer clean, and the checks say why."""
    monkeypatch.setattr(dataset, "clear", lambda *args: None)
    _cell("postgres", pg, SQL_CELLS["fc2-fl10"])
    assert _cell("postgres", pg, SQL_CELLS["fc4-fl10"]) != ()  # would be () with the reset
    load = _phase("postgres", "load", pg, SQL_CELLS["fc2-fl30"])  # same columns, duplicate keys
    message = next(f.message for f in load.validity if f.code == dataset.LOAD_MISMATCH)
    assert "fieldlength=30 wanted" in message or "holds" in message

    _cell("redis", redis_props, REDIS_CELLS["string"])
    load = _phase("redis", "load", redis_props, REDIS_CELLS["hash"])  # WRONGTYPE on every insert
    assert dataset.LOAD_MISMATCH in _invalid(load)


def _sql(url: str) -> dict[str, str]:
    return {"postgres.url": url, dataset.TARGET_PROPERTY: "endpoint"}


def test_an_endpoint_table_benchwright_did_not_create_is_never_dropped(pg_url: str) -> None:
    conn = _sql(pg_url)
    driver = new_driver("postgres", conn)
    driver.connect()
    driver.execute(f"DROP TABLE IF EXISTS {dataset.MARKER_TABLE}")  # type: ignore[attr-defined]
    driver.execute("DROP TABLE IF EXISTS usertable")  # type: ignore[attr-defined]
    driver.execute("CREATE TABLE usertable (ycsb_key TEXT PRIMARY KEY, mine TEXT)")  # type: ignore[attr-defined]
    driver.execute("INSERT INTO usertable VALUES ('k', 'users data')")  # type: ignore[attr-defined]
    with pytest.raises(SpecError, match="table usertable exists on the endpoint target"):
        _phase("postgres", "load", conn, SQL_CELLS["fc2-fl10"])
    assert driver.fetchone("SELECT mine FROM usertable") == ("users data",)  # type: ignore[attr-defined]
    driver.execute("DROP TABLE usertable")  # type: ignore[attr-defined]
    driver.close()
    _cell("postgres", conn, SQL_CELLS["fc2-fl10"])  # its own tables: loaded, then dropped by the next
    assert _cell("postgres", conn, SQL_CELLS["fc4-fl10"]) == ()


def test_an_endpoint_redis_database_with_foreign_keys_is_never_flushed(redis_props: dict[str, str]) -> None:
    conn = {**redis_props, dataset.TARGET_PROPERTY: "endpoint"}
    driver = new_driver("redis", conn)
    driver.connect()
    driver.command("FLUSHDB")  # type: ignore[attr-defined]
    driver.command("SET", "someone:else", "1")  # type: ignore[attr-defined]
    with pytest.raises(SpecError, match=r"Redis database .* holds 1 key.*someone:else"):
        _phase("redis", "load", conn, REDIS_CELLS["hash"])
    assert driver.command("GET", "someone:else") == b"1"  # type: ignore[attr-defined]
    driver.command("DEL", "someone:else")  # type: ignore[attr-defined]
    driver.close()
    assert _cell("redis", conn, REDIS_CELLS["hash"]) == ()
    assert _cell("redis", conn, REDIS_CELLS["string"]) == ()  # its own marker: flushed for the next


def test_a_marker_key_benchwright_did_not_write_is_a_named_error(redis_props: dict[str, str]) -> None:
    driver = new_driver("redis", redis_props)
    driver.connect()
    driver.command("FLUSHDB")  # type: ignore[attr-defined]
    driver.command("SET", dataset.MARKER_KEY, "OK")  # type: ignore[attr-defined]
    with pytest.raises(SpecError, match=r"key benchwright:dataset .* Benchwright did not write"):
        _phase("redis", "load", redis_props, REDIS_CELLS["string"])
    assert driver.command("GET", dataset.MARKER_KEY) == b"OK"  # type: ignore[attr-defined]
    driver.command("FLUSHDB")  # type: ignore[attr-defined]
    driver.close()


# ---------------------------------------------------------------- workloads whose run makes the data
SQL_INITS = {  # three scripts that create the same table with other columns
    "v": ("CREATE TABLE IF NOT EXISTS bw_items (id INT, v VARCHAR(8))", "INSERT INTO bw_items (id, v) VALUES ({{int:1:9}}, 'a')"),
    "wz": ("CREATE TABLE IF NOT EXISTS bw_items (id INT, w VARCHAR(8), z INT)", "INSERT INTO bw_items (id, w, z) VALUES ({{int:1:9}}, 'b', 2)"),
    "q": ("CREATE TABLE IF NOT EXISTS bw_items (q INT)", "INSERT INTO bw_items (q) VALUES ({{int:1:9}})"),
}  # fmt: skip


def _script(engine: str, conn: dict[str, str], init: str, script: str) -> ResultDocument:
    props = {**conn, "sql.init": init, "sql.script": script}
    config = PhaseConfig(
        workload="sql", phase="run", engine=engine, properties=props, processes=1, operation_count=20
    )
    return run_phase(config)


@pytest.mark.parametrize("engine", ["postgres", "mysql"])
def test_sql_scripts_with_other_inits_are_clean_in_every_order(
    engine: str, request: pytest.FixtureRequest
) -> None:
    """A script's init with CREATE TABLE IF NOT EXISTS used to keep the previous cell's table."""
    conn = request.getfixturevalue("pg" if engine == "postgres" else "my")
    for step, name in enumerate(every_order(list(SQL_INITS))):
        doc = _script(engine, conn, *SQL_INITS[name])
        assert doc.operations["script"].statuses == {"OK": 20}, (step, name)
        assert _invalid(doc) == [] and doc.extra["dataset"]["tables"] == ["bw_items"]


def test_an_endpoint_table_a_script_found_is_not_owned(pg_url: str) -> None:
    """The init's IF NOT EXISTS met the user's table: the script runs on it, and a later script with
    another init never drops it."""
    conn = _sql(pg_url)
    driver = new_driver("postgres", conn)
    driver.connect()
    driver.execute(f"DROP TABLE IF EXISTS {dataset.MARKER_TABLE}")  # type: ignore[attr-defined]
    driver.execute("DROP TABLE IF EXISTS bw_items")  # type: ignore[attr-defined]
    driver.execute("CREATE TABLE bw_items (id INT, v VARCHAR(8))")  # type: ignore[attr-defined]
    assert _script("postgres", conn, *SQL_INITS["v"]).operations["script"].statuses == {"OK": 20}
    doc = _script("postgres", conn, *SQL_INITS["wz"])  # not dropped: the user's table has no w
    assert doc.failed() == 20 and doc.attempted == 20  # every pass failed (no column w)
    assert driver.fetchone("SELECT count(*) FROM bw_items") == (20,)  # type: ignore[attr-defined]
    driver.execute("DROP TABLE bw_items")  # type: ignore[attr-defined]
    driver.close()


REDISBENCH = {
    "small": {"redisbench.datasize": "3", "redisbench.keyspace": "50"},
    "large": {"redisbench.datasize": "300", "redisbench.keyspace": "50"},
    "one-key": {"redisbench.datasize": "10", "redisbench.keyspace": "0"},
}


def _redisbench(conn: dict[str, str], cell: dict[str, str]) -> ResultDocument:
    props = {**conn, **cell, "redisbench.tests": "set,get,lpush", "redisbench.requests": "200"}
    return run_phase(
        PhaseConfig(workload="redis-bench", phase="run", engine="redis", properties=props, processes=1)
    )


def test_redis_bench_cells_start_from_their_own_keys_in_every_order(redis_props: dict[str, str]) -> None:
    import redis

    client = redis.Redis(
        host="127.0.0.1", port=int(redis_props["redis.port"]), password=redis_props["redis.password"],
        db=int(redis_props["redis.db"]),
    )  # fmt: skip
    client.flushdb()
    previous, pushes = None, 0
    for name in every_order(list(REDISBENCH)):
        doc = _redisbench(redis_props, REDISBENCH[name])
        assert _invalid(doc) == [] and all(set(op.statuses) == {"OK"} for op in doc.operations.values())
        pushes = pushes + 200 if name == previous else 200  # the same keys again (the last): kept
        assert client.llen("mylist") == pushes  # the list holds this dataset's pushes only
        previous = name
        size = int(REDISBENCH[name]["redisbench.datasize"])
        assert {len(client.get(k) or b"") for k in client.scan_iter("key:*")} == {size}
    _cell("redis", redis_props, REDIS_CELLS["hash"])  # a YCSB load after redis-bench: its keys are gone
    run = _phase("redis", "run", redis_props, REDIS_CELLS["hash"])
    assert _invalid(run) == [] and client.dbsize() == RECORDS + 2  # records, the scan index, the marker
    doc = _redisbench(redis_props, REDISBENCH["small"])  # and redis-bench after YCSB starts afresh
    assert _invalid(doc) == [] and client.dbsize() <= 50 + 3
    assert _invalid(_phase("redis", "run", redis_props, REDIS_CELLS["hash"])) == [dataset.MISMATCH]


def test_native_tools_load_over_another_dataset_and_check_the_run(pg: dict[str, str]) -> None:
    """sysbench prepare after another table size: the target is reset first (sysbench refuses an
    existing table); a run of another size on the loaded tables is invalid naming the size."""
    from benchwright.runner.workloads.external.native import run_native

    def oltp(phase: str, size: int) -> ResultDocument:
        props = {**pg, "oltp.test": "point_select", "oltp.tables": "1", "oltp.table_size": str(size)}
        return run_native(
            PhaseConfig(workload="oltp", phase=phase, engine="postgres", properties=props, max_seconds=1)
        )  # type: ignore[arg-type]

    for size in (300, 200):
        load = oltp("load", size)
        assert load.extra["rows"] == size and _invalid(load) == [], load.validity
        assert load.extra["dataset"]["rows"] == {"sbtest1": size}
        run = oltp("run", size)
        assert _invalid(run) == [] and run.operations["oltp_point_select"].statuses.keys() == {"OK"}
    run = oltp("run", 500)
    message = next(f.message for f in run.validity if f.code == dataset.MISMATCH)
    assert "table_size: 200 on the target, 500 wanted" in message


def test_cli_ycsb_load_never_flushes_keys_it_did_not_write(redis_props: dict[str, str]) -> None:
    """`benchwright ycsb load` points at the user's own Redis: keys without a marker stay."""
    import subprocess
    import sys

    driver = new_driver("redis", redis_props)
    driver.connect()
    driver.command("FLUSHDB")  # type: ignore[attr-defined]
    driver.command("SET", "their:key", "1")  # type: ignore[attr-defined]
    flags = [f"-p{k}={v}" for k, v in redis_props.items()]
    args = [sys.executable, "-m", "benchwright.cli", "ycsb", "load", "redis", *flags, "-P", "workloadc"]
    done = subprocess.run([*args, "-p", "recordcount=50"], capture_output=True, text=True, timeout=120)
    assert done.returncode != 0 and f"Redis database {redis_props['redis.db']}" in done.stderr
    assert driver.command("DBSIZE") == 1  # type: ignore[attr-defined]
    driver.command("FLUSHDB")  # type: ignore[attr-defined]
    driver.close()
    done = subprocess.run([*args, "-p", "recordcount=50"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
