"""FinishRun's site refresh (AWS): the bucket's ``site/`` rebuilt for the benchmark a run touched.

Only where the run's artifacts are the results bucket (S3Artifacts); a local run has no bucket site
(`benchwright site --out DIR` builds one). A failed refresh never fails the run: it becomes a
``site_failed`` warning on the record (as the sink's ``sink_failed``) and in the state. The index's
presigned URL is returned to the caller for Slack and never logged (it is a bearer credential).
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from benchwright.providers.base import Providers
from benchwright.runs import RunRecord, RunWarning

if TYPE_CHECKING:  # a local run imports nothing of the bucket's site
    from benchwright.site.refresh import Refreshed

log = logging.getLogger(__name__)
SITE_FAILED = "site_failed"


def on_aws(providers: Providers) -> bool:
    """The artifacts are the results bucket: checked by module so a local run imports nothing of AWS."""
    return type(providers.artifacts).__module__.startswith("benchwright.providers.aws")


def refresh_for(record: RunRecord, providers: Providers, problems: list[str]) -> Refreshed | None:
    """Refresh the bucket's site for ``record``'s benchmark; what was written with the index's presigned
    URL, or None (not on AWS, or the refresh failed: then a warning on the record and in ``problems``)."""
    if not on_aws(providers):
        return None
    record.warnings = [w for w in record.warnings if w.code != SITE_FAILED]  # a retried stage clears it
    try:
        from benchwright.site.refresh import refresh_site

        artifacts = providers.artifacts
        refreshed = refresh_site(artifacts.bucket, artifacts.clients("s3"), [record.spec_name])  # type: ignore[attr-defined]
    except Exception as exc:  # the site is a view: the run's status, numbers and cost stand without it
        log.debug("run %s: site not refreshed", record.run_id, exc_info=True)
        reason = f"site not refreshed ({type(exc).__name__}: {exc})"
        record.warnings.append(RunWarning(code=SITE_FAILED, message=reason[:500], at=datetime.now(UTC)))
        problems.append(reason)
        return None
    log.info("run %s: site refreshed, %d object(s) written", record.run_id, len(refreshed.written))
    return refreshed
