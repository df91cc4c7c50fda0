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


def history_sql(database: str, table: str, spec_name: str, limit: int = 20, days: int = 90) -> str:
    """Per run and cell of one spec: the measured phase's mean throughput and median interval p99."""
    spec = spec_name.replace("'", "''")
    return (
        f"SELECT run_id, cell, max(time) AS at, avg(throughput) AS throughput, "
        f"approx_percentile(p99_us, 0.5) AS p99_us "
        f'FROM "{database}"."{table}" '
        f"WHERE measure_name = 'interval' AND spec = '{spec}' AND phase = 'run' AND time > ago({int(days)}d) "
        f"GROUP BY run_id, cell ORDER BY at DESC LIMIT {int(limit)}"
    )


class TimestreamHistory:
    """History of a spec from LiveAnalytics (``timestream-query``), for regression checks and charts."""

    def __init__(self, clients: Clients, database: str, table: str) -> None:
        self.clients = clients
        self.database = database
        self.table = table

    def runs(self, spec_name: str, limit: int = 20) -> list[dict[str, Any]]:
        client = self.clients("timestream-query")
        sql = history_sql(self.database, self.table, spec_name, limit)
        out: list[dict[str, Any]] = []
        token: str | None = None
        while True:
            args: dict[str, Any] = {"QueryString": sql, **({"NextToken": token} if token else {})}
            page = aws_call(
                "timestream query", client.query, **args, retryable=RetryableIngestError, fatal=IngestFailed
            )
            names = [c["Name"] for c in page.get("ColumnInfo", [])]
            for row in page.get("Rows", []):
                values = [d.get("ScalarValue") for d in row.get("Data", [])]
                item: dict[str, Any] = dict(zip(names, values, strict=False))
                for key in ("throughput", "p99_us"):
                    if item.get(key) is not None:
                        item[key] = float(item[key])
                out.append(item)
            token = page.get("NextToken")
            if not token:
                return out
