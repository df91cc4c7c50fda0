"""The server's own counters travel with every phase, and agree with what the runner counted.

Each test runs a small spec end to end on a throwaway local server of its own (so nothing else
touches the counters) and cross-checks a server delta against the runner's operation counts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from benchwright.local import run_spec
from benchwright.providers.local import local_providers, open_local_store
from benchwright.results import ResultDocument
from benchwright.spec import BenchmarkSpec, parse_spec

pytestmark = [pytest.mark.servers, pytest.mark.slow]


def _run(tmp_path: Path, data: dict[str, Any]) -> dict[str, ResultDocument]:
    spec: BenchmarkSpec = parse_spec(data)
    store = open_local_store(tmp_path / "store.sqlite")
    outcome = run_spec(
        spec,
        tmp_path / "out",
        lambda out, _spec: local_providers(out, store=store),
        console=Console(file=open("/dev/null", "w"), width=120),  # noqa: SIM115
    )
    assert outcome.record.status == "succeeded", outcome.record.error
    return outcome.record.cells[0].phases


def _ycsb(engine: str, properties: dict[str, Any], records: int = 300, ops: int = 600) -> dict[str, Any]:
    return {
        "name": f"stats-{engine}",
        "target": {"provider": "local", "engine": engine},
        "workload": {
            "name": "ycsb",
            "properties": {"recordcount": records, "fieldlength": 20, **properties},
            "phases": {
                "load": {"threads": 2},
                "run": {"threads": 2, "operation_count": ops},
            },
        },
    }


def test_postgres_commits_cover_every_operation_the_runner_counted(tmp_path: Path) -> None:
    phases = _run(
        tmp_path,
        _ycsb("postgres", {"readproportion": 0.5, "updateproportion": 0.5, "requestdistribution": "uniform"}),
    )
    load, run = phases["load"], phases["run"]
    assert load.server_stats is not None and run.server_stats is not None
    db = run.server_stats.groups["pg_stat_database"].delta
    # every YCSB operation is one autocommit transaction: the server committed at least that many
    assert db["xact_commit"] >= run.operations_total == 600
    assert db["tup_updated"] >= run.operations["UPDATE"].statuses.get("OK", 0) > 0
    assert load.server_stats.groups["pg_stat_database"].delta["tup_inserted"] >= 300
    assert "pg_stat_bgwriter" in run.server_stats.groups or "pg_stat_checkpointer" in run.server_stats.groups
    assert run.server_stats.before_at < run.started_at and run.server_stats.after_at > run.ended_at


def test_redis_commandstats_count_exactly_the_runners_gets(tmp_path: Path) -> None:
    phases = _run(
        tmp_path,
        _ycsb(
            "redis",
            {"redis.datatype": "string", "fieldcount": 1, "readproportion": 1.0, "updateproportion": 0.0},
            ops=800,
        ),
    )
    load, run = phases["load"], phases["run"]
    assert run.server_stats is not None and load.server_stats is not None
    commands = run.server_stats.groups["commandstats"].delta
    reads = run.operations["READ"].operations
    assert reads == 800
    assert commands["get.calls"] == reads  # a throwaway server: nobody else sent a GET
    assert load.server_stats.groups["commandstats"].delta["set.calls"] == 300
    assert run.server_stats.groups["keyspace"].after["db0.keys"] >= 300
    assert run.server_stats.groups["stats"].delta["keyspace_hits"] >= reads  # + the setup's own lookups


def test_mariadb_status_counts_the_runners_selects(tmp_path: Path) -> None:
    phases = _run(tmp_path, _ycsb("mysql", {"readproportion": 1.0, "updateproportion": 0.0}, ops=500))
    run = phases["run"]
    assert run.server_stats is not None
    status = run.server_stats.groups["global_status"].delta
    assert status["Com_select"] >= run.operations["READ"].operations == 500
    assert status["Rows_read"] >= 500 and status["Handler_read_key"] >= 500
    assert run.server_stats.groups["innodb_metrics"].after  # the enabled InnoDB metrics are there


def test_show_and_the_report_carry_the_server_statistics(tmp_path: Path) -> None:
    from benchwright.report.experiments import headline, html_context, text_tables
    from benchwright.report.html import render_html
    from benchwright.runs import CellResult, RunRecord

    phases = _run(tmp_path, _ycsb("redis", {"readproportion": 1.0, "updateproportion": 0.0}, ops=200))
    run = phases["run"]
    assert run.server_stats is not None
    record = RunRecord(
        run_id="r1", spec_name="s", started_at=run.started_at, status="succeeded",
        cells=[CellResult(cell_id="default", phases=phases)],
    )  # fmt: skip
    rows = dict(((s, n), v) for s, n, v in headline(run.server_stats))
    assert rows[("commandstats", "hgetall calls")] == run.operations["READ"].operations
    html = render_html(record)
    assert "Server statistics (measured phase)" in html and "hgetall calls" in html
    assert "Server statistics" in str(text_tables(record)[0].title)
    assert html_context(record)["stats"]
