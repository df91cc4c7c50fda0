"""The generated history the site's tests share: 60 nights of 6 benchmarks with two injected level
shifts, one engine-version change and invalid nights (issue 26), saved into an in-memory store."""

from __future__ import annotations

from benchwright.providers.local.sqlite_store import SQLiteResultStore
from benchwright.record_files import store_of_records
from benchwright.site.sample import FIRST_NIGHT, Plan, history

NIGHTS = 60
SLOWER_AT, FASTER_AT, CONTEXT_AT = 20, 45, 30
INVALID_AT = (10, 50)


def plans() -> list[Plan]:
    return [
        Plan("ycsb-a-pg", shifts={SLOWER_AT: 0.85}),
        Plan("tpcc-mysql", shifts={FASTER_AT: 1.2}),
        Plan("redis-get", context_at=CONTEXT_AT),
        Plan("oltp-read", invalid=INVALID_AT),
        Plan("tpcb-pg"),
        Plan("sql-custom", cells=("rows=1000",)),
    ]


def night_date(index: int) -> str:
    from datetime import timedelta

    return f"{FIRST_NIGHT + timedelta(days=index):%Y-%m-%d}"


def store(nights: int = NIGHTS) -> SQLiteResultStore:
    return store_of_records(history(plans(), nights, seed=7))
