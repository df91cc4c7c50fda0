"""The run's HTML report in the results bucket, next to its record: ``runs/<run id>/report.html``.

``ReportingStore`` wraps the S3 store so that every save of a run record (StoreResults, PriceRun,
Teardown's final status, SummarizeSuite) re-renders the report first and writes the record once, with
``record.report`` already pointing at it; the API presigns that pointer. Rendering is the same
benchwright.report.html the local orchestrator uses. A report that fails to render becomes a plain
page and never fails the save: the record is the source of truth, the report only a view of it.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from html import escape

from benchwright.errors import IngestFailed, RetryableIngestError
from benchwright.providers.aws.common import aws_call
from benchwright.providers.aws.s3 import S3Artifacts
from benchwright.providers.base import ResultStore
from benchwright.runs import RunRecord

log = logging.getLogger(__name__)

REPORT_KEY = "runs/{run_id}/report.html"
HISTORY_LIMIT = 10  # earlier runs drawn in the trend chart (each is a whole record read from S3)


def report_key(run_id: str) -> str:
    return REPORT_KEY.format(run_id=run_id)


def render(record: RunRecord, history: Sequence[RunRecord] = ()) -> str:
    """The report's HTML, or a plain page naming the failure (the run must not be lost to a chart)."""
    from benchwright.report.html import render_html

    try:
        return render_html(record, [h for h in history if h.run_id != record.run_id])
    except Exception as exc:
        log.warning("report rendering failed, writing a plain page", exc_info=True)
        return (
            f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{escape(record.run_id)}'
            f"</title></head><body><h1>{escape(record.spec_name)}</h1><p>run <code>"
            f"{escape(record.run_id)}</code>: {escape(record.status)}</p><p>report generation failed: "
            f"{escape(type(exc).__name__)}; the run record next to this page has every result.</p>"
            "</body></html>"
        )


def publish(artifacts: S3Artifacts, record: RunRecord, history: Sequence[RunRecord] = ()) -> str:
    """Render and upload the report; returns its s3:// pointer."""
    key = report_key(record.run_id)
    aws_call(
        f"s3 put {artifacts.uri(key)}",
        artifacts.clients("s3").put_object,
        Bucket=artifacts.bucket,
        Key=key,
        Body=render(record, history).encode("utf-8"),
        ContentType="text/html; charset=utf-8",
        retryable=RetryableIngestError,
        fatal=IngestFailed,
    )
    return artifacts.uri(key)


def slim(record: RunRecord) -> RunRecord:
    """The record without intervals, metric series and histograms (what the trend chart never reads)."""
    for cell in record.cells:
        cell.metrics = []
        for doc in cell.phases.values():
            doc.intervals = []
            doc.metrics = []
            for summary in doc.operations.values():
                summary.histogram = None
                summary.service_time_histogram = None
    return record


class ReportingStore(ResultStore):
    """A ResultStore that keeps ``runs/<run id>/report.html`` in step with every saved record."""

    def __init__(
        self, inner: ResultStore, artifacts: S3Artifacts, history_limit: int = HISTORY_LIMIT
    ) -> None:
        self.inner = inner
        self.artifacts = artifacts
        self.history_limit = history_limit

    def save_run(self, record: RunRecord) -> None:
        history: list[RunRecord] = []
        try:
            history = self.slim_history(record)
        except Exception:  # no trend chart is better than no report
            log.warning("history unavailable for the report", exc_info=True)
        record.report = publish(self.artifacts, record, history)
        self.inner.save_run(record)

    def slim_history(self, record: RunRecord) -> list[RunRecord]:
        """Earlier runs for the trend chart, read one at a time and stripped to their headline figures:
        a one-hour run's record holds thousands of intervals, and the Lambda has 256-512 MB."""
        ids = getattr(self.inner, "history_ids", None)
        if ids is None:
            return [slim(r) for r in self.inner.history(record.spec_name, limit=self.history_limit + 1)]
        out: list[RunRecord] = []
        for run_id in ids(record.spec_name, self.history_limit + 1):
            if run_id == record.run_id:
                continue
            run = self.inner.get_run(run_id)
            if run is not None:
                out.append(slim(run))
        return out[: self.history_limit]

    def get_run(self, run_id: str) -> RunRecord | None:
        return self.inner.get_run(run_id)

    def history(self, spec_name: str, limit: int = 20) -> list[RunRecord]:
        return self.inner.history(spec_name, limit)
