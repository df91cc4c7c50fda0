"""Operation benchmarks on the throwaway local servers, with each engine's own tools.

``dump_restore`` (experiment 1 timed a logical dump and restore by hand):
- PostgreSQL: ``pg_dump -Fc`` of the benchmark database, then the database dropped, created again
  and ``pg_restore``d;
- MariaDB: ``mariadb-dump --single-transaction``, then the database dropped, created and fed to
  ``mariadb``;
- Redis: ``BGSAVE`` (an RDB snapshot), then the server restarted reading it back.
Each step is timed, and the whole from the start of the dump to the target accepting connections
again and answering a probe query (the same number of rows / keys as before the dump). The dump
file lives in the server's own throwaway directory and goes with it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchwright.errors import ProvisioningFailed
from benchwright.providers.local.server_os import DATABASE, USER, pg_bin

if TYPE_CHECKING:
    from benchwright.providers.local.servers import LocalServer

PROBE_TIMEOUT_S = 120.0


def _run(cmd: list[str], what: str, env: dict[str, str] | None = None, **kwargs: Any) -> None:
    kwargs.setdefault("stdout", subprocess.PIPE)
    result = subprocess.run(
        cmd, stderr=subprocess.PIPE, text=True, check=False, env=env, timeout=3600, **kwargs
    )
    if result.returncode != 0:
        raise ProvisioningFailed(f"{what} failed: {(result.stderr or result.stdout).strip()[-300:]}")


def _until(probe: Callable[[], Any], timeout: float = PROBE_TIMEOUT_S) -> Any:
    """Call ``probe`` until it returns without raising (the target is back), bounded."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            return probe()
        except Exception:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.02)  # polling the server's readiness, bounded by the deadline


def dump_restore(server: LocalServer) -> dict[str, Any]:
    started = datetime.now(UTC)
    t0 = time.monotonic()
    steps, size, detail = {
        "postgres": _postgres,
        "mysql": _mariadb,
        "redis": _redis,
    }[server.engine](server)
    return {
        "name": "dump_restore",
        "started_at": started.isoformat(),
        "seconds": round(time.monotonic() - t0, 3),
        "steps": {k: round(v, 3) for k, v in steps.items()},
        "size_bytes": size,
        "detail": detail,
    }


# ---------------------------------------------------------------- PostgreSQL
def _postgres(server: LocalServer) -> tuple[dict[str, float], int, str]:
    import psycopg

    port = server.handle["port"]
    base = Path(server.handle["dir"])
    dump = base / "dump.pgc"
    env = {**os.environ, "PGPASSWORD": server.credentials().password or ""}
    common = ["-h", "127.0.0.1", "-p", port, "-U", USER]
    admin = f"host=127.0.0.1 port={port} user={USER} dbname=postgres connect_timeout=5"

    def rows() -> int:
        with psycopg.connect(
            admin.replace("dbname=postgres", f"dbname={DATABASE}"), password=env["PGPASSWORD"]
        ) as conn:
            total = 0
            for (table,) in conn.execute("SELECT relname FROM pg_stat_user_tables").fetchall():
                row = conn.execute(f'SELECT count(*) FROM "{table}"').fetchone()
                total += int(row[0]) if row else 0
            return total

    before = rows()
    t = time.monotonic()
    _run([str(pg_bin() / "pg_dump"), *common, "-Fc", "-f", str(dump), DATABASE], "pg_dump", env)
    dump_s = time.monotonic() - t
    t = time.monotonic()
    with psycopg.connect(admin, password=env["PGPASSWORD"], autocommit=True) as conn:
        conn.execute(f"DROP DATABASE {DATABASE} WITH (FORCE)")
        conn.execute(f"CREATE DATABASE {DATABASE}")
    _run([str(pg_bin() / "pg_restore"), *common, "-d", DATABASE, "--no-owner", str(dump)], "pg_restore", env)
    restore_s = time.monotonic() - t
    t = time.monotonic()
    after = _until(rows)
    if after != before:
        raise ProvisioningFailed(f"dump_restore: {after} rows after the restore, {before} before")
    return (
        {"dump_s": dump_s, "restore_s": restore_s, "ready_s": time.monotonic() - t},
        dump.stat().st_size,
        f"pg_dump -Fc / pg_restore of {before:,} rows; probe: the same row count",
    )


