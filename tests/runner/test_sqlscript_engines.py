"""The SQL script workload on the real servers: experiment 1's insert file runs unchanged on
PostgreSQL and MariaDB, every pass executes every statement once, and substitutions reach the
server as fresh values."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from benchwright.cli import main
from benchwright.errors import CapabilityError
from benchwright.results import ResultDocument
from benchwright.runner.drivers import new_driver
from benchwright.runner.engine import PhaseConfig, run_phase
from tests.statuses import assert_honest

pytestmark = pytest.mark.servers

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "sql"
ENGINES = ["postgres", "mysql"]


@pytest.fixture(scope="module")
def urls(pg_url: str, mysql_url: str) -> dict[str, str]:
    return {"postgres": pg_url, "mysql": mysql_url}


def scalar(engine: str, url: str, sql: str) -> Any:
    db: Any = new_driver(engine, {f"{engine}.url": url})
    db.connect()
    try:
        return db.fetchone(sql)[0]
    finally:
        db.close()


@pytest.mark.parametrize("engine", ENGINES)
def test_experiment_1_insert_file_runs_on_both_engines(
    engine: str, urls: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "sql.json"
    code = main(
        [
            "sql",
            engine,
            "--url",
            urls[engine],
            "--init",
            str(EXAMPLES / "yb_insert_init.sql"),
            "-f",
            str(EXAMPLES / "yb_insert.sql"),
            "-c",
            "3",
            "-t",
            "20",
            "--json",
            str(out),
        ]
    )
    assert code == 0
    doc = ResultDocument.read(out)
    assert doc.operations["script"].statuses == {"OK": 60}
    assert doc.extra["statements"] == 60 and doc.extra["statements_per_pass"] == 1
    assert scalar(engine, urls[engine], "SELECT count(DISTINCT k) FROM test1") == 60  # a fresh uuid per row
    assert scalar(engine, urls[engine], "SELECT min(length(v1)) FROM test1") == 1000
    assert "tps = " in capsys.readouterr().out


@pytest.mark.parametrize("engine", ENGINES)
def test_every_pass_runs_every_statement_with_fresh_values(engine: str, urls: dict[str, str]) -> None:
    script = """
        INSERT INTO counts (n, s) VALUES ({{int:1:6}}, {{string:12}});
        UPDATE totals SET passes = passes + 1;  -- one per pass
        SELECT n FROM counts WHERE n = {{int:1:6}};
    """
    init = (
        "CREATE TABLE counts (n INT, s VARCHAR(12)); CREATE TABLE totals (passes INT);"
        " INSERT INTO totals VALUES (0)"
    )
    props = {f"{engine}.url": urls[engine], "sql.script": script, "sql.init": init, "sql.transaction": "true"}
    doc = run_phase(
        PhaseConfig(
            workload="sql",
            phase="run",
            engine=engine,
            properties=props,
            threads=2,
            processes=1,
            operation_count=50,
        )
    )
    assert doc.operations["script"].statuses == {"OK": 50}
    assert doc.extra["statements"] == 150
    url = urls[engine]
    assert scalar(engine, url, "SELECT passes FROM totals") == 50
    assert scalar(engine, url, "SELECT count(*) FROM counts") == 50
    assert (
        scalar(engine, url, "SELECT min(n) FROM counts") >= 1
        and scalar(engine, url, "SELECT max(n) FROM counts") <= 6
    )
    assert scalar(engine, url, "SELECT count(DISTINCT s) FROM counts") == 50
    assert scalar(engine, url, "SELECT min(length(s)) FROM counts") == 12


def test_a_failing_statement_counts_errors_and_flags_the_result(urls: dict[str, str]) -> None:
    props = {"postgres.url": urls["postgres"], "sql.script": "INSERT INTO no_such_table VALUES (1);"}
    doc = run_phase(
        PhaseConfig(
            workload="sql", phase="run", engine="postgres", properties=props, processes=1, operation_count=5
        )
    )
    assert "script" not in doc.operations  # nothing succeeded: no throughput entry at all
    assert doc.operations["script-FAILED"].statuses == {"ERROR": 5}
    assert doc.operations_total == 0 and doc.throughput == 0 and doc.failed_total == 5
    assert doc.error_rate == 1.0
    assert_honest(doc)
    assert any(f.code == "error_rate" and f.severity == "invalid" for f in doc.validity)


def test_sql_on_redis_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from benchwright.runner.workloads.registry import check_capability

    with pytest.raises(CapabilityError):
        check_capability("sql", "redis")
    assert (
        main(["sql", "postgres", "-f", str(tmp_path / "missing.sql"), "--url", "postgresql://u@127.0.0.1/x"])
        == 2
    )
    err = capsys.readouterr().err
    assert "-f: " in err and "missing.sql: cannot read the SQL file" in err  # the option and the file
