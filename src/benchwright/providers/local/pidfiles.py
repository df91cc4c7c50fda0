"""Pid files of this tool's own local processes, so a killed `benchwright run` leaves nothing behind.

``benchwright run`` records itself, every server it starts and every runner it launches under
``live/<run-id>/`` in the state directory ($BENCHWRIGHT_STATE_DIR, else $XDG_STATE_HOME/benchwright,
else ~/.local/state/benchwright). A normal end, Ctrl-C, SIGTERM or SIGHUP removes them. After a
SIGKILL they stay; the next `benchwright` command (or `benchwright cleanup`) sees that the recorded
orchestrator is gone, stops the servers and runners recorded there (only if the pid still belongs to
the same process: its start time must match), removes their data directories and marks the run
``aborted`` in its store. Nothing that is not in these files is ever signalled.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

STATE_ENV = "BENCHWRIGHT_STATE_DIR"


def live_dir() -> Path:
    if os.environ.get(STATE_ENV):
        return Path(os.environ[STATE_ENV]) / "live"
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "benchwright" / "live"


def _started(pid: int) -> float | None:
    import psutil

    try:
        return float(psutil.Process(pid).create_time())
    except psutil.Error:
        return None


def _write(path: Path, data: dict[str, Any]) -> None:
    with contextlib.suppress(OSError):  # bookkeeping never fails a run
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(data))
        tmp.replace(path)


def _safe(run_id: str) -> str:
    from benchwright.specguard import path_component

    return path_component(run_id or "no-run")


# Runs this process orchestrates. Servers and runners are recorded only for these: a target created
# elsewhere (a workflow stage in a short-lived process, a test fixture) is owned by whoever created
# it and must never be reaped because its creator exited.
_OWN_RUNS: set[str] = set()


def register_run(run_id: str, store: str | None, out_dir: str | None) -> None:
    _OWN_RUNS.add(run_id)
    pid = os.getpid()
    data = {"pid": pid, "started": _started(pid), "store": store, "out_dir": out_dir, "run_id": run_id}
    _write(live_dir() / _safe(run_id) / "orchestrator.json", data)


def unregister_run(run_id: str) -> None:
    _OWN_RUNS.discard(run_id)
    shutil.rmtree(live_dir() / _safe(run_id), ignore_errors=True)


def register_process(run_id: str, kind: str, pid: int, directory: str | None = None) -> None:
    """A server (kind "server", its data ``directory``) or a runner (kind "runner", a session leader)."""
    if run_id not in _OWN_RUNS:
        return
    owner = os.getpid()
    data = {
        "kind": kind,
        "pid": pid,
        "started": _started(pid),
        "dir": directory,
        "owner": owner,
        "owner_started": _started(owner),
    }
    _write(live_dir() / _safe(run_id) / f"{kind}-{pid}.json", data)


def unregister_process(run_id: str, kind: str, pid: int) -> None:
    with contextlib.suppress(OSError):
        (live_dir() / _safe(run_id) / f"{kind}-{pid}.json").unlink()


def _read(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _alive(pid: Any, started: Any) -> bool:
    if not isinstance(pid, int) or pid <= 0:
        return False
    now = _started(pid)
    return now is not None and started is not None and abs(now - float(started)) < 0.5


def _stop(entry: dict[str, Any]) -> bool:
    """Stop one recorded process (and its children / its session's group). True if it was running."""
    import psutil

    pid, started = entry.get("pid"), entry.get("started")
    if not _alive(pid, started):
        return False
    assert isinstance(pid, int)
    try:
        proc = psutil.Process(pid)
        family = [proc, *proc.children(recursive=True)]
    except psutil.Error:
        return False
    if entry.get("kind") == "runner":
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, signal.SIGKILL)  # the runner leads its own session: its workers go with it
    for p in family:
        with contextlib.suppress(psutil.Error):
            p.terminate()
    _, left = psutil.wait_procs(family, timeout=10)
    for p in left:
        with contextlib.suppress(psutil.Error):
            p.kill()
    psutil.wait_procs(left, timeout=5)
    return True


def _mark_aborted(orchestrator: dict[str, Any], reason: str) -> str | None:
    store_path, run_id = orchestrator.get("store"), orchestrator.get("run_id")
    if not store_path or not run_id:
        return None
    from benchwright.providers.local.sqlite_store import SQLiteResultStore

    try:
        store = SQLiteResultStore(store_path)
        record = store.get_run(str(run_id))
        if record is None or record.status != "running":
            return None
        record.status = "aborted"
        record.error = reason
        record.ended_at = datetime.now(UTC)
        store.save_run(record)
        out_dir = orchestrator.get("out_dir")
        if out_dir and Path(out_dir).is_dir():
            (Path(out_dir) / "run.json").write_text(record.model_dump_json(indent=1))
    except Exception as exc:  # a broken store is reported, the cleanup goes on
        return f"could not mark run {run_id} aborted in {store_path}: {type(exc).__name__}: {exc}"
    return f"run {run_id} marked aborted in {store_path}"


def reap_orphans(say: Callable[[str], None] = lambda _: None) -> int:
    """Stop what killed runs left behind; returns how many runs were cleaned."""
    root = live_dir()
    try:
        runs = [d for d in root.iterdir() if d.is_dir()]
    except OSError:
        return 0
    cleaned = 0
    for run_dir in runs:
        orchestrator = _read(run_dir / "orchestrator.json")
        if orchestrator is None or _alive(orchestrator.get("pid"), orchestrator.get("started")):
            continue  # still running (or being written): not ours to touch
        entries = [e for e in (_read(p) for p in run_dir.glob("*-*.json")) if e and e.get("kind")]
        stopped = []
        for entry in entries:
            if _stop(entry):
                stopped.append(f"{entry['kind']} pid {entry['pid']}")
            directory = entry.get("dir")
            if directory and Path(directory).name.startswith("benchwright-"):
                shutil.rmtree(directory, ignore_errors=True)
        run_id = orchestrator.get("run_id") or run_dir.name
        note = _mark_aborted(orchestrator, "benchwright was killed during the run; cleaned up afterwards")
        say(
            f"cleanup: run {run_id} had ended without cleaning up: "
            + (f"stopped {', '.join(stopped)}" if stopped else "nothing was still running")
            + (f"; {note}" if note else "")
        )
        shutil.rmtree(run_dir, ignore_errors=True)
        cleaned += 1
    return cleaned
