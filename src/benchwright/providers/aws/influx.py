"""Timestream for InfluxDB sink: line protocol through ``influxdb-client`` (InfluxDB v2 write API).

Idempotent by run id by construction: a point is keyed by measurement, tag set and timestamp, so
writing the same run again overwrites identical points.

The token. InfluxDB's write API takes ``Authorization: Token <API token>``; the admin credentials
Timestream for InfluxDB keeps in its own secret (``{"username", "password", ...}``) are for signing in,
not a token, and sending them gets 401. The sink therefore reads its own secret
(``BENCHWRIGHT_INFLUX_TOKEN_SECRET_ARN``) holding an operator (or write) API token, in either shape:

- ``{"token": "<API token>"}`` (what the stack's custom resource writes; other keys are ignored), or
- the bare token string.

A secret without a token (such as the admin credentials) is refused with a message saying which
shape is expected, never with its contents. Org and bucket come from ``BENCHWRIGHT_INFLUX_ORG`` and
``BENCHWRIGHT_INFLUX_BUCKET``.
"""

from __future__ import annotations

import json
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


def token_from_secret(text: str, where: str = "the InfluxDB token secret") -> str:
    """The API token from the secret's text (see the module docstring); IngestFailed otherwise."""
    value = text.strip()
    if value.startswith("{"):
        try:
            data = json.loads(value)
        except ValueError:
            raise IngestFailed(
                f'{where} is not valid JSON (expected {{"token": ...}} or the bare token)'
            ) from None
        token = data.get("token") if isinstance(data, dict) else None
        if not isinstance(token, str) or not token.strip():
            keys = ", ".join(sorted(data)) if isinstance(data, dict) else type(data).__name__
            raise IngestFailed(
                f'{where} holds no API token (keys: {keys}); it needs {{"token": ...}} or the bare '
                "token, not the admin sign-in credentials"
            )
        return token.strip()
    if not value or any(c.isspace() for c in value):
        raise IngestFailed(f'{where} is empty or not a token (expected {{"token": ...}} or the bare token)')
    return value


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
        from influxdb_client.client.influxdb_client import InfluxDBClient
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
