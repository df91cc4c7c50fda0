"""Throwaway local database servers: PostgreSQL, MariaDB, Redis on 127.0.0.1, one per benchmark cell.

Each server gets a fresh data directory under a temporary folder, a free port (or the spec's port), a
random password, and the spec's server settings; it runs as its own OS user (postgres / mysql / redis)
when we are root, as ourselves otherwise. ``create`` only starts the process; ``status`` polls once
(connect = ready; process gone = failed, with the server log's last lines); ``delete`` stops the
process tree and removes the directory, and succeeds when there is nothing left to remove.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import subprocess
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import psutil

from benchwright.errors import ProvisioningFailed
from benchwright.providers.base import Credentials, Target, TargetStatus
from benchwright.providers.local.operations import OPERATIONS
from benchwright.providers.local.pidfiles import register_process, unregister_process
from benchwright.providers.local.server_os import (
    DATABASE,
    PROCESSES,
    USER,
    chown,
    free_port,
    kill_process_tree,
    log_tail,
    parent_dir,
    pg_bin,
    port_in_use,
    server_user,
    stop_process_tree,
    tool_errors,
)
from benchwright.providers.local.stray import forget, record
from benchwright.spec import LocalTarget as LocalSpec


def _setting_value(value: Any) -> str:
    if isinstance(value, bool):
        return "on" if value else "off"
    return str(value)


class LocalServer(Target[LocalSpec]):
    """Template for the three engines; subclasses say how to initialise, start and probe."""

    kind = "local"
    engine = ""
    os_user = ""

    # -------------------------------------------------------------- Target hooks
    def _create(self) -> dict[str, str]:
        port = self.spec.port
        if port is not None and port_in_use(port):
            raise ProvisioningFailed(f"127.0.0.1:{port}: port already in use (target.port)")
        port = int(port) if port is not None else free_port()
        base = Path(
            tempfile.mkdtemp(prefix=f"benchwright-{self.engine}-", dir=parent_dir(server_user(self.os_user)))
        )
        os.chmod(base, 0o755)
        user = server_user(self.os_user)
        password = secrets.token_urlsafe(18)
        handle = {"engine": self.engine, "port": str(port), "dir": str(base), "user": user or ""}
        self.handle.update(handle)
        self._password = password
        (base / ".password").write_text(password)
        os.chmod(base / ".password", 0o600)
        try:
            self._initialise(base, port, password, user)
            proc = self._spawn(base, port, password, user)
        except ProvisioningFailed:
            self._delete()
            raise
        except (OSError, subprocess.SubprocessError) as exc:
            self._delete()
            raise ProvisioningFailed(f"{self.engine}: could not start the server ({exc})") from None
        PROCESSES[proc.pid] = proc
        handle["pid"] = str(proc.pid)
        register_process(self.run_id, "server", proc.pid, str(base))
        record(proc.pid, str(base))
        return handle

    def _spawn(self, base: Path, port: int, password: str, user: str | None) -> subprocess.Popen[bytes]:
        log = open(base / "server.log", "ab")  # noqa: SIM115 - handed to the child
        try:
            return subprocess.Popen(
                self._command(base, port, password),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                user=user,
                group=user,
                extra_groups=[] if user else None,
                cwd=base,
            )
        finally:
            log.close()

    def trigger(self, action: str, params: Mapping[str, Any] | None = None) -> str:
        """failover: the server is killed (SIGKILL, the whole process tree) and started again on the
        same data directory and port, so PostgreSQL and MariaDB recover from their logs as a promoted
        standby would replay; reboot: a clean shutdown (SIGTERM), then the same start. Redis keeps no
        log here, so its data is saved (SAVE) just before, as a replica would hold it. Returns once
        the server answers its probe again (or raises ProvisioningFailed after startup_timeout_s)."""
        if action not in ("failover", "reboot"):
            return super().trigger(action, params)
        pid = int(self.handle.get("pid", "0") or 0)
        base = Path(self.handle["dir"])
        port = int(self.handle["port"])
        t0 = time.monotonic()
        self._before_stop()
        if action == "failover":
            kill_process_tree(pid, self._owned)
        else:
            stop_process_tree(pid, self._owned)
        PROCESSES.pop(pid, None)
        forget(pid)
        stopped = time.monotonic() - t0
        user = self.handle.get("user") or None
        try:
            proc = self._spawn(base, port, self.credentials().password or "", user)
        except (OSError, subprocess.SubprocessError) as exc:
            raise ProvisioningFailed(f"{self.engine}: could not restart the server ({exc})") from None
        PROCESSES[proc.pid] = proc
        record(proc.pid, str(base))
        self.handle["pid"] = str(proc.pid)
        deadline = time.monotonic() + self.spec.startup_timeout_s
        while True:
            if self._process() is None:
                raise ProvisioningFailed(self.failure_reason())
            try:
                self._probe()
                break
            except Exception:
                if time.monotonic() > deadline:
                    raise ProvisioningFailed(f"{self.engine}: not back up after {action}") from None
                time.sleep(0.05)  # polling the server's readiness, bounded by the deadline
        return (
            f"{'killed' if action == 'failover' else 'stopped'} in {stopped:.2f} s, "
            f"accepting connections {time.monotonic() - t0:.2f} s after the {action} began"
        )

    def operation(self, name: str) -> dict[str, Any]:
        """Run and time an operation benchmark (providers/local/operations.py)."""
        if name not in OPERATIONS:
            return super().operation(name)
        return OPERATIONS[name](self)

    def _before_stop(self) -> None:
        """Engine hook before a restart (Redis saves its data)."""

    def _status(self) -> TargetStatus:
        proc = self._process()
        if proc is None:
            return "failed"
        if self.handle.get("ready") == "1":
            return "ready"
        try:
            self._probe()
        except Exception:
            return "creating" if self._process() is not None else "failed"
        self.handle["ready"] = "1"
        return "ready"

    def failure_reason(self) -> str:
        log = Path(self.handle.get("dir", "")) / "server.log"
        return (
            f"{self.engine} server on 127.0.0.1:{self.handle.get('port')} exited: {log_tail(log) or 'no log'}"
        )

    def _delete(self) -> None:
        pid = int(self.handle.get("pid", "0") or 0)
        if pid:
            stop_process_tree(pid, self._owned)
            PROCESSES.pop(pid, None)
            forget(pid)
        directory = self.handle.get("dir")
        if directory and Path(directory).name.startswith(f"benchwright-{self.engine}-"):
            shutil.rmtree(directory, ignore_errors=True)
        if pid:
            unregister_process(self.run_id, "server", pid)
        self.handle.clear()

    def _owned(self, proc: psutil.Process) -> bool:
        """Only ever signal a process that really is our server (pids get reused)."""
        with contextlib.suppress(psutil.Error):
            return (
                any(self.handle.get("dir", "\0") in part for part in proc.cmdline()) or proc.pid in PROCESSES
            )
        return False

    def _process(self) -> psutil.Process | None:
        pid = int(self.handle.get("pid", "0") or 0)
        if not pid:
            return None
        popen = PROCESSES.get(pid)
        if popen is not None and popen.poll() is not None:
            return None
        try:
            proc = psutil.Process(pid)
            if proc.status() == psutil.STATUS_ZOMBIE:
                return None
            return proc
        except psutil.Error:
            return None

    def server_pids(self) -> list[int]:
        """The server's process tree, for the host metrics sampler."""
        proc = self._process()
        if proc is None:
            return []
        with contextlib.suppress(psutil.Error):
            return [proc.pid, *(c.pid for c in proc.children(recursive=True))]
        return [proc.pid]

    def credentials(self) -> Credentials:
        password = getattr(self, "_password", None)
        if password is None and self.handle.get("dir"):
            with contextlib.suppress(OSError):
                password = (Path(self.handle["dir"]) / ".password").read_text()
        return Credentials(password=password)

    def describe(self) -> dict[str, Any]:
        return {
            "kind": "local",
            "engine": self.engine,
            "port": self.handle.get("port"),
            "settings": {k: str(v) for k, v in self.spec.settings.items()},
        }

    def fingerprint_facts(self) -> dict[str, str | None]:
        return {**super().fingerprint_facts(), "storage": "local disk"}

    # -------------------------------------------------------------- engine hooks
    def _initialise(self, base: Path, port: int, password: str, user: str | None) -> None:
        """Create the data directory (before the server process starts)."""

    def _command(self, base: Path, port: int, password: str) -> list[str]:
        raise NotImplementedError

    def _probe(self) -> None:
        """Connect once (raise when not accepting connections yet); set up user/database on success."""
        raise NotImplementedError


