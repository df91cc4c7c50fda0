"""A result store that never loses a measured run because the store cannot be written.

Disk full, a damaged or read-only SQLite file: every ``save_run`` that fails keeps the record in
memory (so later stages and the final status see every measured cell, never "failed with 0 cells")
and in ``OUT/run.json``, and leaves one warning naming the store, the error and where the run is.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchwright.providers.base import ResultStore
from benchwright.runs import RunRecord


class FallbackStore(ResultStore):
    def __init__(self, inner: ResultStore, out_dir: Path, warn: Callable[[str], None]) -> None:
        self.inner = inner
        self.out_dir = Path(out_dir)
        self.warn = warn
        self._latest: dict[str, RunRecord] = {}  # the newest record saved for each run, written or not
        self._warned = False

    @property
    def path(self) -> Any:
        return getattr(self.inner, "path", None)

    def save_run(self, record: RunRecord) -> None:
        self._latest[record.run_id] = record.model_copy(deep=True)
        try:
            self.inner.save_run(record)
            return
        except Exception as exc:
            problem = f"{type(exc).__name__}: {exc}"
        fallback = self.out_dir / "run.json"
        try:
            fallback.write_text(record.model_dump_json(indent=1))
            where = f"the run is kept in {fallback} (`benchwright show {fallback}` reads it)"
        except OSError as exc:
            where = (
                f"{fallback} could not be written either ({exc.strerror}); the summary below is all there is"
            )
        if not self._warned:
            self._warned = True
            self.warn(f"the result store {self.path or ''} could not be written ({problem}); {where}")

    def get_run(self, run_id: str) -> RunRecord | None:
        if run_id in self._latest:
            return self._latest[run_id].model_copy(deep=True)
        try:
            return self.inner.get_run(run_id)
        except Exception:
            return None

    def history(self, spec_name: str, limit: int = 20) -> list[RunRecord]:
        try:
            return self.inner.history(spec_name, limit)
        except Exception:
            return []
