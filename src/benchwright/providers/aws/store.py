"""The AWS ResultStore: the RunRecord in S3 first (the source of truth), then the time-series sink.

The sink never fails a run: a refusal (or any error of the sink) becomes a ``sink_failed`` warning
on the record, written to S3 again; the run keeps its status and goes on to be priced. A failing S3
write still raises ``RetryableIngestError`` / ``IngestFailed`` (the workflow retries the idempotent
save). A later save whose sink write succeeds removes the warning.
Layout: ``runs/<run id>/record.json`` and an index key per spec, ``history/<spec>/<started>_<run id>``
(none for a suite's cell record: the suite's record is the run history and verdicts compare with),
plus ``suites/<suite>/<started>_<run id>`` for a run of a multi-benchmark suite (tag ``suite``), so
`benchwright pull --spec SUITE` finds every benchmark's runs.
These records are the history on AWS: the finish stage reads them for the verdict and the trend chart.
"""

from __future__ import annotations

import logging
import time
from datetime import UTC, datetime
from typing import Protocol

from benchwright.errors import RetryableIngestError
from benchwright.providers.aws.s3 import S3Artifacts
from benchwright.providers.base import ResultStore
from benchwright.results import redact_text
from benchwright.runs import RunRecord, RunWarning

SINK_FAILED = "sink_failed"
SINK_RETRY_DELAYS_S = (1.0, 3.0)  # then the refusal is a warning: StoreResults stays well inside a minute
log = logging.getLogger(__name__)


class Sink(Protocol):
    def write(self, record: RunRecord) -> int: ...


def record_key(run_id: str) -> str:
    return f"runs/{run_id}/record.json"


def index_key(prefix: str, name: str, record: RunRecord) -> str:
    """``<prefix>/<name>/<started>_<run id>``: listing a prefix gives run ids in start order."""
    return f"{prefix}/{name}/{record.started_at.strftime('%Y%m%dT%H%M%S')}_{record.run_id}"


def index_run_id(key: str) -> str:
    return key.rsplit("/", 1)[-1].split("_", 1)[1]


class S3ResultStore(ResultStore):
    def __init__(self, artifacts: S3Artifacts, sink: Sink | None = None) -> None:
        self.artifacts = artifacts
        self.sink = sink
        self.last_written = 0
        self.sink_retry_delays_s: tuple[float, ...] = SINK_RETRY_DELAYS_S

    def save_run(self, record: RunRecord) -> None:
        self._put(record)
        if record.suite_run_id is None:  # a suite's cell is history only as part of its suite's record
            pointer = {"run_id": record.run_id}
            self.artifacts.put_json(index_key("history", record.spec_name, record), pointer)
            suite = record.tags.get("suite")
            if suite:
                self.artifacts.put_json(index_key("suites", suite, record), pointer)
        if self.sink is not None and record.cells:
            self._ingest(record, self.sink)

    def _put(self, record: RunRecord) -> None:
        self.artifacts.put_json(record_key(record.run_id), record.model_dump_json())

    def _ingest(self, record: RunRecord, sink: Sink) -> None:
        """Write the sink; its failure is a warning on the record, never the run's failure."""
        others = [w for w in record.warnings if w.code != SINK_FAILED]
        try:
            self.last_written = self._write_sink(record, sink)
        except Exception as exc:  # any sink error: the S3 record is already written and is the truth
            self.last_written = 0
            reason = redact_text(f"{type(exc).__name__}: {exc}")[:1000]
            log.warning("time-series sink refused run %s: %s", record.run_id, reason)
            record.warnings = [*others, RunWarning(code=SINK_FAILED, message=reason, at=datetime.now(UTC))]
            self._put(record)
            return
        if len(others) != len(record.warnings):  # an earlier refusal, now written
            record.warnings = others
            self._put(record)

    def _write_sink(self, record: RunRecord, sink: Sink) -> int:
        """A transient refusal (throttling) is tried again, a bounded number of times."""
        for delay in self.sink_retry_delays_s:
            try:
                return sink.write(record)
            except RetryableIngestError as exc:
                log.info("time-series sink busy (%s); again in %.1f s", exc, delay)
                time.sleep(delay)
        return sink.write(record)

    def get_run(self, run_id: str) -> RunRecord | None:
        pointer = self.artifacts.uri(record_key(run_id))
        if not self.artifacts.exists(pointer):
            return None
        return RunRecord.model_validate_json(self.artifacts.get_bytes(pointer))

    def history_ids(self, spec_name: str, limit: int = 20) -> list[str]:
        """Run ids of ``spec_name``, newest first, from the index keys alone (no record is read)."""
        keys = sorted(self.artifacts.keys(f"history/{spec_name}/"), reverse=True)
        return [index_run_id(key) for key in keys[:limit]]

    def history(self, spec_name: str, limit: int = 20) -> list[RunRecord]:
        out: list[RunRecord] = []
        for run_id in self.history_ids(spec_name, limit):
            run = self.get_run(run_id)
            if run is not None:
                out.append(run)
        return out
