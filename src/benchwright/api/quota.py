"""The per-caller daily run quota of ``POST /runs`` (issue 30 item 4): a caller (the request's IAM
identity) starts at most ``api.max_runs_per_day`` runs per UTC day.

The count lives in the results bucket, where the API keeps the rest of its run state, so it survives
a cold start and is shared by every concurrent Lambda container: one empty marker object per started
run, ``quota/<day>/<caller digest>/<run id>``. A request writes its markers FIRST, then counts the
caller's markers of the day; over the limit, it deletes its own markers and is refused. Two requests
racing can therefore never both pass over the limit (at worst both are refused and the caller
retries). A lifecycle rule (infra/storage.py) expires the markers after two days.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

PREFIX = "quota/"
MAX_PAGES = 20  # list pages of 1,000 keys: bounds the count at 20,000 markers (the limit is lower)


class QuotaExceeded(Exception):
    """This request's runs would take the caller over the stage's daily limit."""

    def __init__(self, used: int, asked: int, limit: int, day: str) -> None:
        self.used, self.asked, self.limit, self.day = used, asked, limit, day
        super().__init__(
            f"this request would start {asked} run(s); {used} were already started today ({day} UTC) "
            f"by this caller, and the stage's api.max_runs_per_day is {limit}"
        )


def caller_prefix(caller: str, day: str) -> str:
    """The caller's markers of ``day``: the identity as a digest (a path component, never an ARN)."""
    digest = hashlib.sha256(caller.encode()).hexdigest()[:32]
    return f"{PREFIX}{day}/{digest}/"


def count(s3: Any, bucket: str, prefix: str) -> int:
    """How many markers lie under ``prefix`` (at most MAX_PAGES pages are read)."""
    total, token = 0, None
    for _ in range(MAX_PAGES):
        page = s3.list_objects_v2(
            Bucket=bucket, Prefix=prefix, **({"ContinuationToken": token} if token else {})
        )
        total += int(page.get("KeyCount", len(page.get("Contents", []))))
        token = page.get("NextContinuationToken")
        if not token:
            break
    return total


def reserve(
    s3: Any, bucket: str, caller: str, run_ids: Sequence[str], limit: int, now: datetime | None = None
) -> None:
    """Count ``run_ids`` against the caller's quota of today; QuotaExceeded (nothing kept) when over."""
    day = (now or datetime.now(UTC)).strftime("%Y-%m-%d")
    prefix = caller_prefix(caller, day)
    if len(run_ids) > limit:  # never written: the request alone is over
        raise QuotaExceeded(count(s3, bucket, prefix), len(run_ids), limit, day)
    keys = [prefix + run_id for run_id in run_ids]
    for key in keys:
        s3.put_object(Bucket=bucket, Key=key, Body=b"")
    used = count(s3, bucket, prefix)
    if used > limit:
        s3.delete_objects(Bucket=bucket, Delete={"Objects": [{"Key": k} for k in keys], "Quiet": True})
        raise QuotaExceeded(used - len(keys), len(keys), limit, day)
