"""sysbench-style OLTP on the real servers: prepare makes sbtestN like sysbench, each test sends its
own statements (seen in the server's counters), queries are counted by kind, and running before
prepare names the missing table."""

from __future__ import annotations

import bisect
import random
import subprocess
from pathlib import Path
from typing import Any

import pytest

from benchwright.cli import main
from benchwright.errors import SchemaMissing
from benchwright.results import ResultDocument
from benchwright.runner.engine import PhaseConfig, run_phase
from benchwright.runner.workloads.external.common import find_tool
from benchwright.runner.workloads.oltp.rand import SYSBENCH_1_0_TYPES, RandSpec
from benchwright.runner.workloads.oltp.workload import OltpSettings
from tests.statuses import assert_honest, statuses_of

pytestmark = pytest.mark.servers

ENGINES = ["postgres", "mysql"]
SIZE = {"oltp.tables": "2", "oltp.table_size": "2000"}


@pytest.fixture(scope="module")
def urls(pg_url: str, mysql_url: str) -> dict[str, dict[str, str]]:
    return {"postgres": {"postgres.url": pg_url}, "mysql": {"mysql.url": mysql_url}}


def phase(engine: str, props: dict[str, str], name: str, **kw: Any) -> ResultDocument:
    return run_phase(
        PhaseConfig(workload="oltp", phase=name, engine=engine, properties=props, processes=1, **kw)
    )


@pytest.mark.parametrize("engine", ENGINES)
def test_run_before_prepare_names_the_table(engine: str, urls: dict[str, dict[str, str]]) -> None:
    with pytest.raises(SchemaMissing) as err:
        phase(engine, {**urls[engine], **SIZE}, "run", operation_count=1)
    assert "table sbtest1 does not exist" in str(err.value)


@pytest.mark.parametrize("engine", ENGINES)
def test_prepare_fills_every_table_with_sysbench_rows(engine: str, urls: dict[str, dict[str, str]]) -> None:
    doc = phase(engine, {**urls[engine], **SIZE, "oltp.test": "read_write"}, "load", threads=2)
    assert doc.valid and doc.extra["rows"] == {"sbtest1": 2000, "sbtest2": 2000}
    from benchwright.runner.drivers import new_driver

    db: Any = new_driver(engine, urls[engine])
    db.connect()
    try:
        c, pad = db.fetchone("SELECT c, pad FROM sbtest2 WHERE id = 7")
        assert len(c.rstrip()) == 119 and c.count("-") == 9 and len(pad.rstrip()) == 59
        assert db.fetchone("SELECT min(id), max(id), count(DISTINCT id) FROM sbtest1") == (1, 2000, 2000)
    finally:
        db.close()


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("test", ["read_write", "read_only", "write_only", "point_select"])
def test_each_test_counts_its_queries_by_kind(
    engine: str, test: str, urls: dict[str, dict[str, str]]
) -> None:
    props = {**urls[engine], **SIZE, "oltp.test": test}
    doc = phase(engine, props, "run", threads=2, operation_count=40)
    name = f"oltp_{test}"
    assert set(doc.operations) <= {name, f"{name}-FAILED"}  # -FAILED: deadlocked attempts, re-run
    statuses = statuses_of(doc.operations, name)
    # operation_count counts attempts: a deadlocked one (RETRY, re-run) is one, and no throughput
    assert "ERROR" not in statuses and statuses.get("OK", 0) + statuses.get("RETRY", 0) == 40
    assert doc.operations_total == statuses["OK"] and doc.failed_total == 0  # a retry is no failure
    assert doc.extra["ignored_errors"] == doc.retried() == statuses.get("RETRY", 0)
    assert_honest(doc)
    per = OltpSettings(props).queries_per_event()
    events = statuses["OK"]
    assert doc.extra["queries"] == {
        "read": per["read"] * events,
        "write": per["write"] * events,
        "other": per["other"] * events,
        "total": sum(per.values()) * events,
    }
    expected = {
        "read_write": (14, 4, 2),
        "read_only": (14, 0, 2),
        "write_only": (0, 4, 2),
        "point_select": (1, 0, 0),
    }
    assert (per["read"], per["write"], per["other"]) == expected[test]


def test_writes_change_rows_and_reads_do_not(urls: dict[str, dict[str, str]]) -> None:
    from benchwright.runner.drivers import new_driver

    db: Any = new_driver("postgres", urls["postgres"])
    db.connect()
    try:
        k_before = db.fetchone("SELECT sum(k) FROM sbtest1")[0] + db.fetchone("SELECT sum(k) FROM sbtest2")[0]
        phase("postgres", {**urls["postgres"], **SIZE, "oltp.test": "read_only"}, "run", operation_count=20)
        k_mid = db.fetchone("SELECT sum(k) FROM sbtest1")[0] + db.fetchone("SELECT sum(k) FROM sbtest2")[0]
        props = {
            **urls["postgres"],
            **SIZE,
            "oltp.test": "write_only",
            "oltp.non_index_updates": "0",
            "oltp.delete_inserts": "0",
        }
        phase("postgres", props, "run", operation_count=30)
        k_after = db.fetchone("SELECT sum(k) FROM sbtest1")[0] + db.fetchone("SELECT sum(k) FROM sbtest2")[0]
        assert db.fetchone("SELECT count(*) FROM sbtest1")[0] == 2000  # delete+insert keeps the size
    finally:
        db.close()
    assert k_mid == k_before
    assert k_after == k_before + 30  # one index update (k = k + 1) per event


