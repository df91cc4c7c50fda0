"""Artifacts that never cost a measured cell because the output directory cannot be written.

A full ``--out`` (the review filled it mid-run: 808,000 measured operations were lost and the run
stored as failed with 0 cells, although the store had room). The stages read each cell's documents
back from the artifacts before storing it, so a JSON file that cannot be written is kept in memory
under the pointer it would have had: the cell is judged and stored as if it had been written, and
``lost`` names every file that is not on disk, so the command can say so and exit non-zero.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from benchwright.providers.base import ArtifactStore
from benchwright.runs import RunRecord


class FallbackArtifacts(ArtifactStore):
    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.per_run = getattr(inner, "per_run", False)
        self.lost: dict[str, str] = {}  # each file the run meant to write and could not: why
        self._kept: dict[str, Any] = {}

    def put_json(self, key: str, data: Any) -> str:
        try:
            pointer = str(self.inner.put_json(key, data))
        except OSError as exc:
            pointer = str(self.inner.root / key) if hasattr(self.inner, "root") else key
            self._kept[pointer] = data
            self._lose(pointer, exc)
            return pointer
        self._kept.pop(pointer, None)
        return pointer

    def get_json(self, pointer: str) -> Any:
        if pointer in self._kept:
            return self._kept[pointer]
        return self.inner.get_json(pointer)

    def put_report(self, run_id: str, html: str) -> str:
        try:
            return str(self.inner.put_report(run_id, html))
        except OSError as exc:
            self._lose("report.html", exc)
            raise

    def lose(self, what: str, reason: str) -> None:
        """A file (run.json, a runner's output, a cell's documents) that is not where it belongs."""
        self.lost.setdefault(what, reason)

    def summary(self) -> str | None:
        """One warning naming what the output directory is missing, or None."""
        if not self.lost:
            return None
        reasons = "; ".join(dict.fromkeys(self.lost.values()))
        shown = ", ".join(list(self.lost)[:5]) + (
            f" and {len(self.lost) - 5} more" if len(self.lost) > 5 else ""
        )
        return (
            f"{len(self.lost)} file(s) not written ({reasons}): {shown}; every measured cell is in the store"
        )

    def _lose(self, what: str, exc: OSError) -> None:
        self.lose(what, exc.strerror or str(exc))

    def share(self, pointer: str, expires_s: int) -> str:
        return str(self.inner.share(pointer, expires_s))


def write_run_files(record: RunRecord, out_dir: Path, launcher: Any, artifacts: FallbackArtifacts) -> None:
    """``run.json`` (by rename: never a 0-byte file), then what a full ``out_dir`` cost: each runner
    output that lives only in the spill next to the store (kept there, named), else the spill goes."""
    path = out_dir / "run.json"
    tmp = path.with_suffix(".json.tmp")
    try:
        tmp.write_text(record.model_dump_json(indent=1))
        tmp.replace(path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        artifacts.lose(str(path), exc.strerror or str(exc))
    spill_root = getattr(launcher, "spill_root", None)
    spilled = sorted(getattr(launcher, "spilled", ()))
    for pointer in spilled:
        artifacts.lose(pointer, f"its disk was full; the runner's output is in {spill_root}")
    if spill_root is not None and not spilled:
        shutil.rmtree(spill_root / record.run_id, ignore_errors=True)
