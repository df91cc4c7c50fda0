"""The MySQL driver's connection settings, read from the properties without the client library, and
its identifier quoting (shared by the driver and its event-loop wire, drivers/mysql_wire.py).

Spec validation checks them at the workflow's edge (ValidateSpec, the API) inside the Lambda asset,
which has no mysqlclient (no manylinux wheel): this module must never import MySQLdb.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote, urlsplit

from benchwright.errors import SpecError

PASSWORD_ENV = "BENCHWRIGHT_DB_PASSWORD"
DEFAULT_PORT = 3306


def parse_url(url: str) -> dict[str, Any]:
    """Split a mysql:// URL into MySQLdb.connect keyword arguments (password from env when set)."""
    parts = urlsplit(url)
    if parts.scheme not in ("mysql", "mariadb", "mysql+mysqldb"):
        raise SpecError(
            "mysql.url", f"expected mysql://user:password@host:port/database, got scheme {parts.scheme!r}"
        )
    if not parts.hostname:
        raise SpecError("mysql.url", "no host in the URL (mysql://user:password@host:port/database)")
    try:
        port = parts.port or DEFAULT_PORT
    except ValueError:
        raise SpecError("mysql.url", "the port is not a number") from None
    database = parts.path.lstrip("/")
    if not database:
        raise SpecError("mysql.url", "no database in the URL (mysql://user:password@host:port/database)")
    # The environment wins, as for the PostgreSQL driver: a container gets the secret without any file.
    password = os.environ.get(PASSWORD_ENV) or (unquote(parts.password) if parts.password else "")
    return {
        "host": parts.hostname,
        "port": port,
        "user": unquote(parts.username or "root"),
        "password": password,
        "database": unquote(database),
    }


@dataclass(frozen=True)
class MySQLSettings:
    params: dict[str, Any]  # MySQLdb.connect keyword arguments
    connect_timeout: int
    op_timeouts: dict[str, int] = field(default_factory=dict)  # the client library's read/write timeouts
    reply_timeout_s: float = 60.0  # a request unanswered this long on the event loop fails


def settings(properties: Mapping[str, str]) -> MySQLSettings:
    """The settings of ``properties``; a bad one is a SpecError naming its property."""
    url = properties.get("mysql.url")
    if not url:
        raise SpecError("mysql.url", "missing: set mysql.url=mysql://user:password@host:port/database")
    params = parse_url(url)
    connect_s = properties.get("mysql.connect_timeout") or properties.get("client.connect_timeout_s")
    op_s = properties.get("client.op_timeout_s")
    try:
        connect = max(1, round(float(connect_s or 10)))
    except ValueError:
        field_name = (
            "mysql.connect_timeout" if properties.get("mysql.connect_timeout") else "client.connect_timeout_s"
        )
        raise SpecError(field_name, "not a number of seconds") from None
    try:
        op = (
            {"read_timeout": max(1, round(float(op_s))), "write_timeout": max(1, round(float(op_s)))}
            if op_s
            else {}
        )
    except ValueError:
        raise SpecError("client.op_timeout_s", "not a number of seconds") from None
    try:
        reply = float(properties.get("mysql.timeout", "60"))
    except ValueError:
        raise SpecError("mysql.timeout", "not a number of seconds") from None
    return MySQLSettings(params=params, connect_timeout=connect, op_timeouts=op, reply_timeout_s=reply)


def quote_ident(name: str) -> str:
    """Quote an identifier; names come from specs, so refuse anything that is not a plain name."""
    if not name.replace("_", "").replace("$", "").isalnum():
        raise SpecError("table", f"{name!r} is not a plain SQL identifier")
    return f"`{name}`"
