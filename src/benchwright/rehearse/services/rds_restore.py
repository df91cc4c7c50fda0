"""Snapshots and restores inside the moto server, so an operation benchmark's probe queries real data.

moto keeps snapshots as records and makes every restore a plain CreateDBInstance / CreateDBCluster,
which (services/rds.py) would start an EMPTY stand-in. Here:

- CreateDBSnapshot / CreateDBClusterSnapshot also dump the source's stand-in into the rehearsal's
  directory (``snapshots/<id>.pgc``: ``pg_dump -Fc``; ``snapshots/<id>.sql``: ``mariadb-dump
  --single-transaction`` for a MySQL target's MariaDB stand-in), so the snapshot holds the data of
  that instant, and the stand-in's password (in memory only): a restored database keeps the
  snapshot's master password.
- RestoreDBInstanceFromDBSnapshot / RestoreDBClusterFromSnapshot restore that dump into the new
  stand-in (``pg_restore``; ``mariadb``); RestoreDBInstanceToPointInTime /
  RestoreDBClusterToPointInTime dump the source's stand-in at the call (the latest restorable time:
  the rehearsal's backup is always current) and restore it. The new stand-in takes the source's
  password. The copy is made inside the API call, before the restored resource reads ``creating``
  (then ``available`` once the stand-in answers).
- DeleteDBSnapshot / DeleteDBClusterSnapshot delete the dump.

Passwords reach the tools through the environment (PGPASSWORD, MYSQL_PWD), never an argument.
"""

from __future__ import annotations

import inspect
import os
import shutil
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:
    from benchwright.rehearse.hooks import Hooks


@dataclass(frozen=True)
class Copy:
    """The data a restored stand-in starts with: a dump file of its engine and the source's password."""

    dump: Path
    password: str
    keep: bool  # a snapshot's dump stays until the snapshot is deleted; a PITR's goes after the restore
    engine: str = "postgres"  # "mysql": a mariadb-dump SQL file


def _pg(tool: str) -> str:
    from benchwright.providers.local.server_os import pg_bin

    return str(pg_bin() / tool)


def _my(*names: str) -> str:
    return next((found for name in names if (found := shutil.which(name))), names[0])


def _run(argv: list[str], password: str, what: str, stdin: IO[str] | None = None,
         stdout: IO[str] | None = None) -> None:  # fmt: skip
    env = {**os.environ, "PGPASSWORD": password, "MYSQL_PWD": password}
    done = subprocess.run(argv, env=env, stdin=stdin, stdout=stdout if stdout is not None else subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, check=False, timeout=600)  # fmt: skip
    if done.returncode != 0:
        raise RuntimeError(f"{what} failed: {(done.stderr or done.stdout or '').strip()[-300:]}")


def dump(hooks: Hooks, source: str, name: str) -> Copy | None:
    """A dump of the stand-in of ``source`` (PostgreSQL or MariaDB); None when it has none."""
    from benchwright.providers.local.server_os import DATABASE, USER
    from benchwright.providers.local.servers import MariaDbServer, PostgresServer

    server = hooks.standins.get(source)
    if not isinstance(server, PostgresServer | MariaDbServer):
        hooks.events.append(f"{name}: no SQL stand-in for {source}: the restore starts empty")
        return None
    password = server.credentials().password or ""
    directory = hooks.out_dir / "snapshots"
    directory.mkdir(parents=True, exist_ok=True)
    port = server.handle["port"]
    if isinstance(server, PostgresServer):
        path = directory / f"{name}.pgc"
        _run([_pg("pg_dump"), "-h", "127.0.0.1", "-p", port, "-U", USER, "-Fc", "-f", str(path), DATABASE],
             password, f"pg_dump of {source}")  # fmt: skip
        tool, engine = "pg_dump", "postgres"
    else:
        path = directory / f"{name}.sql"
        with open(path, "w") as out:
            _run([_my("mariadb-dump", "mysqldump"), "-h", "127.0.0.1", "-P", port, "-u", USER,
                  "--single-transaction", DATABASE], password, f"mariadb-dump of {source}", stdout=out)  # fmt: skip
        tool, engine = "mariadb-dump", "mysql"
    hooks.events.append(f"{name}: {tool} of {source}'s stand-in, {path.stat().st_size:,} bytes")
    return Copy(path, password, keep=True, engine=engine)