# ================================================================ PostgreSQL
class PostgresServer(LocalServer):
    engine = "postgres"
    os_user = "postgres"

    def _initialise(self, base: Path, port: int, password: str, user: str | None) -> None:
        data = base / "data"
        data.mkdir(mode=0o700)
        pwfile = base / ".pwfile"
        pwfile.write_text(password + "\n")
        chown(base, user)
        result = subprocess.run(
            [
                str(pg_bin() / "initdb"),
                "-D",
                str(data),
                "-U",
                USER,
                f"--pwfile={pwfile}",
                "-A",
                "scram-sha-256",
                "-E",
                "UTF8",
                "--locale=C.UTF-8",
                "--no-sync",
            ],
            capture_output=True,
            text=True,
            user=user,
            group=user,
            extra_groups=[] if user else None,
            check=False,
        )
        pwfile.unlink()
        if result.returncode != 0:
            raise ProvisioningFailed(f"postgres: initdb failed: {tool_errors(result.stderr)}")
        lines = []
        for key, value in self.spec.settings.items():
            text = _setting_value(value).replace("'", "''")
            lines.append(f"{key} = '{text}'")
        # ours last: in postgresql.conf the last line wins, so no setting can move the server
        lines += ["listen_addresses = '127.0.0.1'", f"port = {port}", f"unix_socket_directories = '{data}'"]
        with open(data / "postgresql.conf", "a") as conf:
            conf.write("\n# benchwright\n" + "\n".join(lines) + "\n")

    def _command(self, base: Path, port: int, password: str) -> list[str]:
        return [str(pg_bin() / "postgres"), "-D", str(base / "data")]

    def _probe(self) -> None:
        import psycopg

        conninfo = f"host=127.0.0.1 port={self.handle['port']} user={USER} dbname=postgres connect_timeout=2"
        with psycopg.connect(conninfo, password=self.credentials().password, autocommit=True) as conn:
            if conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (DATABASE,)).fetchone() is None:
                conn.execute(f"CREATE DATABASE {DATABASE}")

    def connection_properties(self) -> dict[str, str]:
        return {"postgres.url": f"postgresql://{USER}@127.0.0.1:{self.handle['port']}/{DATABASE}"}


