"""FinishRun's morning digest (AWS): one Slack message per suite per night, posted by the suite's
benchmark that finishes last.

A suite of N benchmarks starts N executions (the API tags each run ``suite`` and ``suite_size``), and
each finishes on its own; none of them knows when the others end. So every finish of a suite's
benchmark, after the site refresh has judged every benchmark, looks at the suite's newest night: when
all ``suite_size`` benchmarks have a finished run on it, the digest (site/digest.py) is due. Two
benchmarks finishing at once may both see that; the one whose conditional put
(``If-None-Match: *``) of ``site/digests/<suite>/<night>-<hash of the run ids>.json`` wins posts it,
the other skips. ``site/digests/<suite>/latest.json`` keeps the run ids the last digest listed: a
second round of the suite on the same night waits until none of its benchmarks' newest runs is one
of those (all have run again), then posts its own digest; a retried finish posts nothing again.

Each run keeps its own message (its verdict and report link, right when it ends): the digest is the
one message a team reads in the morning, in addition. The digest goes through the run's notifier (the
webhook from Secrets Manager, never logged) with the site's presigned index. A failure is a
``digest_failed`` warning in the state, never the run's status.
"""

from __future__ import annotations

import hashlib
import json
import logging
from typing import TYPE_CHECKING, Any

from benchwright.providers.base import Notifier, Providers
from benchwright.runs import RunRecord

if TYPE_CHECKING:  # a local run imports nothing of the bucket's site
    from benchwright.site.refresh import Refreshed

log = logging.getLogger(__name__)
DIGEST_PREFIX = "site/digests/"  # under site.refresh.SITE_PREFIX
SIZE_TAG = "suite_size"


def _posters(notifier: Notifier) -> list[Any]:
    """The notifiers that can post a message built elsewhere (Slack's ``post``)."""
    inner = getattr(notifier, "notifiers", None)
    found = inner if isinstance(inner, list) else [notifier]
    return [n for n in found if callable(getattr(n, "post", None))]


def _bucket(providers: Providers) -> tuple[Any, str]:
    artifacts: Any = providers.artifacts
    return artifacts.clients("s3"), str(artifacts.bucket)


def _last_posted(providers: Providers, suite: str) -> set[str]:
    """The run ids the suite's latest digest listed (none yet: empty)."""
    client, bucket = _bucket(providers)
    try:
        body = client.get_object(Bucket=bucket, Key=f"{DIGEST_PREFIX}{suite}/latest.json")["Body"].read()
    except client.exceptions.NoSuchKey:
        return set()
    runs = json.loads(body).get("runs")
    return {str(r) for r in runs} if isinstance(runs, list) else set()


def _claim(providers: Providers, suite: str, night: str, runs: list[str]) -> bool:
    """Put the night's claim only if absent (True for the one finish that wins it), then the suite's
    ``latest.json``: the runs a later round must not post again."""
    from botocore.exceptions import ClientError

    client, bucket = _bucket(providers)
    tail = hashlib.sha256(",".join(runs).encode()).hexdigest()[:12]
    try:
        client.put_object(Bucket=bucket, Key=f"{DIGEST_PREFIX}{suite}/{night}-{tail}.json", Body=b"{}",
                          IfNoneMatch="*")  # fmt: skip
    except ClientError as exc:
        if exc.response.get("Error", {}).get("Code") in ("PreconditionFailed", "ConditionalRequestConflict"):
            return False
        raise
    body = json.dumps({"night": night, "runs": runs}).encode()
    client.put_object(Bucket=bucket, Key=f"{DIGEST_PREFIX}{suite}/latest.json", Body=body)
    return True


def post_digest(
    record: RunRecord, refreshed: Refreshed | None, providers: Providers, problems: list[str]
) -> str:
    """Post the suite's digest when ``record`` completes its night; returns what happened."""
    from benchwright.site.digest import by_suite, digest

    suite = record.tags.get("suite")
    if refreshed is None or not suite:
        return "skipped (no suite or no site)"
    try:
        size = int(record.tags.get(SIZE_TAG, "0"))
        items = by_suite(refreshed.judged).get(suite, [])
        if size < 1 or len(items) < size:
            return f"waiting ({len(items)} of {size or '?'} benchmarks finished)"
        posters = _posters(providers.notifier)
        if not posters:
            return "not configured"
        runs = sorted(i.bench.last.run_id for i in items if i.bench.last)
        before = _last_posted(providers, suite)
        if before.issuperset(runs):
            return "skipped (already in the suite's latest digest)"
        if before.intersection(runs):  # a round on the same night: some benchmarks are still running
            return f"waiting ({len(set(runs) - before)} of {size} benchmarks finished)"
        night = str(max(i.bench.last.at for i in items if i.bench.last).date())
        if not _claim(providers, suite, night, runs):
            return "skipped (posted by another benchmark of the suite)"
        message = digest(suite, items, refreshed.index_url)
        sent = any([poster.post(message) for poster in posters])
    except Exception as exc:  # the digest is a view: the run's status, numbers and cost stand without it
        log.warning("run %s: digest failed: %s", record.run_id, type(exc).__name__)
        problems.append(f"digest_failed: {type(exc).__name__}: {exc}"[:500])
        return f"failed: {type(exc).__name__}"
    log.info("run %s: suite %s digest %s", record.run_id, suite, "sent" if sent else "not sent")
    return "sent" if sent else "not configured"
