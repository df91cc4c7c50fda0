"""Run records read back out of the results bucket, for the analysis commands on a laptop.

The workflow writes ``runs/<run id>/record.json`` and index keys (``history/<spec>/...``,
``suites/<suite>/...``, see store.py); this module reads them with the caller's own credentials
(``AWS_PROFILE``, ``AWS_ENDPOINT_URL`` and the rest of botocore's environment apply).
"""

from __future__ import annotations

from typing import Any

from benchwright.errors import BenchwrightError, SpecError
from benchwright.providers.aws.store import index_run_id, record_key
from benchwright.runs import RunRecord

INDEXES = ("history", "suites")  # spec names, then suite names


def bucket_name(uri: str) -> str:
    """``s3://bucket`` (a trailing slash allowed) -> ``bucket``; anything else names ``--bucket``."""
    name = uri.removeprefix("s3://").rstrip("/") if uri.startswith("s3://") else ""
    if not name or "/" in name:
        raise SpecError("--bucket", f"must be s3://BUCKET (the stack's results bucket), got {uri!r}")
    return name


class BucketRecords:
    """Reads records and index keys of one results bucket."""

    def __init__(self, bucket: str, client: Any = None) -> None:
        self.bucket = bucket
        self._client = client

    @property
    def client(self) -> Any:
        if self._client is None:
            import boto3

            self._client = boto3.client("s3")
        return self._client

    def _fail(self, what: str, exc: Exception) -> BenchwrightError:
        return BenchwrightError(f"s3://{self.bucket}/{what}: cannot read it ({exc})")

    def record(self, run_id: str) -> RunRecord | None:
        """The run's record, None when the bucket has none; a record of another schema is an error
        naming its key."""
        from botocore.exceptions import BotoCoreError, ClientError

        key = record_key(run_id)
        try:
            body = self.client.get_object(Bucket=self.bucket, Key=key)["Body"].read()
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") in ("NoSuchKey", "404"):
                return None
            raise self._fail(key, exc) from None
        except BotoCoreError as exc:
            raise self._fail(key, exc) from None
        try:
            return RunRecord.model_validate_json(body)
        except ValueError as exc:
            first = str(exc).splitlines()[0]
            raise BenchwrightError(
                f"s3://{self.bucket}/{key}: not a run record this Benchwright reads ({first})"
            ) from None

    def run_ids(self, name: str, limit: int) -> list[str]:
        """The newest ``limit`` run ids of a spec or of a suite (both indexes), newest first."""
        from botocore.exceptions import BotoCoreError, ClientError

        keys: list[str] = []
        for index in INDEXES:
            prefix = f"{index}/{name}/"
            try:
                pages = self.client.get_paginator("list_objects_v2").paginate(
                    Bucket=self.bucket, Prefix=prefix
                )
                keys += [item["Key"] for page in pages for item in page.get("Contents", [])]
            except (BotoCoreError, ClientError) as exc:
                raise self._fail(prefix, exc) from None
        newest = sorted(keys, key=lambda k: k.rsplit("/", 1)[-1], reverse=True)
        return list(dict.fromkeys(index_run_id(k) for k in newest))[:limit]

    def _keys(self, prefix: str) -> list[str]:
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            pages = self.client.get_paginator("list_objects_v2").paginate(Bucket=self.bucket, Prefix=prefix)
            return [item["Key"] for page in pages for item in page.get("Contents", [])]
        except (BotoCoreError, ClientError) as exc:
            raise self._fail(prefix, exc) from None

    def ids_with_prefix(self, prefix: str) -> list[str]:
        """Run ids whose record key starts ``runs/<prefix>`` (a full id or the start of one)."""
        keys = self._keys(f"runs/{prefix}")
        return sorted({k.split("/")[1] for k in keys if k.endswith("/record.json") and k.count("/") == 2})

    def spec_names(self) -> list[str]:
        """Every spec with an index key under ``history/`` (what a site or a listing covers)."""
        return sorted({k.split("/")[1] for k in self._keys("history/") if k.count("/") == 2})
