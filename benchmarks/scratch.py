"""Per-run scratch space on the shared local servers, so that two benchmark runs at once (two helpers,
two checkouts) never load into or wipe each other's data: a PostgreSQL database of the run's own
(created, dropped at the end) and a Redis logical database claimed for the run (an empty one, marked
by a key in db 0 that expires by itself if the run is killed; flushed and released at the end).
"""

from __future__ import annotations

import random
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

CLAIM = "benchwright:bench-claim:{db}"
CLAIM_S = 6 * 3600  # a killed run's claim lapses by itself


@contextmanager
def pg_database(port: int, user: str = "bench", password: str = "bench") -> Iterator[str]:
    """A fresh PostgreSQL database of this run's own; yields its name."""
    import psycopg

    name = f"bw_bench_{secrets.token_hex(4)}"
    admin = f"postgresql://{user}:{password}@127.0.0.1:{port}/bench"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    try:
        yield name
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


@contextmanager
def redis_database(port: int, password: str = "bench") -> Iterator[int]:
    """An empty Redis logical database (1 .. databases-1) claimed for this run; yields its number."""
    import redis

    token = secrets.token_hex(8)
    zero: Any = redis.Redis(host="127.0.0.1", port=port, password=password, db=0)
    count = int(zero.config_get("databases")["databases"])
    candidates = list(range(1, count))
    random.shuffle(candidates)
    for db in candidates:
        client: Any = redis.Redis(host="127.0.0.1", port=port, password=password, db=db)
        if client.dbsize() == 0 and zero.set(CLAIM.format(db=db), token, nx=True, ex=CLAIM_S):
            break
    else:
        raise SystemExit(
            f"no free Redis database on 127.0.0.1:{port} (all {count - 1} hold data or are claimed)"
        )
    try:
        yield db
    finally:
        if zero.get(CLAIM.format(db=db)) == token.encode():
            client.flushdb()
            zero.delete(CLAIM.format(db=db))
        zero.close()
        client.close()
