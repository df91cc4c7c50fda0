"""Amazon Timestream for LiveAnalytics sink: multi-measure records, 100 per WriteRecords call.

Idempotent by run id: every record carries the same ``Version``, so writing a run again is accepted
as an upsert of identical data, and a rejection that only says "already there with this version" is
counted as written. Closed to new AWS accounts since 2025-06-20: InfluxDB is the other sink.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from benchwright.errors import IngestFailed, RetryableIngestError
from benchwright.providers.aws.common import Clients, aws_call, error_code
from benchwright.providers.aws.points import Row, rows
from benchwright.runs import RunRecord

BATCH = 100
RECORD_VERSION = 1


def to_record(row: Row) -> dict[str, Any]:
    return {
        "Dimensions": [
            {"Name": k, "Value": v or "-", "DimensionValueType": "VARCHAR"} for k, v in row.tags.items()
        ],
        "MeasureName": row.measurement,
        "MeasureValueType": "MULTI",
        "MeasureValues": [
            {
                "Name": k,
                "Value": repr(float(v)) if isinstance(v, float) else str(v),
                "Type": "DOUBLE" if isinstance(v, float) else "BIGINT",
            }
            for k, v in row.fields.items()
        ],
        "Time": str(int(row.time.timestamp() * 1000)),
        "TimeUnit": "MILLISECONDS",
        "Version": RECORD_VERSION,
    }


def batches(items: Iterable[dict[str, Any]], size: int = BATCH) -> Iterator[list[dict[str, Any]]]:
    batch: list[dict[str, Any]] = []
    for item in items:
        batch.append(item)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


class TimestreamSink:
    def __init__(self, clients: Clients, database: str, table: str) -> None:
        self.clients = clients
        self.database = database
        self.table = table

    def write(self, record: RunRecord) -> int:
        """Write every row of ``record``; returns how many records were sent."""
        client = self.clients("timestream-write")
        sent = 0
        for batch in batches(to_record(r) for r in rows(record)):
            self._write_batch(client, batch)
            sent += len(batch)
        return sent

    def _write_batch(self, client: Any, batch: list[dict[str, Any]]) -> None:
        from botocore.exceptions import ClientError

        try:
            aws_call(
                "timestream write_records",
                client.write_records,
                DatabaseName=self.database,
                TableName=self.table,
                Records=batch,
                retryable=RetryableIngestError,
                fatal=IngestFailed,
            )
        except IngestFailed as exc:
            cause = exc.__cause__
            if not (isinstance(cause, ClientError) and error_code(cause) == "RejectedRecordsException"):
                raise
            rejected = cause.response.get("RejectedRecords", [])
            real = [r for r in rejected if not _is_duplicate(r)]
            if real or not rejected:
                reasons = "; ".join(f"#{r.get('RecordIndex')}: {r.get('Reason')}" for r in real[:5])
                raise IngestFailed(
                    f"timestream {self.database}.{self.table}: {len(real)} records rejected: "
                    f"{reasons or cause}"
                ) from cause


def _is_duplicate(rejected: dict[str, Any]) -> bool:
    """Rejected only because the very same record (same version) is already stored."""
    existing = rejected.get("ExistingVersion")
    return existing is not None and int(existing) >= RECORD_VERSION
