"""Resetting a target drops the tables a dataset owns whatever foreign keys join them (pgbench -I f,
TPC-C), in as many passes as the keys need; a table referenced from outside is never forced."""

from __future__ import annotations

from typing import Any

import MySQLdb
import psycopg
import pytest

from benchwright.errors import SpecError
from benchwright.runner.dataset import drop_tables

pytestmark = pytest.mark.servers

PARENT_CHILD = [
    "CREATE TABLE p (id INT PRIMARY KEY)",
    "CREATE TABLE c (id INT PRIMARY KEY, pid INT REFERENCES p (id))",
]


class Sql:
    """The one method drop_tables needs, on an autocommit connection."""

    def __init__(self, conn: Any) -> None:
        self.conn = conn

    def execute(self, sql: str) -> None:
        cur = self.conn.cursor()
        cur.execute(sql)
        cur.close()

    def tables(self, query: str) -> set[str]:
        cur = self.conn.cursor()
        cur.execute(query)
        return {str(row[0]).lower() for row in cur.fetchall()}


def _postgres(pg_url: str) -> Sql:
    return Sql(psycopg.connect(pg_url, autocommit=True))


def _mysql(mysql_url: str) -> Sql:
    user, rest = mysql_url.removeprefix("mysql://").split("@")
    hostport, db = rest.split("/")
    host, port = hostport.split(":")
    conn = MySQLdb.connect(
        host=host, port=int(port), user=user.split(":")[0], password=user.split(":")[1], database=db
    )
    conn.autocommit(True)
    return Sql(conn)


@pytest.mark.parametrize("engine", ["postgres", "mysql"])
def test_parent_listed_before_its_child_is_dropped_in_a_second_pass(
    engine: str, pg_url: str, mysql_url: str
) -> None:
    db = _postgres(pg_url) if engine == "postgres" else _mysql(mysql_url)
    listing = (
        "SELECT tablename FROM pg_tables WHERE schemaname = 'public'"
        if engine == "postgres"
        else "SHOW TABLES"
    )
    for sql in PARENT_CHILD:
        db.execute(sql)
    drop_tables(db, ["p", "c"])  # the parent first: refused once, then dropped after its child
    assert not {"p", "c"} & db.tables(listing)


@pytest.mark.parametrize("engine", ["postgres", "mysql"])
def test_a_table_referenced_from_outside_is_an_error_naming_it(
    engine: str, pg_url: str, mysql_url: str
) -> None:
    db = _postgres(pg_url) if engine == "postgres" else _mysql(mysql_url)
    for sql in PARENT_CHILD:
        db.execute(sql)
    with pytest.raises(SpecError, match="cannot drop table p to reset the target"):
        drop_tables(db, ["p"])  # c is the user's: its key is never dropped by CASCADE
    drop_tables(db, ["c", "p"])
