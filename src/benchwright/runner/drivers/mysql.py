"""MySQL / MariaDB driver on mysqlclient (MySQLdb, the C client library).

Why mysqlclient rather than PyMySQL: on a point-select loop against the local MariaDB it needs about
half the client CPU per query and gives more throughput (figures in docs/workloads-sql.md); a load
generator that burns its own CPU measures itself, not the server. Both speak the same ``%s``
parameter style, so the workloads do not care.

One instance = one thread = one connection, autocommit on; ``begin`` opens an explicit transaction.
Statements whose parameters are ints, strings or None skip the cursor: the driver quotes them with
the connection's own escaping (``string_literal``), formats them into the statement exactly as
the cursor would (``bytes % literals``) and calls ``query`` / ``store_result`` on the C connection,
which saves about a third of the client CPU per statement. Other parameter types use the cursor.
Connection properties: ``mysql.url`` (mysql://user:password@host:port/database); the environment
variable ``BENCHWRIGHT_DB_PASSWORD``, when set, supplies the password instead, so it is never in a file.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import MySQLdb

from benchwright.errors import TargetUnreachable
from benchwright.runner.drivers.base import Capability, KeyValueDriver, SqlDriver
from benchwright.runner.drivers.mysql_settings import PASSWORD_ENV, parse_url, quote_ident, settings
from benchwright.runner.measure import Status

__all__ = ["PASSWORD_ENV", "MySQLDriver", "parse_url"]  # the URL rules live in mysql_settings

RETRY_CODES = frozenset({1213, 1205})  # ER_LOCK_DEADLOCK, ER_LOCK_WAIT_TIMEOUT
CONNECTION_LOST_CODES = frozenset({2006, 2013, 2055, 4031})  # gone away, lost during query, ...


class MySQLDriver(KeyValueDriver, SqlDriver):
    engine: ClassVar[str] = "mysql"
    dialect: ClassVar[str] = "mysql"
    capabilities: ClassVar[frozenset[Capability]] = frozenset({Capability.KEY_VALUE, Capability.SQL})

    def __init__(self, properties: Mapping[str, str], thread_index: int = 0) -> None:
        super().__init__(properties, thread_index)
        found = settings(properties)  # the checks validation runs without MySQLdb (mysql_settings)
        self._params = found.params
        self._timeout = found.connect_timeout
        self._op_timeouts = found.op_timeouts
        self._reply_timeout_s = found.reply_timeout_s
        self.conn: Any = None
        self._cursor: Any = None

    # -------------------------------------------------------------- life cycle
    def endpoint(self) -> str:
        return f"{self._params['host']}:{self._params['port']}"

    def connect(self) -> None:
        p = self._params
        try:
            self.conn = MySQLdb.connect(
                host=p["host"],
                port=p["port"],
                user=p["user"],
                password=p["password"],
                database=p["database"],
                connect_timeout=self._timeout,
                autocommit=True,
                **self._op_timeouts,
                charset="utf8mb4",
            )
        except MySQLdb.Error as exc:
            raise TargetUnreachable(self.endpoint(), _message(exc)) from None
        self._cursor = self.conn.cursor()

    def close(self) -> None:
        if self.conn is not None:
            with contextlib.suppress(MySQLdb.Error):
                self.conn.close()
            self.conn = self._cursor = None

    def recover(self) -> None:
        """Reconnect when the connection is gone; otherwise leave no transaction open."""
        if self.conn is not None:
            try:
                self.conn.rollback()
                return
            except MySQLdb.Error:
                self.close()
        self.connect()

    def server_version(self) -> str | None:
        row = self.fetchone("SELECT VERSION()")
        return str(row[0]) if row else None

    # -------------------------------------------------------------- the event loop (event_loop_my)
    def event_loop_channel(self) -> Any:
        from benchwright.runner.event_loop_my import MyChannel

        if self.conn is None:
            self.connect()  # raises TargetUnreachable naming the host, like any reconnect
        return MyChannel(self.conn, self._reply_timeout_s)

    def drop_channel(self) -> None:
        self.close()

    def sql_wire(self) -> Any:
        from benchwright.runner.event_loop_my import MySqlWire

        return MySqlWire(self)

    def kv_wire(self) -> Any:
        """YCSB's operations as the MySQL loop's requests (``drivers/mysql_wire.py``)."""
        from benchwright.runner.drivers.mysql_wire import MySqlKeyValueWire

        return MySqlKeyValueWire(self)

    # -------------------------------------------------------------- SQL
    def _cur(self) -> Any:
        """The cursor; after a failed reconnect there is none, so try again (raises TargetUnreachable
        naming the host rather than an AttributeError)."""
        if self._cursor is None:
            self.connect()
        return self._cursor

    def execute(self, sql: str, params: Sequence[Any] = ()) -> int:
        query = self._query(sql, params)
        if query is None:
            return int(self._cur().execute(sql, tuple(params) if params else None))
        self.conn.query(query)
        self.conn.store_result()  # rows, if any, are received
        affected = int(self.conn.affected_rows())
        self._drain()
        return affected

    def fetch_count(self, sql: str, params: Sequence[Any] = ()) -> int:
        query = self._query(sql, params)
        if query is None:
            return len(self.fetchall(sql, params))
        self.conn.query(query)
        result = self.conn.store_result()
        rows = int(result.num_rows()) if result is not None else 0
        self._drain()
        return rows

    def _drain(self) -> None:
        """Read any further result sets (a CALL returns one more), as the cursor's ``nextset`` does,
        so the next statement does not meet "commands out of sync"."""
        while self.conn.next_result() == 0:
            self.conn.store_result()

    def _query(self, sql: str, params: Sequence[Any]) -> bytes | None:
        """The statement with its parameters quoted in, as the cursor would send it; None when a
        parameter needs the cursor's conversions (floats, decimals, dates, bytes, booleans)."""
        self._cur()  # connects again after a failed reconnect (TargetUnreachable names the host)
        literals: list[bytes] = []
        quote = self.conn.string_literal
        for value in params:
            kind = type(value)
            if kind is int:
                literals.append(b"%d" % value)
            elif kind is str:
                literals.append(quote(value.encode("utf8")))
            elif value is None:
                literals.append(b"NULL")
            else:
                return None
        template = sql.encode("utf8")
        if not params:
            return template
        try:
            return template % tuple(literals)
        except TypeError as exc:  # the cursor's message for a placeholder count that does not match
            raise MySQLdb.ProgrammingError(str(exc)) from None

    def fetchall(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        cur = self._cur()
        cur.execute(sql, tuple(params) if params else None)
        return list(cur.fetchall())

    def fetchone(self, sql: str, params: Sequence[Any] = ()) -> tuple[Any, ...] | None:
        cur = self._cur()
        cur.execute(sql, tuple(params) if params else None)
        row: tuple[Any, ...] | None = cur.fetchone()
        if row is not None:
            cur.fetchall()  # drain, so the next statement does not see "commands out of sync"
        return row

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        # MySQLdb rewrites INSERT ... VALUES (...) into one multi-row statement: one round trip.
        self._cur().executemany(sql, [tuple(r) for r in rows])

    def begin(self) -> None:
        self._cur()
        self.conn.begin()

    def commit(self) -> None:
        self.conn.commit()

    def rollback(self) -> None:
        self.conn.rollback()

    def classify(self, error: BaseException) -> Status:
        if isinstance(error, MySQLdb.Error) and error.args and error.args[0] in RETRY_CODES:
            return Status.RETRY
        return Status.ERROR

    def is_connection_lost(self, error: BaseException) -> bool:
        return (
            isinstance(error, MySQLdb.OperationalError)
            and bool(error.args)
            and error.args[0] in (CONNECTION_LOST_CODES)
        )

    def table_exists(self, table: str) -> bool:
        row = self.fetchone(
            "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = %s",
            (table,),
        )
        return bool(row and row[0])

    # -------------------------------------------------------------- key-value (YCSB's DB interface)
    def create_table(self, table: str, fieldcount: int, *, drop: bool = False) -> None:
        if drop:
            self.execute(f"DROP TABLE IF EXISTS {quote_ident(table)}")
        fields = ", ".join(f"FIELD{i} TEXT" for i in range(fieldcount))
        self.execute(
            f"CREATE TABLE IF NOT EXISTS {quote_ident(table)} (YCSB_KEY VARCHAR(255) NOT NULL PRIMARY KEY, {fields})"
        )

    def count(self, table: str) -> int:
        row = self.fetchone(f"SELECT COUNT(*) FROM {quote_ident(table)}")
        return int(row[0]) if row else 0

    def read(self, table: str, key: str, fields: Sequence[str] | None) -> Status:
        cols = ", ".join(quote_ident(f) for f in fields) if fields else "*"
        row = self.fetchone(f"SELECT {cols} FROM {quote_ident(table)} WHERE YCSB_KEY = %s", (key,))
        return Status.OK if row is not None else Status.NOT_FOUND

    def scan(self, table: str, start_key: str, count: int, fields: Sequence[str] | None) -> Status:
        cols = ", ".join(quote_ident(f) for f in fields) if fields else "*"
        self.fetchall(
            f"SELECT {cols} FROM {quote_ident(table)} WHERE YCSB_KEY >= %s ORDER BY YCSB_KEY LIMIT %s",
            (start_key, count),
        )
        return Status.OK

    def update(self, table: str, key: str, values: Mapping[str, str]) -> Status:
        sets = ", ".join(f"{quote_ident(f)} = %s" for f in values)
        n = self.execute(
            f"UPDATE {quote_ident(table)} SET {sets} WHERE YCSB_KEY = %s", (*values.values(), key)
        )
        # MySQL reports rows *changed*; an update to identical bytes counts 0 although the row exists.
        return Status.OK if n or self.read(table, key, None) is Status.OK else Status.NOT_FOUND

    def insert(self, table: str, key: str, values: Mapping[str, str]) -> Status:
        cols = ", ".join(["YCSB_KEY", *(quote_ident(f) for f in values)])
        marks = ", ".join(["%s"] * (len(values) + 1))
        self.execute(f"INSERT INTO {quote_ident(table)} ({cols}) VALUES ({marks})", (key, *values.values()))
        return Status.OK

    def delete(self, table: str, key: str) -> Status:
        n = self.execute(f"DELETE FROM {quote_ident(table)} WHERE YCSB_KEY = %s", (key,))
        return Status.OK if n else Status.NOT_FOUND


def _message(exc: BaseException) -> str:
    """The server's message without the numeric tuple noise; never contains the password."""
    if getattr(exc, "args", None) and len(exc.args) >= 2:
        return f"{exc.args[1]} (MySQL error {exc.args[0]})"
    return str(exc)
