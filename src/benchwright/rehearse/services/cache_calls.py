"""The ElastiCache and MemoryDB calls moto 5.2.5 lacks (parameter groups, TestFailover,
FailoverShard), installed together: what the rehearsal's hooks and every moto account of the tests
install, once per process."""

from __future__ import annotations

from benchwright.rehearse.services import cache_api, cache_api_memorydb


def install() -> None:
    cache_api.install()
    cache_api_memorydb.install()
