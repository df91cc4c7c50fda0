"""PostgreSQL-wire driver (PostgreSQL, YugabyteDB YSQL, Aurora, CockroachDB ...) on psycopg 3.

One connection per thread, autocommit, server-side prepared statements. A URL with several hosts
(``postgresql://u@h1:5433,h2:5433,h3:5433/db``) spreads threads round-robin over them, the way
YCSB's JDBC binding is pointed at three YugabyteDB nodes: thread i talks to host i mod n.

Key-value layout is YCSB's JDBC one: ``usertable(YCSB_KEY TEXT PRIMARY KEY, FIELD0..FIELDn TEXT)``.
``postgres.primary_key`` replaces the key clause (YSQL: ``PRIMARY KEY (YCSB_KEY ASC)``) and
``postgres.ddl_suffix`` is appended to CREATE TABLE (YSQL: ``SPLIT AT VALUES (...)``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import psycopg
from psycopg import errors as pg_errors
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from benchwright.errors import SpecError, TargetUnreachable
from benchwright.runner.drivers.base import Capability, KeyValueDriver, SqlDriver
from benchwright.runner.measure import Status

DEFAULT_URL = "postgresql://bench@127.0.0.1:5432/bench"


def host_conninfos(url: str) -> list[dict[str, Any]]:
    """Split a (possibly multi-host) libpq URL into one connection dict per host."""
    try:
        params = conninfo_to_dict(url)
    except psycopg.ProgrammingError as exc:
        raise SpecError("postgres.url", f"not a valid libpq URL or DSN: {exc}") from None
    hosts = str(params.get("host") or "127.0.0.1").split(",")
    ports = str(params.get("port") or "5432").split(",")
    if len(ports) == 1:
        ports = ports * len(hosts)
    if len(ports) != len(hosts):
        raise SpecError("postgres.url", f"{len(hosts)} hosts but {len(ports)} ports")
    return [{**params, "host": h, "port": p} for h, p in zip(hosts, ports, strict=True)]


def describe_connect_error(exc: BaseException) -> str:
    """The useful line of a libpq error (refused, timeout, authentication ...)."""
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    for ln in lines:
        low = ln.lower()
        if "password authentication failed" in low or "does not exist" in low or "no password" in low:
            return ln.split("FATAL:", 1)[-1].strip()
    for ln in lines:
        if "refused" in ln.lower() or "timeout" in ln.lower() or "could not" in ln.lower():
            return ln.split(": ", 2)[-1].strip() if "failed:" in ln else ln
    return lines[0] if lines else type(exc).__name__


class PostgresDriver(KeyValueDriver, SqlDriver):
    engine: ClassVar[str] = "postgres"
    dialect: ClassVar[str] = "postgres"
    capabilities: ClassVar[frozenset[Capability]] = frozenset({Capability.KEY_VALUE, Capability.SQL})

    def __init__(self, properties: Mapping[str, str], thread_index: int = 0) -> None:
        super().__init__(properties, thread_index)
        url = properties.get("postgres.url") or properties.get("db.url") or DEFAULT_URL
        hosts = host_conninfos(url)
        self.params = hosts[thread_index % len(hosts)]
        password = os.environ.get("BENCHWRIGHT_DB_PASSWORD") or properties.get("postgres.password")
        if password:
            self.params["password"] = password
        self.params.setdefault("connect_timeout", properties.get("postgres.connect_timeout", "5"))
        self.primary_key = properties.get("postgres.primary_key", "PRIMARY KEY (YCSB_KEY)")
        self.ddl_suffix = properties.get("postgres.ddl_suffix", "")
        self.conn: psycopg.Connection[Any] | None = None
        self.cur: psycopg.Cursor[Any] | None = None
        self._sql: dict[Any, str] = {}

    # -------------------------------------------------------------- life cycle
    def endpoint(self) -> str:
        return f"{self.params['host']}:{self.params['port']}"

    def connect(self) -> None:
        try:
            self.conn = psycopg.connect(make_conninfo(**self.params), autocommit=True)
        except psycopg.Error as exc:
            raise TargetUnreachable(self.endpoint(), describe_connect_error(exc)) from None
        self.cur = self.conn.cursor()

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = self.cur = None

    def recover(self) -> None:
        if self.conn is None or self.conn.closed or self.conn.broken:
            self.close()
            self.connect()
        elif self.conn.info.transaction_status == psycopg.pq.TransactionStatus.INERROR:
            self.conn.rollback()

    def server_version(self) -> str | None:
        row = self.fetchone("SELECT version()")
        return str(row[0]) if row else None

    # -------------------------------------------------------------- key-value (YCSB)
    def create_table(self, table: str, fieldcount: int, *, drop: bool = False) -> None:
        fields = ", ".join(f"FIELD{i} TEXT" for i in range(fieldcount))
        if drop:
            self.execute(f"DROP TABLE IF EXISTS {table}")
        self.execute(
            f"CREATE TABLE IF NOT EXISTS {table} (YCSB_KEY TEXT NOT NULL, {fields}, {self.primary_key})"
            f" {self.ddl_suffix}".rstrip()
        )

    def count(self, table: str) -> int:
        row = self.fetchone(f"SELECT count(*) FROM {table}")
        return int(row[0]) if row else 0

    def table_exists(self, table: str) -> bool:
        row = self.fetchone("SELECT to_regclass(%s) IS NOT NULL", (table,))
        return bool(row and row[0])

    def _columns(self, fields: Sequence[str] | None) -> str:
        return ", ".join(fields) if fields else "*"

    def read(self, table: str, key: str, fields: Sequence[str] | None) -> Status:
        sig = ("r", table, tuple(fields) if fields else None)
        sql = self._sql.get(sig)
        if sql is None:
            sql = self._sql[sig] = f"SELECT {self._columns(fields)} FROM {table} WHERE YCSB_KEY = %s"
        cur = self.cur
        assert cur is not None
        cur.execute(sql, (key,), prepare=True)
        return Status.OK if cur.fetchone() is not None else Status.NOT_FOUND

    def scan(self, table: str, start_key: str, count: int, fields: Sequence[str] | None) -> Status:
        sig = ("s", table, tuple(fields) if fields else None)
        sql = self._sql.get(sig)
        if sql is None:
            sql = self._sql[sig] = (
                f"SELECT {self._columns(fields)} FROM {table} WHERE YCSB_KEY >= %s ORDER BY YCSB_KEY LIMIT %s"
            )
        cur = self.cur
        assert cur is not None
        cur.execute(sql, (start_key, count), prepare=True)
        cur.fetchall()
        return Status.OK

    def update(self, table: str, key: str, values: Mapping[str, str]) -> Status:
        names = tuple(values)
        sig = ("u", table, names)
        sql = self._sql.get(sig)
        if sql is None:
            sets = ", ".join(f"{n} = %s" for n in names)
            sql = self._sql[sig] = f"UPDATE {table} SET {sets} WHERE YCSB_KEY = %s"
        cur = self.cur
        assert cur is not None
        cur.execute(sql, (*values.values(), key), prepare=True)
        return Status.OK if cur.rowcount else Status.NOT_FOUND

    def insert(self, table: str, key: str, values: Mapping[str, str]) -> Status:
        names = tuple(values)
        sig = ("i", table, names)
        sql = self._sql.get(sig)
        if sql is None:
            cols = ", ".join(("YCSB_KEY", *names))
            marks = ", ".join(["%s"] * (len(names) + 1))
            sql = self._sql[sig] = f"INSERT INTO {table} ({cols}) VALUES ({marks})"
        cur = self.cur
        assert cur is not None
        cur.execute(sql, (key, *values.values()), prepare=True)
        return Status.OK

    def delete(self, table: str, key: str) -> Status:
        cur = self.cur
        assert cur is not None
        cur.execute(f"DELETE FROM {table} WHERE YCSB_KEY = %s", (key,), prepare=True)
        return Status.OK if cur.rowcount else Status.NOT_FOUND

    # -------------------------------------------------------------- SQL
    def execute(self, sql: str, params: Sequence[Any] = ()) -> int:
        cur = self.cur
        assert cur is not None, "connect() first"
        cur.execute(sql, params or None, prepare=bool(params) or None)
        return cur.rowcount

    def fetchall(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        cur = self.cur
        assert cur is not None, "connect() first"
        cur.execute(sql, params or None, prepare=bool(params) or None)
        return cur.fetchall() if cur.description else []

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        cur = self.cur
        assert cur is not None, "connect() first"
        cur.executemany(sql, rows)

    def copy_rows(self, table: str, columns: Sequence[str], rows: Any) -> None:
        """Bulk load with COPY (what pgbench -i and fast loaders use)."""
        cur = self.cur
        assert cur is not None, "connect() first"
        with cur.copy(f"COPY {table} ({', '.join(columns)}) FROM STDIN") as copy:
            for row in rows:
                copy.write_row(row)

    def begin(self) -> None:
        self.execute("BEGIN")

    def commit(self) -> None:
        self.execute("COMMIT")

    def rollback(self) -> None:
        self.execute("ROLLBACK")

    def classify(self, error: BaseException) -> Status:
        if isinstance(error, (pg_errors.SerializationFailure, pg_errors.DeadlockDetected)):
            return Status.RETRY
        return Status.ERROR