# ================================================================ MariaDB
class MariaDbServer(LocalServer):
    engine = "mysql"
    os_user = "mysql"

    def _initialise(self, base: Path, port: int, password: str, user: str | None) -> None:
        data = base / "data"
        data.mkdir()
        # the spec's settings first, ours after them: in my.cnf the last value of an option wins
        lines = ["[mariadbd]"]
        lines += [f"{key} = {_setting_value(value)}" for key, value in self.spec.settings.items()]
        lines += [
            f"datadir = {data}",
            f"port = {port}",
            "bind-address = 127.0.0.1",
            f"socket = {base / 'mysqld.sock'}",
            f"pid-file = {base / 'mysqld.pid'}",
            f"tmpdir = {base}",  # not $TMPDIR: the mysql user may not be able to write there
            "skip-name-resolve",
        ]
        (base / "my.cnf").write_text("\n".join(x for x in lines if x) + "\n")
        chown(base, user)
        install = shutil.which("mariadb-install-db") or shutil.which("mysql_install_db")
        if install is None:
            raise ProvisioningFailed("mysql: mariadb-install-db not found (scripts/local-servers install)")
        result = subprocess.run(
            [
                install,
                f"--defaults-file={base / 'my.cnf'}",
                f"--datadir={data}",
                "--auth-root-authentication-method=socket",
                "--skip-test-db",
                *([f"--user={user}"] if user else []),
            ],
            capture_output=True,
            text=True,
            check=False,
        )
        if result.returncode != 0:
            raise ProvisioningFailed(
                f"mysql: mariadb-install-db failed: {tool_errors((result.stderr or '') + (result.stdout or ''))}"
            )
        chown(base, user)

    def _command(self, base: Path, port: int, password: str) -> list[str]:
        server = shutil.which("mariadbd") or shutil.which("mysqld") or "mariadbd"
        return [server, f"--defaults-file={base / 'my.cnf'}"]

    def _probe(self) -> None:
        import MySQLdb

        sock = str(Path(self.handle["dir"]) / "mysqld.sock")
        conn = MySQLdb.connect(unix_socket=sock, user="root", connect_timeout=2)
        try:
            cur = conn.cursor()
            pw = self.credentials().password or ""
            cur.execute(f"CREATE DATABASE IF NOT EXISTS {DATABASE}")
            for host in ("127.0.0.1", "localhost"):
                cur.execute(f"CREATE USER IF NOT EXISTS '{USER}'@'{host}' IDENTIFIED BY %s", (pw,))
                cur.execute(f"GRANT ALL PRIVILEGES ON *.* TO '{USER}'@'{host}'")
            cur.execute("FLUSH PRIVILEGES")
        finally:
            conn.close()

    def connection_properties(self) -> dict[str, str]:
        return {"mysql.url": f"mysql://{USER}@127.0.0.1:{self.handle['port']}/{DATABASE}"}


