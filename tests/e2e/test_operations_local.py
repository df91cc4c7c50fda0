"""Operation benchmarks as phases of their own: a dump and restore with each engine's own tools,
timed from its start to the target answering a probe query again, next to the workload's results."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from benchwright.errors import SpecError
from benchwright.local import run_spec
from benchwright.providers.local import local_providers, open_local_store
from benchwright.report.experiments import html_context, text_tables
from benchwright.report.html import render_html
from benchwright.spec import parse_spec


def _spec(engine: str, operations: list[str]) -> dict[str, Any]:
    return {
        "name": f"ops-{engine}",
        "target": {"provider": "local", "engine": engine},
        "workload": {
            "name": "ycsb",
            "properties": {"recordcount": 2000, "fieldlength": 50},
            "phases": {"load": {"threads": 2}, "run": {"threads": 2, "operation_count": 500}},
        },
        "operations": operations,
    }


@pytest.mark.servers
@pytest.mark.slow
@pytest.mark.parametrize("engine", ["postgres", "mysql", "redis"])
def test_dump_restore_is_timed_and_the_data_comes_back(engine: str, tmp_path: Path) -> None:
    store = open_local_store(tmp_path / "store.sqlite")
    outcome = run_spec(
        parse_spec(_spec(engine, ["dump_restore"])),
        tmp_path / "out",
        lambda out, _spec: local_providers(out, store=store),
        console=Console(file=open(tmp_path / "console.txt", "w")),  # noqa: SIM115
    )
    record = outcome.record
    assert record.status == "succeeded", record.error
    run = record.cells[0].measured
    assert run is not None
    (op,) = run.timed_operations
    assert op.ok and op.name == "dump_restore", op.detail
    assert set(op.steps) == {"dump_s", "restore_s", "ready_s"}
    assert op.seconds is not None and op.seconds >= sum(op.steps.values()) - 0.01 and op.seconds > 0
    assert op.size_bytes is not None and op.size_bytes > 2000 * 50  # every record's data is in the dump
    found = re.search(r"([\d,]+) (rows|keys)", op.detail)  # the probe found them all after the restore
    assert found is not None and int(found[1].replace(",", "")) >= 2000, op.detail
    assert html_context(record)["timed"] and "Operation benchmarks" in render_html(record)
    assert any("Operation" in str(t.title) for t in text_tables(record))


def test_an_operation_a_target_cannot_do_is_refused_naming_the_field() -> None:
    with pytest.raises(SpecError) as err:
        parse_spec(_spec("postgres", ["dump_restore", "snapshot_restore"]))
    assert err.value.field == "operations[1]" and "local" in err.value.detail


def _cloud(target: dict[str, Any], operations: list[str]) -> dict[str, Any]:
    spec = _spec("postgres", operations)
    spec["target"] = target
    spec["runner"] = {"platform": "fargate", "placement": "same-az", "size": {"cpu": 1, "memory_mb": 2048}}
    return spec


YUGABYTE = {
    "provider": "ec2",
    "engine": "postgres",
    "template": "yugabytedb-3node",
    "instance_type": "m6i.large",
}
RDS = {"provider": "rds", "engine": "postgres", "engine_version": "16.4", "instance_class": "db.t3.micro",
       "storage": {"type": "gp2", "size_gb": 20}}  # fmt: skip


@pytest.mark.parametrize(
    ("target", "operations", "field", "said"),
    [
        (RDS, ["pitr"], "target.backup_retention_days", "automated backups"),
        ({**RDS, "engine": "mysql", "engine_version": "8.0.39"}, ["pitr"], "target.backup_retention_days",
         "automated backups"),
        (RDS, ["scale_out"], "operations[0]", "scale_out is not built for rds targets"),
        ({"provider": "ec2", "engine": "redis", "template": "redis-protocol", "server": "redis",
          "instance_type": "m6i.large"}, ["node_replace"], "operations[0]",
         "node_replace replaces a node of a cluster: template redis-protocol is a single server"),
        ({**YUGABYTE, "replication_factor": 1}, ["node_replace"], "target.replication_factor",
         "node_replace terminates a node: with replication_factor 1 its data is lost"),
        (YUGABYTE, ["snapshot_restore"], "operations[0]", "snapshot_restore is not built for ec2 targets"),
        ({**RDS, "backup_retention_days": 1}, ["node_replace"], "operations[0]",
         "node_replace is not built for rds targets"),
        ({"provider": "elasticache", "engine": "redis", "engine_version": "7.1", "node_type": "cache.r7g.large",
          "availability_zone": "eu-west-1a"},
         ["node_replace"], "operations[0]", "node_replace is not built for elasticache targets (there: none yet)"),
    ],
)  # fmt: skip
def test_a_cloud_operation_the_target_cannot_do_is_refused_naming_the_field(
    target: dict[str, Any], operations: list[str], field: str, said: str
) -> None:
    with pytest.raises(SpecError) as err:
        parse_spec(_cloud(target, operations))
    assert err.value.field == field and said in err.value.detail, (err.value.field, err.value.detail)


def test_cloud_operations_validate_on_rds_and_aurora_postgres_and_mysql_and_a_yugabytedb_cluster() -> None:
    parse_spec(_cloud(YUGABYTE, ["node_replace"]))  # three nodes, replication factor 3 by default
    parse_spec(_cloud({**RDS, "backup_retention_days": 1}, ["snapshot_restore", "pitr"]))
    aurora = {
        "provider": "aurora",
        "engine": "postgres",
        "engine_version": "16.4",
        "instance_class": "db.r6g.large",
    }
    parse_spec(_cloud(aurora, ["snapshot_restore", "pitr", "scale_out"]))
    # MySQL too: the Lambda's probe speaks MySQL through PyMySQL (providers/aws/probe.py)
    mysql = {"engine": "mysql", "engine_version": "8.0.39"}
    parse_spec(_cloud({**RDS, **mysql, "backup_retention_days": 1}, ["snapshot_restore", "pitr"]))
    parse_spec(_cloud({**aurora, **mysql}, ["snapshot_restore", "pitr", "scale_out"]))
