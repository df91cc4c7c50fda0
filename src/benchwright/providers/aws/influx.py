"""Timestream for InfluxDB sink: line protocol through ``influxdb-client`` (InfluxDB v2 write API).

Idempotent by run id by construction: a point is keyed by measurement, tag set and timestamp, so
writing the same run again overwrites identical points.
"""

from __future__ import annotations

from collections.abc import Iterator

from benchwright.errors import IngestFailed, RetryableIngestError
from benchwright.providers.aws.points import Row, rows
from benchwright.runs import RunRecord

BATCH = 5000
MEASUREMENT_PREFIX = "benchwright_"


def _escape_tag(value: str) -> str:
    return value.replace("\\", "\\\\").replace(",", "\\,").replace("=", "\\=").replace(" ", "\\ ")


def _escape_measurement(value: str) -> str:
    return value.replace("\\", "\\\\").replace(",", "\\,").replace(" ", "\\ ")


def _field(value: float | int) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return f"{value}i"
    return repr(float(value))


def line(row: Row) -> str:
    """One line of InfluxDB line protocol, nanosecond timestamp, tags sorted (the cheap order)."""
    tags = "".join(f",{_escape_tag(k)}={_escape_tag(v)}" for k, v in sorted(row.tags.items()) if v != "")
    fields = ",".join(f"{_escape_tag(k)}={_field(v)}" for k, v in row.fields.items())
    ns = int(row.time.timestamp() * 1_000_000) * 1000
    return f"{_escape_measurement(MEASUREMENT_PREFIX + row.measurement)}{tags} {fields} {ns}"


def lines(record: RunRecord) -> Iterator[str]:
    for row in rows(record):
        yield line(row)


class InfluxSink:
    def __init__(self, url: str, token: str, org: str, bucket: str, timeout_ms: int = 30_000) -> None:
        self.url = url
        self._token = token
        self.org = org
        self.bucket = bucket
        self.timeout_ms = timeout_ms

    def write(self, record: RunRecord) -> int:
        from influxdb_client import InfluxDBClient
        from influxdb_client.client.write_api import SYNCHRONOUS
        from influxdb_client.rest import ApiException
        from urllib3.exceptions import HTTPError

        sent = 0
        with InfluxDBClient(url=self.url, token=self._token, org=self.org, timeout=self.timeout_ms) as client:
            api = client.write_api(write_options=SYNCHRONOUS)
            batch: list[str] = []
            try:
                for text in lines(record):
                    batch.append(text)
                    if len(batch) == BATCH:
                        api.write(bucket=self.bucket, org=self.org, record=batch, write_precision="ns")
                        sent += len(batch)
                        batch = []
                if batch:
                    api.write(bucket=self.bucket, org=self.org, record=batch, write_precision="ns")
                    sent += len(batch)
            except ApiException as exc:
                status = int(getattr(exc, "status", 0) or 0)
                message = f"influxdb {self.url} bucket {self.bucket}: HTTP {status} {exc.reason}"
                if status == 429 or status >= 500:
                    raise RetryableIngestError(message) from None
                raise IngestFailed(message) from None
            except (OSError, HTTPError) as exc:  # refused / reset: the instance may be restarting
                raise RetryableIngestError(f"influxdb {self.url}: {type(exc).__name__}") from None
        return sent
