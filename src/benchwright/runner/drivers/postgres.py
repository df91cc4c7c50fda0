"""PostgreSQL-wire driver (PostgreSQL, YugabyteDB YSQL, Aurora, CockroachDB ...) on psycopg 3.

One connection per thread, autocommit, server-side prepared statements. The key-value operations
(YCSB's hot path) talk to psycopg's libpq wrapper directly (``pgconn.prepare`` once, then
``pgconn.exec_prepared`` with text parameters): no cursor, no adaptation layer, no row objects; the
values of the rows read are still fetched from the result. The SQL workloads take the same path for
statements whose parameters are ints, strings or None, with untyped parameters as ``pgbench -M
prepared`` sends them; other parameter types, and statements the server cannot type that way, go
through psycopg's cursor. Errors become psycopg's exception classes
(``psycopg.errors.error_from_result``), so ``classify`` and ``recover`` see what they saw before. A URL with several hosts
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
from psycopg import pq
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from benchwright.errors import SpecError, TargetUnreachable
from benchwright.runner.drivers.base import Capability, KeyValueDriver, SqlDriver

# imported with the driver, not on the loop's first use: a worker imports its driver before its
# measured window starts, and these imports (some 10 ms of CPU) would otherwise fall inside it
from benchwright.runner.drivers.postgres_wire import PostgresKeyValueWire, PostgresSqlWire
from benchwright.runner.event_loop_pq import PqChannel
from benchwright.runner.measure import Status

DEFAULT_URL = "postgresql://bench@127.0.0.1:5432/bench"
_RESULT_OK = (pq.ExecStatus.COMMAND_OK, pq.ExecStatus.TUPLES_OK)


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


def op_timeout_params(value: str | None) -> dict[str, str]:
    """``client.op_timeout_s`` for libpq, whose calls cannot be cut short from the client: the server
    cancels a statement running longer (statement_timeout), and a peer that stops answering (a host
    gone in a failover) is detected by TCP keepalives and tcp_user_timeout within about that time."""
    if not value:
        return {}
    seconds = float(value)
    if seconds <= 0:
        raise SpecError("client.op_timeout_s", f"must be positive, got {value}")
    ms = max(1, int(seconds * 1000))
    return {
        "options": f"-c statement_timeout={ms}",
        "keepalives": "1",
        "keepalives_idle": str(max(1, int(seconds // 2))),
        "keepalives_interval": "1",
        "keepalives_count": "2",
        "tcp_user_timeout": str(ms),
    }


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
        connect_s = properties.get("postgres.connect_timeout") or properties.get("client.connect_timeout_s")
        self.params.setdefault("connect_timeout", str(max(1, round(float(connect_s or 5)))))
        self.params.update(op_timeout_params(properties.get("client.op_timeout_s")))
        self.primary_key = properties.get("postgres.primary_key", "PRIMARY KEY (YCSB_KEY)")
        self.ddl_suffix = properties.get("postgres.ddl_suffix", "")
        self.conn: psycopg.Connection[Any] | None = None
        self.cur: psycopg.Cursor[Any] | None = None
        self._sql: dict[Any, str] = {}
        self._prepared: dict[Any, bytes] = {}  # statement signature -> server-side statement name
        self._sql_names: dict[str, bytes | None] = {}  # SQL text -> statement name (None: cursor)
        self._loop_prepared: dict[bytes, bytes] = {}  # the event loop's statements on this session
        self._encoding = "utf-8"
        try:
            self.reply_timeout_s = float(properties.get("postgres.timeout", "60"))
        except ValueError:
            raise SpecError("postgres.timeout", "not a number of seconds") from None

    # -------------------------------------------------------------- life cycle
    def endpoint(self) -> str:
        return f"{self.params['host']}:{self.params['port']}"

    def connect(self) -> None:
        try:
            self.conn = psycopg.connect(make_conninfo(**self.params), autocommit=True)
        except psycopg.Error as exc:
            raise TargetUnreachable(self.endpoint(), describe_connect_error(exc)) from None
        self.cur = self.conn.cursor()
        self._prepared = {}  # prepared statements live and die with the session
        self._sql_names = {}
        self._loop_prepared = {}
        self._encoding = self.conn.info.encoding

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

    def event_loop_channel(self) -> Any:
        if self.conn is None or self.conn.closed:
            self.close()
            self.connect()  # raises TargetUnreachable (an OperationalError's message) like any reconnect
        assert self.conn is not None
        return PqChannel(self.conn.pgconn, self._loop_prepared, self.reply_timeout_s, self._encoding)

    def drop_channel(self) -> None:
        self.close()

    def kv_wire(self) -> Any:
        return PostgresKeyValueWire()

    def sql_wire(self) -> Any:
        return PostgresSqlWire(self._encoding)

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

    def _exec(self, sig: Any, sql: str | None, params: Sequence[bytes]) -> Any:
        """Run the prepared statement ``sig`` (preparing ``sql`` on first use); return the libpq
        result or raise psycopg's exception for an error result."""
        conn = self.conn
        assert conn is not None, "connect() first"
        pgconn = conn.pgconn
        name = self._prepared.get(sig)
        if name is None:
            assert sql is not None
            name = b"bw_kv_%d" % len(self._prepared)
            self._check(pgconn.prepare(name, sql.encode()), pgconn)
            self._prepared[sig] = name
        return self._check(pgconn.exec_prepared(name, params), pgconn)

    def _check(self, result: Any, pgconn: Any) -> Any:
        if result.status in _RESULT_OK:
            return result
        if pgconn.status != pq.ConnStatus.OK:  # the session is gone: psycopg says OperationalError
            self._prepared = {}
            self._sql_names = {}
            message = result.error_message.decode(self._encoding, "replace").strip()
            raise psycopg.OperationalError(message or "the connection to the server was lost")
        raise pg_errors.error_from_result(result, encoding=self._encoding)

    def read(self, table: str, key: str, fields: Sequence[str] | None) -> Status:
        sig = ("r", table, tuple(fields) if fields else None)
        sql = None
        if sig not in self._prepared:
            sql = f"SELECT {self._columns(fields)} FROM {table} WHERE YCSB_KEY = $1"
        result = self._exec(sig, sql, (key.encode(),))
        if not result.ntuples:
            return Status.NOT_FOUND
        get = result.get_value
        for column in range(result.nfields):
            get(0, column)  # the record's values, as the client receives them
        return Status.OK

    def scan(self, table: str, start_key: str, count: int, fields: Sequence[str] | None) -> Status:
        sig = ("s", table, tuple(fields) if fields else None)
        sql = None
        if sig not in self._prepared:
            sql = (
                f"SELECT {self._columns(fields)} FROM {table} WHERE YCSB_KEY >= $1 ORDER BY YCSB_KEY LIMIT $2"
            )
        result = self._exec(sig, sql, (start_key.encode(), b"%d" % count))
        get, columns = result.get_value, range(result.nfields)
        for row in range(result.ntuples):
            for column in columns:
                get(row, column)
        return Status.OK

    def update(self, table: str, key: str, values: Mapping[str, str]) -> Status:
        names = tuple(values)
        sig = ("u", table, names)
        sql = None
        if sig not in self._prepared:
            sets = ", ".join(f"{n} = ${i}" for i, n in enumerate(names, 1))
            sql = f"UPDATE {table} SET {sets} WHERE YCSB_KEY = ${len(names) + 1}"
        params = [v.encode() for v in values.values()]
        params.append(key.encode())
        result = self._exec(sig, sql, params)
        return Status.OK if result.command_tuples else Status.NOT_FOUND

    def insert(self, table: str, key: str, values: Mapping[str, str]) -> Status:
        names = tuple(values)
        sig = ("i", table, names)
        sql = None
        if sig not in self._prepared:
            cols = ", ".join(("YCSB_KEY", *names))
            marks = ", ".join(f"${i}" for i in range(1, len(names) + 2))
            sql = f"INSERT INTO {table} ({cols}) VALUES ({marks})"
        params = [key.encode()]
        params += [v.encode() for v in values.values()]
        self._exec(sig, sql, params)
        return Status.OK

    def delete(self, table: str, key: str) -> Status:
        sig = ("d", table)
        sql = None if sig in self._prepared else f"DELETE FROM {table} WHERE YCSB_KEY = $1"
        result = self._exec(sig, sql, (key.encode(),))
        return Status.OK if result.command_tuples else Status.NOT_FOUND

    # -------------------------------------------------------------- SQL
    def execute(self, sql: str, params: Sequence[Any] = ()) -> int:
        if params:
            result = self._exec_sql(sql, params)
            if result is not None:
                rows = result.command_tuples
                return -1 if rows is None else rows
        cur = self.cur
        assert cur is not None, "connect() first"
        cur.execute(sql, params or None, prepare=bool(params) or None)
        return cur.rowcount

    def fetchall(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        cur = self.cur
        assert cur is not None, "connect() first"
        cur.execute(sql, params or None, prepare=bool(params) or None)
        return cur.fetchall() if cur.description else []

    def fetch_count(self, sql: str, params: Sequence[Any] = ()) -> int:
        if params:
            result = self._exec_sql(sql, params)
            if result is not None:
                return int(result.ntuples)
        return len(self.fetchall(sql, params))

    def _exec_sql(self, sql: str, params: Sequence[Any]) -> Any:
        """Run ``sql`` as a prepared statement with text parameters; None when psycopg must run it
        (a parameter that needs adaptation, ``%%`` or named placeholders, an untypeable statement)."""
        encoding = self._encoding
        args: list[bytes | None] = []
        for value in params:
            kind = type(value)
            if kind is int:
                args.append(b"%d" % value)
            elif kind is str:
                args.append(value.encode(encoding))
            elif value is None:
                args.append(None)
            else:
                return None  # bytes, floats, decimals, dates, booleans: psycopg's dumpers
        if sql in self._sql_names:
            name = self._sql_names[sql]
        else:
            name = self._sql_names[sql] = self._prepare_sql(sql, len(params))
        if name is None:
            return None
        conn = self.conn
        assert conn is not None, "connect() first"
        result = conn.pgconn.exec_prepared(name, args)  # type: ignore[arg-type]  # None is SQL NULL
        return self._check(result, conn.pgconn)

    def _prepare_sql(self, sql: str, nparams: int) -> bytes | None:
        """Prepare ``sql`` with ``$n`` placeholders and untyped parameters, inside a savepoint when a
        transaction is open so that a statement the server cannot type leaves the transaction
        usable; None when psycopg should run it instead."""
        pieces = sql.split("%s")
        if len(pieces) - 1 != nparams or any("%" in piece for piece in pieces):
            return None
        text = pieces[0] + "".join(f"${i}{piece}" for i, piece in enumerate(pieces[1:], 1))
        conn = self.conn
        assert conn is not None, "connect() first"
        pgconn = conn.pgconn
        name = b"bw_sql_%d" % len(self._sql_names)
        in_block = pgconn.transaction_status == pq.TransactionStatus.INTRANS
        if in_block:
            self._check(pgconn.exec_(b"SAVEPOINT bw_prepare"), pgconn)
        result = pgconn.prepare(name, text.encode(self._encoding))
        prepared = result.status == pq.ExecStatus.COMMAND_OK
        if not prepared and pgconn.status != pq.ConnStatus.OK:
            self._check(result, pgconn)  # the connection is gone: raises OperationalError
        if in_block:
            undo = b"RELEASE SAVEPOINT bw_prepare" if prepared else b"ROLLBACK TO SAVEPOINT bw_prepare"
            self._check(pgconn.exec_(undo), pgconn)
            if not prepared:
                self._check(pgconn.exec_(b"RELEASE SAVEPOINT bw_prepare"), pgconn)
        return name if prepared else None

    def _command(self, sql: bytes) -> None:
        conn = self.conn
        assert conn is not None, "connect() first"
        self._check(conn.pgconn.exec_(sql), conn.pgconn)

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
        self._command(b"BEGIN")

    def commit(self) -> None:
        self._command(b"COMMIT")

    def rollback(self) -> None:
        self._command(b"ROLLBACK")

    def classify(self, error: BaseException) -> Status:
        if isinstance(error, (pg_errors.SerializationFailure, pg_errors.DeadlockDetected)):
            return Status.RETRY
        return Status.ERROR
