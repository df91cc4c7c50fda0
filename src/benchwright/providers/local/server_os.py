"""The operating-system side of a throwaway local server: a free port, the OS user it runs as, a
directory that user can reach, its log's last lines, and stopping or killing its process tree.

``PROCESSES`` keeps the Popen of every server this process started, so their exits are reaped and
``owned`` checks can tell our servers from another checkout's.
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import re
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import psutil

from benchwright.errors import ProvisioningFailed

PROCESSES: dict[int, subprocess.Popen[bytes]] = {}  # pid -> Popen, so exits are reaped
USER = "bench"  # the role/user every throwaway server creates for the benchmark
DATABASE = "bench"  # and the database it owns


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def port_in_use(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return True
    return False


def server_user(name: str) -> str | None:
    """The OS user to run a server as: its own account when we are root, else ourselves."""
    if os.geteuid() != 0:
        return None
    try:
        pwd.getpwnam(name)
    except KeyError:
        return None
    return name


def chown(path: Path, user: str | None) -> None:
    if user is None:
        return
    entry = pwd.getpwnam(user)
    for p in [path, *path.rglob("*")]:
        os.chown(p, entry.pw_uid, entry.pw_gid)


def log_tail(path: Path, lines: int = 5) -> str:
    try:
        text = path.read_text(errors="replace").strip().splitlines()
    except OSError:
        return ""
    stamp = re.compile(
        r"^\d{4}-\d\d-\d\d[ T][\d:.]+( [A-Z]{2,5})? (\[\d+\] )?"
    )  # postgres / mariadb prefixes
    return " | ".join(stamp.sub("", line.strip()) for line in text[-lines:])


def _traversable_by_others(path: Path) -> bool:
    """Every directory on the way has o+x: a server running as its own user can reach inside."""
    for d in [path, *path.parents]:
        try:
            if not d.stat().st_mode & 0o001:
                return False
        except OSError:
            return False
    return True


def parent_dir(user: str | None) -> str | None:
    """Where server directories go: $TMPDIR, unless the server's own user could not reach it there
    (a private $TMPDIR such as /root/tmp); then /tmp. None: tempfile's default."""
    default = Path(tempfile.gettempdir())
    if user is None or _traversable_by_others(default):
        return None
    for candidate in (Path("/tmp"), Path("/var/tmp")):
        if candidate.is_dir() and _traversable_by_others(candidate):
            return str(candidate)
    raise ProvisioningFailed(
        f"{default}: the {user} user cannot reach the temporary directory; set TMPDIR to one it can (o+x)"
    )


def tool_errors(output: str, limit: int = 1500) -> str:
    """A failed tool's output for the error message: its error lines first (a 'Permission denied'
    early in the output must not be cut away), then its last lines, bounded."""
    lines = [line.strip() for line in output.strip().splitlines() if line.strip()]
    words = ("error", "denied", "fatal", "cannot", "can't", "failed", "not permitted")
    important = [line for line in lines if any(w in line.lower() for w in words)]
    chosen = list(dict.fromkeys([*important, *lines[-3:]]))
    text = " | ".join(chosen)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _owned_tree(pid: int, owned: Any) -> list[psutil.Process]:
    """The process and its children, or nothing when it is gone or not ours (``owned`` says)."""
    try:
        root = psutil.Process(pid)
    except psutil.NoSuchProcess:
        return []
    if not owned(root):
        return []
    try:
        return [root, *root.children(recursive=True)]
    except psutil.Error:
        return [root]


def stop_process_tree(pid: int, owned: Any, timeout: float = 20.0) -> None:
    """SIGTERM the process and its children, wait, then SIGKILL what is left."""
    procs = _owned_tree(pid, owned)
    if not procs:
        return
    for p in procs:
        with contextlib.suppress(psutil.Error):
            p.send_signal(signal.SIGTERM)
    popen = PROCESSES.get(pid)
    if popen is not None:
        with contextlib.suppress(subprocess.TimeoutExpired):
            popen.wait(timeout)
    _, alive = psutil.wait_procs(procs, timeout=timeout if popen is None else 2)
    for p in alive:
        with contextlib.suppress(psutil.Error):
            p.kill()
    psutil.wait_procs(alive, timeout=5)
    if popen is not None:
        with contextlib.suppress(subprocess.TimeoutExpired):
            popen.wait(5)


def kill_process_tree(pid: int, owned: Any, timeout: float = 10.0) -> None:
    """SIGKILL the process and its children at once (a crash) and wait until none is left running.
    A killed child whose parent died first stays a zombie until something reaps it: that counts as
    gone, since it holds no port, memory or file any more."""
    procs = _owned_tree(pid, owned)
    if not procs:
        return
    for p in procs:
        with contextlib.suppress(psutil.Error):
            p.kill()
    popen = PROCESSES.get(pid)
    if popen is not None:
        with contextlib.suppress(subprocess.TimeoutExpired):
            popen.wait(timeout)
    deadline = time.monotonic() + timeout
    while any(_running(p) for p in procs) and time.monotonic() < deadline:
        time.sleep(0.01)  # the kernel tears the killed processes down: poll, bounded


def _running(proc: psutil.Process) -> bool:
    try:
        return proc.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def pg_bin() -> Path:
    """The newest installed PostgreSQL's bin directory (Debian's layout)."""
    found = sorted(
        glob.glob("/usr/lib/postgresql/*/bin"), key=lambda p: [int(x) for x in p.split("/")[4].split(".")]
    )
    if not found:
        raise ProvisioningFailed("postgres: PostgreSQL binaries not found (scripts/local-servers install)")
    return Path(found[-1])