# ---------------------------------------------------------------- MariaDB
def _mariadb(server: LocalServer) -> tuple[dict[str, float], int, str]:
    import MySQLdb

    base = Path(server.handle["dir"])
    sock = str(base / "mysqld.sock")
    dump = base / "dump.sql"
    client = shutil.which("mariadb") or shutil.which("mysql") or "mariadb"
    dumper = shutil.which("mariadb-dump") or shutil.which("mysqldump") or "mariadb-dump"

    def rows() -> int:
        conn = MySQLdb.connect(unix_socket=sock, user="root", database=DATABASE, connect_timeout=5)
        try:
            cur = conn.cursor()
            cur.execute("SHOW TABLES")
            total = 0
            for (table,) in cur.fetchall():
                cur.execute(f"SELECT count(*) FROM `{table}`")
                total += int(cur.fetchone()[0])
            return total
        finally:
            conn.close()

    before = rows()
    t = time.monotonic()
    with open(dump, "w") as out:
        _run(
            [dumper, f"--socket={sock}", "-uroot", "--single-transaction", DATABASE],
            "mariadb-dump",
            stdout=out,
        )
    dump_s = time.monotonic() - t
    t = time.monotonic()
    _run([client, f"--socket={sock}", "-uroot", "-e", f"DROP DATABASE {DATABASE}; CREATE DATABASE {DATABASE}"],
         "mariadb (drop/create)")  # fmt: skip
    with open(dump) as source:
        _run([client, f"--socket={sock}", "-uroot", DATABASE], "mariadb (restore)", stdin=source)
    restore_s = time.monotonic() - t
    t = time.monotonic()
    after = _until(rows)
    if after != before:
        raise ProvisioningFailed(f"dump_restore: {after} rows after the restore, {before} before")
    return (
        {"dump_s": dump_s, "restore_s": restore_s, "ready_s": time.monotonic() - t},
        dump.stat().st_size,
        f"mariadb-dump --single-transaction / mariadb of {before:,} rows; probe: the same row count",
    )


# ---------------------------------------------------------------- Redis
def _redis(server: LocalServer) -> tuple[dict[str, float], int, str]:
    import redis

    base = Path(server.handle["dir"])

    def client() -> redis.Redis:
        return redis.Redis(
            host="127.0.0.1", port=int(server.handle["port"]), password=server.credentials().password,
            socket_timeout=30, socket_connect_timeout=2,
        )  # fmt: skip

    def keys() -> int:
        c = client()
        try:
            return int(c.dbsize())  # raises LOADING while the RDB is read back
        finally:
            c.close()

    before = keys()
    t = time.monotonic()
    c = client()
    try:
        last = c.lastsave()
        c.bgsave()

        def saved() -> None:
            if c.lastsave() == last or c.info("persistence")["rdb_bgsave_in_progress"]:
                raise RuntimeError("BGSAVE still running")

        _until(saved)
        if c.info("persistence").get("rdb_last_bgsave_status") != "ok":
            raise ProvisioningFailed("dump_restore: BGSAVE failed (rdb_last_bgsave_status)")
    finally:
        c.close()
    dump_s = time.monotonic() - t
    t = time.monotonic()
    server.trigger("reboot")  # a clean restart reads dump.rdb back
    restore_s = time.monotonic() - t
    t = time.monotonic()
    after = _until(keys)
    if after != before:
        raise ProvisioningFailed(f"dump_restore: {after} keys after the restart, {before} before")
    return (
        {"dump_s": dump_s, "restore_s": restore_s, "ready_s": time.monotonic() - t},
        (base / "dump.rdb").stat().st_size,
        f"BGSAVE, then a restart reading the RDB back ({before:,} keys); probe: DBSIZE",
    )


OPERATIONS: dict[str, Callable[[LocalServer], dict[str, Any]]] = {"dump_restore": dump_restore}
