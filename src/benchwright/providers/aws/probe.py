"""Readiness probe: "available" in an AWS API is not "accepts connections" (Aurora, EC2 user-data).

A probe is a plain callable so tests (and moto, whose endpoints do not exist) can inject the answer.
The operation benchmarks' probe query (``sql_rows``) runs in a Lambda: psycopg's binary wheel for
PostgreSQL, PyMySQL (pure Python) for MySQL, as mysqlclient needs a libmysqlclient Lambda lacks.
"""

from __future__ import annotations

import socket
from collections.abc import Callable

from benchwright.runner.dataset import MARKER_TABLE

# MySQL's own schemas: every other schema's base tables are the user's (pg_stat_user_tables' sense)
MYSQL_SYSTEM_SCHEMAS = ("mysql", "information_schema", "performance_schema", "sys")

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
            if table == MARKER_TABLE:
                continue  # Benchwright's dataset marker: not the user's data
            row = conn.execute(
                sql.SQL("SELECT count(*) FROM {}.{}").format(sql.Identifier(schema), sql.Identifier(table))
            ).fetchone()
            total += int(row[0]) if row else 0
        return total


def mysql_rows(host: str, port: int, user: str, password: str, database: str, timeout_s: float = 5.0) -> int:
    """``postgres_rows`` for MySQL and MariaDB: the rows of every base table in ``database`` (a MySQL
    database is a schema; PostgreSQL's probe likewise sees only the database it connects to),
    counted exactly (``count(*)``, not information_schema's estimate)."""
    import pymysql

    conn = pymysql.connect(
        host=host,
        port=port,
        user=user,
        password=password,
        database=database,
        connect_timeout=max(1, int(timeout_s)),
        autocommit=True,
    )
    try:
        with conn.cursor() as cur:
            cur.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = %s"
                " AND table_type = 'BASE TABLE' ORDER BY table_name",
                (database,),
            )
            tables = [str(row[0]) for row in cur.fetchall()]
            total = 0
            for table in tables:
                if table == MARKER_TABLE:
                    continue  # Benchwright's dataset marker: not the user's data
                cur.execute(f"SELECT count(*) FROM {_quoted(database)}.{_quoted(table)}")
                row = cur.fetchone()
                total += int(row[0]) if row else 0
            return total
    finally:
        conn.close()


def _quoted(name: str) -> str:
    """A MySQL identifier, backquoted (a backquote inside is doubled)."""
    return "`" + name.replace("`", "``") + "`"


def sql_rows(
    engine: str, host: str, port: int, user: str, password: str, database: str, timeout_s: float = 5.0
) -> int:
    """The probe query of ``engine`` ("postgres" or "mysql", as in the spec)."""
    probe = {"postgres": postgres_rows, "mysql": mysql_rows}.get(engine)
    if probe is None:
        raise ValueError(f"no probe query for engine {engine!r}")
    return probe(host, port, user, password, database, timeout_s)
