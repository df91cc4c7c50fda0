"""Private servers for fault tests: these may be killed or stalled without touching the shared ones."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Background(threading.Thread):
    """A test's helper thread (a fault it injects once the run is under way) whose failure fails the
    test: ``join`` re-raises it, so a fault that never came says why instead of leaving a puzzle."""

    def __init__(self, target: Callable[[], None]) -> None:
        super().__init__(daemon=True)
        self.target = target
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            self.target()
        except BaseException as exc:  # handed to the test's thread by join
            self.error = exc

    def join(self, timeout: float | None = None) -> None:
        super().join(timeout)
        if self.error is not None:
            raise self.error


def _wait_for_port(port: int, proc: subprocess.Popen[bytes], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server on port {port} exited with {proc.returncode}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)  # polling a port: readiness probe, not synchronisation between our threads
    raise RuntimeError(f"server on port {port} not ready after {timeout} s")


DELAY_SERVER = Path(__file__).resolve().parents[2] / "benchmarks" / "delay_server.py"


@contextlib.contextmanager
def delay_server_at(delay_ms: float) -> Iterator[int]:
    """benchmarks/delay_server.py on a free port of 127.0.0.1 (its port): every GET answered
    ``delay_ms`` after it arrived, so a run's pace is the server's however fast or busy the host."""
    port = free_port()
    proc = subprocess.Popen([sys.executable, str(DELAY_SERVER), str(port), str(delay_ms)])
    try:
        _wait_for_port(port, proc)
        yield port
    finally:
        proc.kill()
        proc.wait()


@pytest.fixture
def private_redis(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[bytes], dict[str, str]]]:
    """A redis-server of this test's own on a free loopback port (debug commands enabled)."""
    binary = shutil.which("redis-server")
    assert binary, "redis-server missing: scripts/local-servers install"
    port = free_port()
    proc = subprocess.Popen(
        [
            binary,
            "--bind",
            "127.0.0.1",
            "--port",
            str(port),
            "--dir",
            str(tmp_path),
            "--save",
            "",
            "--appendonly",
            "no",
            "--enable-debug-command",
            "yes",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        _wait_for_port(port, proc)
        yield proc, {"redis.host": "127.0.0.1", "redis.port": str(port)}
    finally:
        proc.kill()
        proc.wait()


def _pg_bin() -> Path | None:
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/postgres"), key=lambda p: int(p.parts[-3]))
    if found:
        return found[-1].parent
    binary = shutil.which("postgres")
    return Path(binary).parent if binary else None


@pytest.fixture
def private_postgres() -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    """A PostgreSQL server of this test's own (trust auth, loopback, a free port): it may be killed.
    As root it runs as the ``postgres`` user (the server refuses root), started directly so that
    killing the process kills the postmaster."""
    bin_dir = _pg_bin()
    assert bin_dir, "PostgreSQL missing: scripts/local-servers install"
    user = "postgres" if os.geteuid() == 0 else None
    root = Path(tempfile.mkdtemp(prefix="bw-private-pg-"))
    root.chmod(0o755)  # the server's user reaches its data directory and socket through it
    data = root / "data"
    data.mkdir(mode=0o700)
    if user:
        shutil.chown(root, user)
        shutil.chown(data, user)
    quiet: dict[str, Any] = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL, "user": user}
    subprocess.run(
        [str(bin_dir / "initdb"), "-D", str(data), "-U", "bench", "-A", "trust", "-E", "UTF8"],
        check=True,
        **quiet,
    )
    port = free_port()
    settings = ["listen_addresses=127.0.0.1", f"unix_socket_directories={root}", "fsync=off"]
    command = [str(bin_dir / "postgres"), "-D", str(data), "-p", str(port)]
    for setting in settings:
        command += ["-c", setting]
    proc = subprocess.Popen(command, start_new_session=True, **quiet)  # its own group: see kill_group
    try:
        _wait_for_port(port, proc, timeout=30)
        url = f"postgresql://bench@127.0.0.1:{port}/postgres"
        _wait_for_sessions(url, proc)
        yield proc, url
    finally:
        kill_group(proc)
        shutil.rmtree(root, ignore_errors=True)


def _wait_for_sessions(url: str, proc: subprocess.Popen[bytes], timeout: float = 30.0) -> None:
    """The port opens before the server accepts sessions ("the database system is starting up")."""
    import psycopg

    deadline = time.monotonic() + timeout
    while True:
        try:
            psycopg.connect(url, connect_timeout=2).close()
            return
        except psycopg.OperationalError:
            if proc.poll() is not None or time.monotonic() > deadline:
                raise
            time.sleep(0.05)  # polling the server: a readiness probe


def kill_group(proc: subprocess.Popen[bytes]) -> None:
    """SIGKILL a server started in its own session and every process of it (PostgreSQL's backends
    would otherwise go on serving their sessions for a while after the postmaster died)."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


# ------------------------------------------------------------------ a private MariaDB
MARIADBD = shutil.which("mariadbd") or "/usr/sbin/mariadbd"


class PrivateMariaDB:
    """A mariadbd of this test's own on a free loopback port, so it can be killed and restarted."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.port = free_port()
        self.proc: subprocess.Popen[bytes] | None = None
        data = root / "data"
        if os.geteuid() == 0:
            shutil.chown(root, "mysql")
        subprocess.run(
            [
                "mariadb-install-db",
                f"--datadir={data}",
                "--auth-root-authentication-method=normal",
                "--skip-test-db",
                *(["--user=mysql"] if os.geteuid() == 0 else []),
            ],
            check=True,
            capture_output=True,
            timeout=120,
        )
        (root / "my.cnf").write_text(
            "[mariadbd]\n"
            f"datadir = {data}\nport = {self.port}\nbind-address = 127.0.0.1\nsocket = {root}/m.sock\n"
            f"pid-file = {root}/m.pid\nlog-error = {root}/m.log\nskip-grant-tables\nskip-log-bin\n"
            "innodb_buffer_pool_size = 16M\ninnodb_log_file_size = 8M\nperformance_schema = OFF\n"
            + ("user = mysql\n" if os.geteuid() == 0 else "")
        )

    def start(self) -> None:
        self.proc = subprocess.Popen(
            [MARIADBD, f"--defaults-file={self.root}/my.cnf"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        _wait_for_port(self.port, self.proc, timeout=60)

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    @property
    def url(self) -> str:
        return f"mysql://root@127.0.0.1:{self.port}/faults"


@pytest.fixture
def private_mariadb() -> Iterator[PrivateMariaDB]:
    # Not under tmp_path: pytest's base directory is private to root and mariadbd runs as mysql.
    import MySQLdb

    root = Path(tempfile.mkdtemp(prefix="bw-mariadb-"))
    server = PrivateMariaDB(root)
    try:
        server.start()
        conn = MySQLdb.connect(host="127.0.0.1", port=server.port, user="root")
        conn.cursor().execute("CREATE DATABASE faults")
        conn.close()
        yield server
    finally:
        server.kill()
        shutil.rmtree(root, ignore_errors=True)


# ------------------------------------------------------------------ the event loops, both builds
PYTHON_LOOP = "event loop"


def mysql_session(url: str) -> Any:
    """An autocommit MySQLdb session on ``url``'s database, for a test's own set-up and reads (no row
    it touches stays locked for the run under test)."""
    import MySQLdb  # as private_mariadb does: only the MariaDB tests load the client library

    parts = urlsplit(url)
    return MySQLdb.connect(
        host=parts.hostname,
        port=parts.port,
        user=parts.username,
        password=parts.password or "",
        database=parts.path.lstrip("/"),
        autocommit=True,
    )


def loop_build(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch, compiled_model: str) -> str:
    """For a fixture parametrized ["compiled", "python"]: run the test with the compiled hot path
    (the default, built by the package) or with the Python loop alone (BENCHWRIGHT_COMPILED_LOOP=0),
    which also handles everything the compiled part hands back. Returns the loop's model, as the
    result document must name it."""
    monkeypatch.setenv("BENCHWRIGHT_COMPILED_LOOP", "1" if request.param == "compiled" else "0")
    return compiled_model if request.param == "compiled" else PYTHON_LOOP


def ran_on(run: Any, model: str) -> bool:
    """The run's requests were timed by the loop ``model`` names (and only a compiled one says "in C")."""
    method = run.measurement.method
    return model in method and ("in C" in model) == ("in C" in method)


def wait_for_sessions(conn: Any, query_like: str, count: int, but: frozenset[int] = frozenset()) -> set[int]:
    """Until ``count`` other sessions (none of ``but``) of this database have run a statement LIKE
    ``query_like`` (PostgreSQL's pg_stat_activity); their pids (bounded: 60 s)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        pids = {
            pid
            for (pid,) in conn.execute(
                "SELECT pid FROM pg_stat_activity WHERE datname = current_database()"
                " AND pid <> pg_backend_pid() AND query LIKE %s",
                (query_like,),
            ).fetchall()
        } - but
        if len(pids) >= count:
            return pids
        time.sleep(0.02)  # polling the server's view: a readiness probe
    raise AssertionError(f"no {count} sessions running {query_like!r} within 60 s")
