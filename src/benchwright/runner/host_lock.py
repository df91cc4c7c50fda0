"""Two benchmarks measuring on one host at once: each sees the other, and neither number stands.

Two runs measured on one host at the same time share its cores, memory bandwidth and network, and
each reads as valid on its own (the review did exactly this). Every runner's measured phase leaves a
small file in a well-known directory (``BENCHWRIGHT_HOST_LOCK_DIR``, else ``<tmp>/benchwright-
measuring``), holds an exclusive ``flock`` on it while it measures and writes its end time when done.
At the end of its own phase a runner reads the others: one still locked is measuring now; one
unlocked without an end time died (its file's mtime stands for its end); any whose window overlaps
its own, from another run, makes the phase ``concurrent_benchmark``. Both sides see it, whichever
started first, and a phase that began and ended inside the other's is found too. Runners of one run
(fan-out) are one benchmark and never flag each other.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import tempfile
import time
import uuid
from pathlib import Path
from typing import IO, Any

from benchwright.results import ResultDocument

LOCK_DIR_ENV = "BENCHWRIGHT_HOST_LOCK_DIR"
STALE_S = 24 * 3600.0  # finished phases older than this are removed by the next runner


def lock_dir() -> Path:
    return Path(os.environ.get(LOCK_DIR_ENV) or Path(tempfile.gettempdir()) / "benchwright-measuring")


class MeasuringLock:
    """One runner's measured phase on this host (``start`` ... ``finish``)."""

    def __init__(self, run_id: str, cell_id: str, phase: str, directory: Path | None = None) -> None:
        self.entry: dict[str, Any] = {"run_id": run_id, "cell": cell_id, "phase": phase, "pid": os.getpid()}
        self.directory = directory or lock_dir()
        self.path = self.directory / f"{os.getpid()}-{uuid.uuid4().hex[:12]}.json"
        self.file: IO[str] | None = None
        self.problem: str | None = None

    def start(self) -> MeasuringLock:
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            with contextlib.suppress(OSError):  # a shared /tmp directory: every user's runners meet there
                self.directory.chmod(0o1777)
            self.file = open(self.path, "w+", encoding="utf-8")  # noqa: SIM115  # held until finish()
            fcntl.flock(self.file, fcntl.LOCK_EX)
            self.entry.update(start=time.time(), end=None)
            self._write()
        except OSError as exc:
            self.problem = f"{self.directory}: {exc.strerror or exc}"
            self.file = None
        return self

    def _write(self) -> None:
        assert self.file is not None
        self.file.seek(0)
        self.file.truncate()
        self.file.write(json.dumps(self.entry))
        self.file.flush()

    def finish(self) -> list[dict[str, Any]]:
        """Every other run's phase that overlapped this one; this phase is then written as ended."""
        if self.file is None:
            return []
        now = time.time()
        overlaps = [e for e in self._others(now) if e["start"] <= now and e["end"] >= self.entry["start"]]
        with contextlib.suppress(OSError):
            self.entry["end"] = now
            self._write()
        with contextlib.suppress(OSError):
            fcntl.flock(self.file, fcntl.LOCK_UN)
            self.file.close()
        self.file = None
        return overlaps

    def _others(self, now: float) -> list[dict[str, Any]]:
        found = []
        for path in sorted(self.directory.glob("*.json")):
            if path == self.path:
                continue
            entry = _read(path)
            if entry is None or entry.get("run_id") == self.entry["run_id"]:
                continue
            if entry.get("end") is None:  # measuring now, or died without saying so
                entry["end"] = now if _held(path) else path.stat().st_mtime
            if now - float(entry["end"]) > STALE_S:
                with contextlib.suppress(OSError):
                    path.unlink()
                continue
            found.append(entry)
        return found


def _read(path: Path) -> dict[str, Any] | None:
    try:
        entry = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):  # being rewritten this instant, or not ours
        return None
    if not isinstance(entry, dict) or not isinstance(entry.get("start"), (int, float)):
        return None
    return entry


def _held(path: Path) -> bool:
    """Is another process holding the file's lock (measuring now)?"""
    try:
        with open(path, encoding="utf-8") as probe:
            try:
                fcntl.flock(probe, fcntl.LOCK_SH | fcntl.LOCK_NB)
            except BlockingIOError:
                return True
            fcntl.flock(probe, fcntl.LOCK_UN)
    except OSError:
        return False
    return False


def flag_concurrent(doc: ResultDocument, lock: MeasuringLock, overlaps: list[dict[str, Any]]) -> None:
    """The phase's flag: ``concurrent_benchmark`` (invalid) naming the others, or, when the host could
    not be checked, ``host_unchecked`` (info) saying why."""
    if lock.problem:
        doc.flag("host_unchecked", "info", f"other benchmarks on this host were not checked ({lock.problem})")
    if not overlaps:
        return
    others = "; ".join(
        f"run {e.get('run_id')} cell {e.get('cell')} ({e.get('phase')}, pid {e.get('pid')})"
        for e in overlaps[:3]
    )
    more = f" and {len(overlaps) - 3} more" if len(overlaps) > 3 else ""
    doc.flag(
        "concurrent_benchmark",
        "invalid",
        f"another benchmark measured on this host at the same time: {others}{more}; the two shared its "
        "cores, memory and network, so neither number stands alone",
    )
