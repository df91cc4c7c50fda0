"""Redis's server statistics around a phase (runner/server_stats.py) against the real Redis: levels
that fall in a healthy phase (memory freed, keys deleted, an average per call) are deltas, never "counters
went backwards"; a counter that falls (a restart, CONFIG RESETSTAT) still is."""

from __future__ import annotations

import redis

from benchwright.results import StatGroup
from benchwright.runner.server_stats import StatsProbe, is_counter, went_backwards

KEYS = 2000


def client(props: dict[str, str]) -> redis.Redis:
    return redis.Redis(
        host=props["redis.host"], port=int(props["redis.port"]), password=props["redis.password"],
        db=int(props["redis.db"]), socket_timeout=5,
    )  # fmt: skip


def test_memory_and_keys_that_fall_are_not_a_reset(redis_props: dict[str, str]) -> None:
    r = client(redis_props)
    try:
        pipe = r.pipeline(transaction=False)
        for i in range(KEYS):
            pipe.set(f"ss:{i:06d}", "v" * 1000)
        pipe.execute()
        probe = StatsProbe("redis", redis_props).start()
        r.delete(*[f"ss:{i:06d}" for i in range(KEYS // 4, KEYS)])  # 1,500 keys, ~1.5 MB freed
        for i in range(KEYS // 4):
            r.get(f"ss:{i:06d}")
        stats = probe.finish()
    finally:
        r.close()
    assert stats is not None, "no snapshot"
    db = f"db{redis_props['redis.db']}"
    assert stats.groups["keyspace"].delta[f"{db}.keys"] == -(KEYS - KEYS // 4)  # our own database
    assert stats.groups["commandstats"].delta["get.calls"] >= KEYS // 4
    assert stats.groups["memory"].before["used_memory"] > 0 and "used_memory" in stats.groups["memory"].delta
    assert not [n for n in stats.notes if "went backwards" in n], stats.notes


def test_a_counter_that_falls_is_still_called_a_reset() -> None:
    groups = {
        "stats": StatGroup(before={"total_commands_processed": 900.0, "instantaneous_ops_per_sec": 50.0},
                           after={"total_commands_processed": 12.0, "instantaneous_ops_per_sec": 3.0},
                           delta={"total_commands_processed": -888.0, "instantaneous_ops_per_sec": -47.0}),
        "commandstats": StatGroup(before={"get.calls": 5.0, "get.usec_per_call": 3.0},
                                  after={"get.calls": 1.0, "get.usec_per_call": 1.0},
                                  delta={"get.calls": -4.0, "get.usec_per_call": -2.0}),
        "memory": StatGroup(before={"used_memory": 9e6}, after={"used_memory": 1e6}, delta={"used_memory": -8e6}),
    }  # fmt: skip
    assert went_backwards("redis", groups) == ["commandstats.get.calls", "stats.total_commands_processed"]
    assert not is_counter("postgres", "pg_stat_database", "numbackends")
    assert is_counter("postgres", "pg_stat_database", "xact_commit")
    assert not is_counter("mysql", "global_status", "Threads_connected")
    assert is_counter("mysql", "global_status", "Opened_tables") and is_counter(
        "mysql", "global_status", "Com_select"
    )
