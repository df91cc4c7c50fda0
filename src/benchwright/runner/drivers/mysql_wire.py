"""YCSB's key-value operations as requests for the MySQL / MariaDB event loop (``event_loop_my``).

The statements ``MySQLDriver``'s read/scan/update/insert/delete send on a thread, with the same
parameters quoted in the same way (``MySqlWire.quoted``: the connection's ``string_literal``), and
checks that judge a result the way the driver does: a read that finds no row is NOT_FOUND, a delete
that removes none is NOT_FOUND, and an update that changes none (MySQL counts rows *changed*, so
writing identical bytes counts 0) reads the record, as the driver does, to tell OK from NOT_FOUND.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from benchwright.runner.drivers.mysql_settings import quote_ident
from benchwright.runner.event_loop import Request, Step, then_if_found
from benchwright.runner.event_loop_my import MySqlWire, rows_found
from benchwright.runner.measure import Status

OK, NOT_FOUND = Status.OK, Status.NOT_FOUND


class MySqlKeyValueWire:
    """Builds one connection's requests; the SQL text of each statement shape is made once."""

    def __init__(self, driver: Any) -> None:
        self._driver = driver  # its connection: the affected row count of the statement just read
        self._quoted = MySqlWire(driver).quoted
        self._sql: dict[Any, str] = {}

    def _statement(self, sig: Any) -> str:
        sql = self._sql.get(sig)
        if sql is None:
            sql = self._sql[sig] = _sql_for(sig)
        return sql

    def _changed(self, result: Any) -> Status:
        """A check: the statement changed a row (YCSB's delete), else NOT_FOUND."""
        return OK if self._driver.conn.affected_rows() else NOT_FOUND

    def read_step(self, table: str, key: str, fields: Sequence[str] | None) -> Step:
        sql = self._statement(("r", table, tuple(fields) if fields else None))
        return self._quoted(sql, (key,)), 1, rows_found

    def read(self, table: str, key: str, fields: Sequence[str] | None) -> Request:
        return ("READ", *self.read_step(table, key, fields))

    def scan(self, table: str, start_key: str, count: int, fields: Sequence[str] | None) -> Request:
        sql = self._statement(("s", table, tuple(fields) if fields else None))
        return "SCAN", self._quoted(sql, (start_key, count)), 1, None

    def update_step(self, table: str, key: str, values: Mapping[str, str]) -> Step:
        sql = self._statement(("u", table, tuple(values)))
        found, driver = self.read_step(table, key, None), self._driver

        def changed_or_found(result: Any) -> Any:
            # as MySQLDriver.update: no row changed, so read the record (OK if it is there)
            return OK if driver.conn.affected_rows() else found

        return self._quoted(sql, (*values.values(), key)), 1, changed_or_found

    def update(self, table: str, key: str, values: Mapping[str, str]) -> Request:
        return ("UPDATE", *self.update_step(table, key, values))

    def insert(self, table: str, key: str, values: Mapping[str, str]) -> Request:
        sql = self._statement(("i", table, tuple(values)))
        return "INSERT", self._quoted(sql, (key, *values.values())), 1, None

    def delete(self, table: str, key: str) -> Request:
        return "DELETE", self._quoted(self._statement(("d", table, None)), (key,)), 1, self._changed

    def read_modify_write(
        self, table: str, key: str, fields: Sequence[str] | None, values: Mapping[str, str]
    ) -> Request:
        step = then_if_found(self.read_step(table, key, fields), self.update_step(table, key, values))
        return ("READ-MODIFY-WRITE", *step)


def _sql_for(sig: Any) -> str:
    """The statement ``MySQLDriver`` sends for the same operation shape (placeholders ``%s``)."""
    kind, table, names = sig
    name = quote_ident(table)
    columns = ", ".join(quote_ident(f) for f in names) if names else "*"
    if kind == "r":
        return f"SELECT {columns} FROM {name} WHERE YCSB_KEY = %s"
    if kind == "s":
        return f"SELECT {columns} FROM {name} WHERE YCSB_KEY >= %s ORDER BY YCSB_KEY LIMIT %s"
    if kind == "u":
        sets = ", ".join(f"{quote_ident(f)} = %s" for f in names)
        return f"UPDATE {name} SET {sets} WHERE YCSB_KEY = %s"
    if kind == "i":
        cols = ", ".join(["YCSB_KEY", *(quote_ident(f) for f in names)])
        marks = ", ".join(["%s"] * (len(names) + 1))
        return f"INSERT INTO {name} ({cols}) VALUES ({marks})"
    return f"DELETE FROM {name} WHERE YCSB_KEY = %s"
