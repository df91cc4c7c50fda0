"""S3: where large payloads live. Result documents, plans and metric series travel as s3:// pointers."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from benchwright.errors import IngestFailed, RetryableIngestError
from benchwright.providers.aws.common import Clients, aws_call
from benchwright.providers.base import ArtifactStore

REPORT_KEY = "runs/{run_id}/report.html"


def split_uri(pointer: str) -> tuple[str, str]:
    """``s3://bucket/key`` -> (bucket, key); anything else is an error naming the pointer."""
    if not pointer.startswith("s3://") or "/" not in pointer[5:]:
        raise IngestFailed(f"not an s3:// pointer: {pointer!r}")
    bucket, key = pointer[5:].split("/", 1)
    return bucket, key


class S3Artifacts(ArtifactStore):
    def __init__(self, clients: Clients, bucket: str) -> None:
        self.clients = clients
        self.bucket = bucket

    def uri(self, key: str) -> str:
        return f"s3://{self.bucket}/{key}"

    def put_json(self, key: str, data: Any) -> str:
        body = (
            data if isinstance(data, (bytes, str)) else json.dumps(data, default=str, separators=(",", ":"))
        )
        aws_call(
            f"s3 put {self.uri(key)}",
            self.clients("s3").put_object,
            Bucket=self.bucket,
            Key=key,
            Body=body,
            ContentType="application/json",
            retryable=RetryableIngestError,
            fatal=IngestFailed,
        )
        return self.uri(key)

    def get_json(self, pointer: str) -> Any:
        return json.loads(self.get_bytes(pointer))

    def put_report(self, run_id: str, html: str) -> str:
        """``runs/<run id>/report.html``, next to the record (the API presigns the same key)."""
        key = REPORT_KEY.format(run_id=run_id)
        aws_call(
            f"s3 put {self.uri(key)}",
            self.clients("s3").put_object,
            Bucket=self.bucket,
            Key=key,
            Body=html.encode("utf-8"),
            ContentType="text/html; charset=utf-8",
            retryable=RetryableIngestError,
            fatal=IngestFailed,
        )
        return self.uri(key)

    def share(self, pointer: str, expires_s: int) -> str:
        """A presigned GET of the object (SigV4; valid for ``expires_s`` or until the signing role's
        session ends, whichever comes first)."""
        bucket, key = split_uri(pointer)
        url: str = aws_call(
            f"s3 presign {pointer}",
            self.clients("s3").generate_presigned_url,
            "get_object",
            Params={"Bucket": bucket, "Key": key},
            ExpiresIn=expires_s,
            fatal=IngestFailed,
        )
        return url

    def get_bytes(self, pointer: str) -> bytes:
        bucket, key = split_uri(pointer)
        body = aws_call(
            f"s3 get {pointer}",
            self.clients("s3").get_object,
            Bucket=bucket,
            Key=key,
            retryable=RetryableIngestError,
            fatal=IngestFailed,
        )["Body"]
        data: bytes = body.read()
        return data

    def stream_lines(self, pointer: str) -> Iterator[bytes]:
        """Read an object line by line without holding it all (JSON-lines exports)."""
        bucket, key = split_uri(pointer)
        body = aws_call(
            f"s3 get {pointer}",
            self.clients("s3").get_object,
            Bucket=bucket,
            Key=key,
            retryable=RetryableIngestError,
            fatal=IngestFailed,
        )["Body"]
        yield from body.iter_lines()

    def exists(self, pointer: str) -> bool:
        from botocore.exceptions import ClientError

        bucket, key = split_uri(pointer)
        try:
            self.clients("s3").head_object(Bucket=bucket, Key=key)
            return True
        except ClientError:
            return False

    def keys(self, prefix: str) -> Iterator[str]:
        paginator = self.clients("s3").get_paginator("list_objects_v2")
        for page in paginator.paginate(Bucket=self.bucket, Prefix=prefix):
            for item in page.get("Contents", []):
                yield item["Key"]
