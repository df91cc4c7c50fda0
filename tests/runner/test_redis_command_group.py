"""``redis.command_group`` (the Tair YCSB binding's name, seed experiment 2) chooses the data type the
same way ``redis.datatype`` does, against the real local Redis."""

from __future__ import annotations

import pytest

from benchwright.errors import SpecError
from benchwright.runner.drivers.redis import RedisDriver
from benchwright.runner.drivers.redis_datatype import redis_datatype

pytestmark = pytest.mark.servers


def test_command_group_names_the_datatype_and_contradictions_are_refused() -> None:
    assert redis_datatype({"redis.command_group": "string"}) == "string"
    assert redis_datatype({"redis.command_group": "SortedSet"}) == "zset"
    assert redis_datatype({}) == "hash"
    with pytest.raises(SpecError, match=r"contradicts redis\.datatype='hash'"):
        redis_datatype({"redis.command_group": "string", "redis.datatype": "hash"})
    with pytest.raises(SpecError, match=r"redis\.command_group"):
        redis_datatype({"redis.command_group": "stream"})


def test_a_command_group_string_record_is_a_redis_string(redis_props: dict[str, str]) -> None:
    driver = RedisDriver({**redis_props, "redis.command_group": "string"})
    driver.connect()
    try:
        driver.create_table("usertable", 1)
        driver.insert("usertable", "user1", {"field0": "x" * 128})
        assert driver.command("TYPE", "user1") in (b"string", "string")
    finally:
        driver.close()


def test_validation_refuses_command_group_string_with_ten_fields() -> None:
    from benchwright.spec import parse_spec

    spec = {"name": "x", "target": {"provider": "local", "engine": "redis"},
            "workload": {"name": "ycsb", "files": ["workloadc"],
                         "properties": {"redis.command_group": "string", "recordcount": 100}}}  # fmt: skip
    with pytest.raises(SpecError, match="one value per key"):
        parse_spec(spec)
