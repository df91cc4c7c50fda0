"""The rehearsal's model of what ElastiCache / MemoryDB accept in a parameter group
(rehearse/services/cache_parameters.py) held to a real Redis: every parameter that is not one of the
services' own is a configuration Redis knows, every enumerated value is one Redis accepts, and a
stand-in started with a group applies it (CONFIG SET), says what it could not apply, and keeps the
values across a failover restart, as the rehearsal relies on."""

from __future__ import annotations

from typing import Any

import pytest

from benchwright.providers.local.servers import wait_ready
from benchwright.rehearse.services.cache_parameters import PARAMETERS, SERVICE_ONLY, refusal
from benchwright.rehearse.standins import NoAuthRedis, local_target

pytestmark = pytest.mark.servers  # a throwaway redis-server of its own (scripts/local-servers install)

REDIS_NAMES = sorted(set(PARAMETERS) - SERVICE_ONLY)


@pytest.fixture(scope="module")
def standin() -> Any:
    server = NoAuthRedis(
        local_target("redis"),
        run_id="test-cache-params",
        parameters={"maxmemory-policy": "noeviction", "reserved-memory-percent": "25", "timeout": "bogus"},
    )
    server.create()
    try:
        assert wait_ready(server, 30) == "ready"
        yield server
    finally:
        server.delete()


def test_every_redis_parameter_of_the_model_is_a_redis_configuration(standin: Any) -> None:
    client = standin.client()
    try:
        unknown = [name for name in REDIS_NAMES if not client.config_get(name)]
    finally:
        client.close()
    assert not unknown, f"not a configuration of redis-server here: {unknown}"


def test_every_enumerated_value_is_one_redis_accepts(standin: Any) -> None:
    import redis

    client = standin.client()
    try:
        for name, allowed in PARAMETERS.items():
            if name in SERVICE_ONLY or not isinstance(allowed, tuple):
                continue
            before = client.config_get(name)[name]
            for value in allowed:
                try:
                    assert client.config_set(name, value), (name, value)
                except redis.ResponseError as exc:
                    # a redis-server built without the jemalloc active defrag needs (Debian's) refuses
                    # it with that reason, and a stand-in says so in not_applied; ElastiCache's has it
                    assert (name, value) == ("activedefrag", "yes"), exc
                    assert "Active defragmentation cannot be enabled" in str(exc)
                    continue
                assert client.config_get(name)[name] == value, (name, value)
            client.config_set(name, before)
    finally:
        client.close()


def test_the_model_refuses_what_the_services_refuse() -> None:
    assert refusal("elasticache", "maxmemory", "1gb")  # the service sizes it by node type
    assert refusal("elasticache", "save", "")  # persistence is the service's, not a parameter
    assert "allowed values" in str(refusal("elasticache", "maxmemory-policy", "evict-sometimes"))
    assert "integer" in str(refusal("elasticache", "timeout", "soon"))
    assert refusal("memorydb", "appendonly", "yes")  # MemoryDB keeps its data in its log
    assert refusal("elasticache", "appendonly", "yes") is None
    assert refusal("memorydb", "maxmemory-policy", "allkeys-lru") is None


def test_a_standin_applies_its_group_says_what_it_did_not_and_keeps_it_across_a_failover(
    standin: Any,
) -> None:
    assert standin.applied == {"maxmemory-policy": "noeviction"}
    assert set(standin.not_applied) == {"reserved-memory-percent", "timeout"}
    assert "no Redis configuration" in standin.not_applied["reserved-memory-percent"]
    assert "Redis refused" in standin.not_applied["timeout"]
    assert standin.config_get(["maxmemory-policy"]) == {"maxmemory-policy": "noeviction"}
    pid = standin.handle["pid"]
    standin.trigger("failover")  # SIGKILL and a restart from redis.conf: the group is applied again
    assert standin.handle["pid"] != pid
    assert standin.config_get(["maxmemory-policy"]) == {"maxmemory-policy": "noeviction"}