def test_cli_rand_type_skews_the_rows_touched_and_the_result_records_it(
    urls: dict[str, dict[str, str]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--rand-type pareto --rand-pareto-h 0.1: ~90% of the index updates land in the lowest 10% of ids
    (uniform ids would put ~10% there), and the result names the distribution."""
    from benchwright.runner.drivers import new_driver

    db: Any = new_driver("postgres", urls["postgres"])
    db.connect()
    count = (
        "SELECT (SELECT sum(k) FROM sbtest1 WHERE id <= 200) + (SELECT sum(k) FROM sbtest2 WHERE id <= 200)"
    )
    total = "SELECT (SELECT sum(k) FROM sbtest1) + (SELECT sum(k) FROM sbtest2)"
    try:
        hot_before, all_before = db.fetchone(count)[0], db.fetchone(total)[0]
        out = tmp_path / "pareto.json"
        args = ["--url", urls["postgres"]["postgres.url"], "--tables", "2", "--table-size", "2000"]
        knobs = ["--non-index-updates", "0", "--delete-inserts", "0", "--events", "200", "--time", "0"]
        rand = ["--rand-type", "pareto", "--rand-pareto-h", "0.1", "--seed", "5", "--json", str(out)]
        assert main(["oltp", "run", "write_only", *args, *knobs, *rand]) == 0
        hot, touched = db.fetchone(count)[0] - hot_before, db.fetchone(total)[0] - all_before
    finally:
        db.close()
    capsys.readouterr()
    assert touched == 200 and hot >= 160, (hot, touched)  # expected 180 +- 4
    doc = ResultDocument.model_validate_json(out.read_text())
    assert doc.properties["oltp.rand_type"] == "pareto" and doc.properties["oltp.rand_pareto_h"] == "0.1"
    assert doc.extra["rand"] == {"rand_type": "pareto", "rand_pareto_h": 0.1}
    assert "row ids drawn as sysbench --rand-type=pareto (rand-pareto-h=0.1)" in doc.measurement.method


DRAW_SCRIPT = """
function event()
  local ids = {}
  for i = 1, 1000 do ids[i] = sysbench.rand.default(1, 10000) end
  io.write(table.concat(ids, "\\n"), "\\n")
end
"""


@pytest.mark.parametrize("kind", SYSBENCH_1_0_TYPES)
def test_ids_follow_the_installed_sysbench_s_own_distribution(kind: str, tmp_path: Path) -> None:
    """20,000 ids from sysbench's own --rand-type (a Lua script calling sysbench.rand.default) and
    20,000 of ours are one distribution: two-sample Kolmogorov-Smirnov distance under 0.025."""
    script = tmp_path / "draw.lua"
    script.write_text(DRAW_SCRIPT)
    sysbench = find_tool("sysbench", None)
    argv = [
        sysbench,
        str(script),
        "--events=20",
        "--threads=1",
        "--rand-seed=1",
        f"--rand-type={kind}",
        "run",
    ]
    out = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=True).stdout
    theirs = sorted(int(line) for line in out.splitlines() if line.isdigit())
    assert len(theirs) == 20_000
    draw = RandSpec(type=kind).drawer(1, 10_000, random.Random(1))
    ours = sorted(draw() for _ in range(20_000))
    distance = max(
        abs(bisect.bisect_right(theirs, v) - bisect.bisect_right(ours, v)) / 20_000 for v in range(1, 10_001)
    )
    assert distance < 0.025, distance


def test_cli_prints_sysbench_s_statistics_and_cleans_up(
    mysql_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["--url", mysql_url, "--tables", "2", "--table-size", "2000"]
    assert main(["oltp", "prepare", "read_write", *args]) == 0  # its own tables: runs in any order
    capsys.readouterr()
    assert (
        main(
            [
                "oltp",
                "run",
                "oltp_read_write",
                *args,
                "--threads",
                "2",
                "--time",
                "2",
                "--report-interval",
                "1",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "[ 1s ] thds: 2 tps: " in out and "(r/w/o: " in out
    assert "    queries performed:" in out and "95th percentile:" in out
    assert main(["oltp", "cleanup", "read_write", *args]) == 0
    assert "Dropping table 'sbtest2'..." in capsys.readouterr().out
    with pytest.raises(SchemaMissing):
        phase("mysql", {"mysql.url": mysql_url, **SIZE}, "run", operation_count=1)
