"""Readiness probe: "available" in an AWS API is not "accepts connections" (Aurora, EC2 user-data).

A probe is a plain callable so tests (and moto, whose endpoints do not exist) can inject the answer.
"""

from __future__ import annotations

import socket
from collections.abc import Callable

Probe = Callable[[str, int], bool]


def tcp_probe(timeout_s: float = 3.0) -> Probe:
    """True when a TCP connection to host:port is accepted within ``timeout_s``."""

    def probe(host: str, port: int) -> bool:
        try:
            with socket.create_connection((host, port), timeout=timeout_s):
                return True
        except OSError:
            return False

    return probe


def postgres_rows(
    host: str, port: int, user: str, password: str, database: str, timeout_s: float = 5.0
) -> int:
    """The probe query of an operation benchmark: the rows of every user table, summed. It answers
    only when the database accepts connections AND serves its data, and the count says whether a
    restore brought all of it back (compared with the count before the operation)."""
    import psycopg
    from psycopg import sql

    with psycopg.connect(
        host=host,
        port=port,
        user=user,
        password=password,
        dbname=database,
        connect_timeout=max(1, int(timeout_s)),
        autocommit=True,
    ) as conn:
        tables = conn.execute(
            "SELECT schemaname, relname FROM pg_stat_user_tables ORDER BY schemaname, relname"
        ).fetchall()
        total = 0
        for schema, table in tables:
            row = conn.execute(
                sql.SQL("SELECT count(*) FROM {}.{}").format(sql.Identifier(schema), sql.Identifier(table))
            ).fetchone()
            total += int(row[0]) if row else 0
        return total
