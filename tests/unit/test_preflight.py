"""The connection / capacity preflight refuses, at validation, a spec the target cannot hold, naming
the field and both numbers; a spec that fits passes (every shipped example does)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from benchwright.errors import SpecError
from benchwright.spec import load_suite, parse_spec
from benchwright.spec.target_capacity import instance_memory_gib

ROOT = Path(__file__).resolve().parents[2]


def _pg_local(threads: int, settings: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "name": "pf",
        "target": {"provider": "local", "engine": "postgres", "settings": settings or {}},
        "workload": {"name": "ycsb", "phases": {"load": {"threads": 4}, "run": {"threads": threads}}},
    }


def _refused(data: dict[str, Any]) -> SpecError:
    with pytest.raises(SpecError) as err:
        parse_spec(data)
    return err.value


def test_more_clients_than_a_local_postgres_allows_is_refused_naming_both_numbers() -> None:
    err = _refused(_pg_local(120))
    assert err.field == "workload.phases.run.threads"
    assert "122 connections" in err.detail and "97 the target allows" in err.detail
    parse_spec(_pg_local(95))  # 95 + 2 fits in 100 - 3


def test_the_settings_max_connections_is_what_counts() -> None:
    parse_spec(_pg_local(120, {"max_connections": 200}))
    err = _refused(_pg_local(250, {"max_connections": 200}))
    assert "target.settings.max_connections 200" in err.detail and "252 connections" in err.detail


def test_a_matrix_cell_over_the_limit_is_refused() -> None:
    data = _pg_local(4)
    data["matrix"] = {"workload.phases.run.threads": [8, 500]}
    err = _refused(data)
    assert err.field == "workload.phases.run.threads" and "502 connections" in err.detail


def _rds(instance_class: str, threads: int, engine: str = "postgres") -> dict[str, Any]:
    return {
        "name": "pf-rds",
        "target": {
            "provider": "rds", "engine": engine, "engine_version": "16.4", "instance_class": instance_class,
            "storage": {"type": "gp3", "size_gb": 100},
        },
        "runner": {"platform": "fargate", "count": 2},
        "workload": {"name": "ycsb", "phases": {"load": {"enabled": False}, "run": {"threads": threads}}},
    }  # fmt: skip


def test_rds_uses_the_default_formula_from_the_instance_memory() -> None:
    # db.t3.micro: 1 GiB / 9531392 = 112 connections, 5 reserved; two runners of 60 clients need 122
    err = _refused(_rds("db.t3.micro", 60))
    assert "122 connections" in err.detail and "112" in err.detail and "db.t3.micro" in err.detail
    parse_spec(_rds("db.r6g.large", 60))  # 16 GiB: 1802 connections
    limit = parse_spec(_rds("db.r6g.large", 60)).target.usable_connections()
    assert limit is not None and limit[0] == 1802 - 5
    mysql = parse_spec(_rds("db.r6g.large", 60, "mysql")).target.usable_connections()
    assert mysql is not None and mysql[0] == 16 * 1024**3 // 12582880 - 1


def test_a_redis_dataset_larger_than_the_node_is_refused() -> None:
    data = {
        "name": "pf-redis",
        "target": {"provider": "local", "engine": "redis", "settings": {"maxmemory": "64mb"}},
        "workload": {
            "name": "ycsb",
            "properties": {"recordcount": 100000, "fieldcount": 10, "fieldlength": 100},
        },
    }
    err = _refused(data)
    assert err.field == "workload.properties.recordcount"
    assert "0.06 GiB" in err.detail and "target.settings.maxmemory 64mb" in err.detail
    data["workload"]["properties"]["recordcount"] = 20000
    parse_spec(data)


def test_elasticache_node_memory_less_its_reserved_share() -> None:
    data = {
        "name": "pf-ec",
        "target": {"provider": "elasticache", "engine": "redis", "engine_version": "7.1",
                   "node_type": "cache.t4g.micro", "availability_zone": "eu-west-1a"},
        "runner": {"platform": "fargate"},
        "workload": {"name": "ycsb", "properties": {"recordcount": 1000000, "fieldlength": 100}},
    }  # fmt: skip
    err = _refused(data)
    assert "cache.t4g.micro 0.5 GiB" in err.detail and "25% reserved" in err.detail
    assert instance_memory_gib("cache.r7g.large") == 13.07


def test_string_records_with_several_fields_are_refused_before_the_load() -> None:
    data = {
        "name": "pf-str",
        "target": {"provider": "local", "engine": "redis"},
        "workload": {
            "name": "ycsb",
            "properties": {"redis.datatype": "string", "recordcount": 10, "fieldcount": 10},
        },
    }
    err = _refused(data)
    assert err.field == "workload.properties.fieldcount" and "fieldcount is 10" in err.detail
    del data["workload"]["properties"]["fieldcount"]  # not written: derived as 1 (spec/derived.py)
    parse_spec(data)
    data["workload"]["properties"]["fieldcount"] = 1
    parse_spec(data)


@pytest.mark.parametrize("path", sorted((ROOT / "examples").glob("*.yaml")), ids=lambda p: p.name)
def test_every_example_passes_the_preflight(path: Path) -> None:
    assert load_suite(path).benchmarks