def _restore_postgres(server: Any, ident: str, copy: Copy, own: str) -> None:
    """pg_restore the dump, then the role takes the source's password."""
    import psycopg
    from psycopg import sql

    from benchwright.providers.local.server_os import DATABASE, USER

    port = server.handle["port"]
    _run([_pg("pg_restore"), "-h", "127.0.0.1", "-p", port, "-U", USER, "-d", DATABASE, "--no-owner",
          str(copy.dump)], own, f"pg_restore into {ident}")  # fmt: skip
    conninfo = f"host=127.0.0.1 port={port} user={USER} dbname=postgres connect_timeout=5"
    with psycopg.connect(conninfo, password=own, autocommit=True) as conn:
        conn.execute(
            sql.SQL("ALTER ROLE {} PASSWORD {}").format(sql.Identifier(USER), sql.Literal(copy.password))
        )


def _restore_mysql(server: Any, ident: str, copy: Copy, own: str) -> None:
    """Feed the dump to ``mariadb``, then the user (at both of its hosts) takes the source's password."""
    import MySQLdb

    from benchwright.providers.local.server_os import DATABASE, USER

    port = server.handle["port"]
    with open(copy.dump) as source:
        _run([_my("mariadb", "mysql"), "-h", "127.0.0.1", "-P", port, "-u", USER, DATABASE], own,
             f"mariadb restore into {ident}", stdin=source)  # fmt: skip
    conn = MySQLdb.connect(host="127.0.0.1", port=int(port), user=USER, password=own, connect_timeout=5)
    try:
        cur = conn.cursor()
        for host in ("127.0.0.1", "localhost"):
            cur.execute(f"ALTER USER '{USER}'@'{host}' IDENTIFIED BY %s", (copy.password,))
    finally:
        conn.close()


def fill(hooks: Hooks, ident: str, copy: Copy) -> Callable[[Any], None]:
    """What start_standin does with a new stand-in for ``ident``: restore ``copy``, take its password."""

    def restore(server: Any) -> None:
        deadline = time.monotonic() + 120
        while server.status() != "ready":
            if time.monotonic() > deadline:
                raise RuntimeError(f"stand-in for {ident} did not start")
            time.sleep(0.1)  # polling a process we started, bounded by the deadline
        own = server.credentials().password or ""
        (_restore_mysql if copy.engine == "mysql" else _restore_postgres)(server, ident, copy, own)
        server._password = copy.password  # the restored database keeps the source's master password
        (Path(server.handle["dir"]) / ".password").write_text(copy.password)
        if not copy.keep:
            copy.dump.unlink(missing_ok=True)
        hooks.events.append(f"{ident}: stand-in restored from {copy.dump.name}")

    return restore


