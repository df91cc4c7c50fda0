"""scripts/local-servers acts only on the servers of its own checkout: a server another checkout
started on the same port is used but reported as not ours, and `stop` leaves it running.

Runs a Redis of its own (own data directory, own free ports): the shared test servers on
15432/13306/16379 are never touched."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "local-servers"
pytestmark = pytest.mark.skipif(shutil.which("redis-server") is None, reason="redis-server not installed")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def servers(cmd: list[str], servers_dir: Path, ports: dict[str, str]) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "BENCHWRIGHT_SERVERS_DIR": str(servers_dir), **ports}
    return subprocess.run([str(SCRIPT), *cmd], capture_output=True, text=True, timeout=60, env=env)


def test_status_and_stop_leave_another_checkouts_server_alone(tmp_path: Path) -> None:
    ports = {"BENCHWRIGHT_REDIS_PORT": str(free_port()), "BENCHWRIGHT_PG_PORT": str(free_port()),
             "BENCHWRIGHT_MYSQL_PORT": str(free_port())}  # fmt: skip
    mine, other = tmp_path / "mine", tmp_path / "other"
    started = servers(["start", "redis"], other, ports)
    pid_file = other / "redis" / "redis.pid"
    assert pid_file.exists(), started.stderr
    pid = int(pid_file.read_text().split()[0])
    try:
        status = servers(["status"], mine, ports).stdout
        assert (
            f"redis    up   127.0.0.1:{ports['BENCHWRIGHT_REDIS_PORT']} (not started by this checkout"
            in status
        )
        servers(["stop", "redis"], mine, ports)
        os.kill(pid, 0)  # still alive: not ours to stop
        assert "not started by this checkout" not in servers(["status"], other, ports).stdout
    finally:
        servers(["stop", "redis"], other, ports)
    with pytest.raises(ProcessLookupError):  # stop waits for its own server to exit
        os.kill(pid, 0)