# ================================================================ Redis
class RedisServer(LocalServer):
    engine = "redis"
    os_user = "redis"

    def _initialise(self, base: Path, port: int, password: str, user: str | None) -> None:
        if shutil.which("redis-server") is None:
            raise ProvisioningFailed("redis: redis-server not found (scripts/local-servers install)")
        settings = {"save": "", "appendonly": "no", **self.spec.settings}
        lines = []
        for key, value in settings.items():
            text = "yes" if value is True else "no" if value is False else str(value)
            lines.append(f'{key} "{text}"' if text == "" else f"{key} {text}")
        lines += [  # ours last: in redis.conf the last directive wins
            "bind 127.0.0.1",
            f"port {port}",
            f"dir {base}",
            "daemonize no",
            f"requirepass {password}",
            "databases 64",
        ]
        (base / "redis.conf").write_text("\n".join(lines) + "\n")
        os.chmod(base / "redis.conf", 0o600)
        chown(base, user)

    def _command(self, base: Path, port: int, password: str) -> list[str]:
        return [shutil.which("redis-server") or "redis-server", str(base / "redis.conf")]

    def _probe(self) -> None:
        import redis

        client = redis.Redis(
            host="127.0.0.1",
            port=int(self.handle["port"]),
            password=self.credentials().password,
            socket_timeout=2,
            socket_connect_timeout=2,
        )
        try:
            client.ping()
        finally:
            client.close()

    def connection_properties(self) -> dict[str, str]:
        return {"redis.host": "127.0.0.1", "redis.port": self.handle["port"], "redis.db": "0"}

    def _before_stop(self) -> None:
        import redis

        client = redis.Redis(
            host="127.0.0.1",
            port=int(self.handle["port"]),
            password=self.credentials().password,
            socket_timeout=30,
        )
        try:
            client.save()
        finally:
            client.close()


SERVERS: dict[str, type[LocalServer]] = {
    "postgres": PostgresServer,
    "mysql": MariaDbServer,
    "redis": RedisServer,
}


def wait_ready(target: Target, timeout: float, poll: float = 0.1) -> TargetStatus:
    """Poll ``status`` until ready, failed or ``timeout`` (the one local waiting helper for targets)."""
    deadline = time.monotonic() + timeout
    status = target.status()
    while status == "creating" and time.monotonic() < deadline:
        time.sleep(poll)
        status = target.status()
    return status