def install(hooks: Hooks) -> None:
    from moto.rds.models import RDSBackend

    snapshots: dict[str, Copy] = {}
    original = {name: RDSBackend.__dict__[name] for name in (
        "create_db_snapshot", "create_db_cluster_snapshot", "delete_db_snapshot", "delete_db_cluster_snapshot",
        "restore_db_instance_from_db_snapshot", "restore_db_cluster_from_snapshot",
        "restore_db_instance_to_point_in_time", "restore_db_cluster_to_point_in_time")}  # fmt: skip

    def take(create: Any, source_key: str, snapshot_key: str) -> Any:
        signature = inspect.signature(create)  # moto passes the request's parameters by keyword

        def patched(backend: Any, *args: Any, **kwargs: Any) -> Any:
            bound = signature.bind(backend, *args, **kwargs).arguments
            made = create(backend, *args, **kwargs)
            if bound.get("snapshot_type", "manual") != "manual":  # moto's automated backups: no data
                return made
            snapshot = str(bound[snapshot_key])
            copy = dump(hooks, str(bound[source_key]), snapshot)
            if copy is not None:
                snapshots[snapshot] = copy
            return made

        return patched

    def drop(delete: Any) -> Any:
        def patched(backend: Any, snapshot: str) -> Any:
            gone = delete(backend, snapshot)
            copy = snapshots.pop(snapshot, None)
            if copy is not None:
                copy.dump.unlink(missing_ok=True)
            return gone

        return patched

    def from_snapshot(restore: Any, key: str) -> Any:
        def patched(backend: Any, snapshot: str, overrides: dict[str, Any]) -> Any:
            # moto 5.2.5's get_cfg needs the password, which RDS manages here: the clusters' and the
            # cluster snapshots' copies of them (a cluster restore reads the snapshot's copy)
            clusters = [*backend.clusters.values(), *(s.cluster for s in backend.cluster_snapshots.values())]
            for cluster in clusters:
                cluster.__dict__.setdefault("_master_user_password", None)
            copy = snapshots.get(snapshot.rsplit(":", 1)[-1])
            return _restoring(hooks, overrides[key], copy, lambda: restore(backend, snapshot, overrides))

        return patched

    def instance_pitr(backend: Any, source: str, target: str, overrides: dict[str, Any]) -> Any:
        copy = _pitr_copy(hooks, source, target)
        restore = original["restore_db_instance_to_point_in_time"]
        return _restoring(hooks, target, copy, lambda: restore(backend, source, target, overrides))

    def cluster_pitr(backend: Any, db_cluster_identifier: str, source_db_cluster_identifier: str,
                     **kwargs: Any) -> Any:  # fmt: skip
        copy = _pitr_copy(hooks, source_db_cluster_identifier, db_cluster_identifier)
        restore = original["restore_db_cluster_to_point_in_time"]
        kwargs.pop("restore_to_time", None)  # moto refuses a time with full-copy; the copy is "now"
        return _restoring(hooks, db_cluster_identifier, copy, lambda: restore(
            backend, db_cluster_identifier, source_db_cluster_identifier, **kwargs))  # fmt: skip

    hooks.patch(
        RDSBackend,
        "create_db_snapshot",
        take(original["create_db_snapshot"], "db_instance_identifier", "db_snapshot_identifier"),
    )
    hooks.patch(
        RDSBackend,
        "create_db_cluster_snapshot",
        take(
            original["create_db_cluster_snapshot"], "db_cluster_identifier", "db_cluster_snapshot_identifier"
        ),
    )
    hooks.patch(RDSBackend, "delete_db_snapshot", drop(original["delete_db_snapshot"]))
    hooks.patch(RDSBackend, "delete_db_cluster_snapshot", drop(original["delete_db_cluster_snapshot"]))
    hooks.patch(
        RDSBackend,
        "restore_db_instance_from_db_snapshot",
        from_snapshot(original["restore_db_instance_from_db_snapshot"], "db_instance_identifier"),
    )
    hooks.patch(
        RDSBackend,
        "restore_db_cluster_from_snapshot",
        from_snapshot(original["restore_db_cluster_from_snapshot"], "db_cluster_identifier"),
    )
    hooks.patch(RDSBackend, "restore_db_instance_to_point_in_time", instance_pitr)
    hooks.patch(RDSBackend, "restore_db_cluster_to_point_in_time", cluster_pitr)  # fmt: skip


def _pitr_copy(hooks: Hooks, source: str, target: str) -> Copy | None:
    copy = dump(hooks, source, f"{target}-pitr")
    return Copy(copy.dump, copy.password, keep=False, engine=copy.engine) if copy is not None else None


def _restoring(hooks: Hooks, ident: str, copy: Copy | None, call: Callable[[], Any]) -> Any:
    """Run a restore call with ``copy`` waiting for ``ident``'s new stand-in (services/rds.py)."""
    if copy is not None:
        hooks.restores[ident] = fill(hooks, ident, copy)
    try:
        return call()
    finally:
        hooks.restores.pop(ident, None)
