"""Pid files for every local server this checkout starts, and the sweep that stops those whose
creator died without stopping them.

``pidfiles`` covers the servers of a ``benchwright run``; a server created anywhere else (a test
fixture, a script) belongs to the process that created it and was not recorded, so a pytest killed
by a timeout left its throwaway servers running (six ``/tmp/benchwright-redis-*`` servers were
found so at the end of one session). Here every ``LocalServer`` is recorded, whoever creates it, in
a directory of its own per checkout (``<tmp>/benchwright-servers-<digest of this package's path>``),
with its creator's pid and start time. ``sweep`` stops a recorded server only when its creator has
exited, the server's pid still belongs to the process that was started (same start time) and the
record was written by this checkout: another checkout's servers, and those of a creator still
running, are never touched.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchwright.providers.local.pidfiles import _alive, _read, _started, _stop


def records_dir() -> Path:
    package = str(Path(__file__).resolve().parents[2])
    digest = hashlib.sha256(package.encode()).hexdigest()[:12]
    return Path(tempfile.gettempdir()) / f"benchwright-servers-{digest}"


def record(pid: int, directory: str) -> None:
    """A server was started: note it with its creator (this process)."""
    owner = os.getpid()
    data = {
        "kind": "server",
        "pid": pid,
        "started": _started(pid),
        "dir": directory,
        "owner": owner,
        "owner_started": _started(owner),
    }
    with contextlib.suppress(OSError):  # bookkeeping never fails a server start
        folder = records_dir()
        folder.mkdir(mode=0o700, exist_ok=True)
        tmp = folder / f".server-{pid}.tmp"
        tmp.write_text(json.dumps(data))
        tmp.replace(folder / f"server-{pid}.json")


def forget(pid: int) -> None:
    """The server was stopped by its creator."""
    with contextlib.suppress(OSError):
        (records_dir() / f"server-{pid}.json").unlink()


def sweep(say: Callable[[str], None] = lambda _: None) -> list[int]:
    """Stop the recorded servers whose creator has exited; returns their pids."""
    try:
        paths = sorted(records_dir().glob("server-*.json"))
    except OSError:
        return []
    stopped = []
    for path in paths:
        entry: dict[str, Any] | None = _read(path)
        if entry is None:
            continue
        if _alive(entry.get("owner"), entry.get("owner_started")):
            continue  # its creator still runs: it stops it
        if _stop(entry):
            stopped.append(int(entry["pid"]))
            say(
                f"cleanup: stopped local server pid {entry['pid']} ({entry.get('dir')}); its creator had exited"
            )
        directory = entry.get("dir")
        if directory and Path(directory).name.startswith("benchwright-"):
            shutil.rmtree(directory, ignore_errors=True)
        with contextlib.suppress(OSError):
            path.unlink()
    return stopped
