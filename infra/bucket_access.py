"""Each stage Lambda's share of the results bucket, by key prefix (issue 30: a "read-only" stage
could write anywhere in the bucket, and every stage could delete any object).

The table is what the handlers really do as their own roles (tests/infra/test_bucket_access.py runs
the workflow in moto and holds every recorded S3 call to these statements, and these statements to
the table):

- ``runs/<run id>/...``: a run's objects (runner plans, outputs, cell documents, metrics, verdicts,
  ``record.json``, ``report.html``). No stage's own role writes there: a stage reads and writes ITS
  run's objects as a session of the run-scoped ``ResultsRunRole`` tagged with the run
  (infra/isolation.py), so a state naming another run's key is denied. What stays here is reading
  other runs' objects: the finishing stages read earlier records (the verdict and trend chart) and
  a suite's cell records, and Teardown reads a failed runner's output;
- ``history/<spec>/...`` and ``suites/<suite>/...``: the index keys a stored record adds;
- ``site/...``: the static site and the nightly digests the finishing stages refresh.

No stage deletes an object (versioning keeps overwritten ones), and no role but the API's may write
a run's ``owner.json``: the API's quota markers and owner records are the API's (``api_statements``;
the run-scoped role denies ``owner.json`` explicitly). A stage that reads also gets
``s3:ListBucket`` on the bucket: without it S3 answers a missing key with 403 instead of 404, and
the stages ask for keys that may not exist yet (the site's state). Listing shows key names only,
never an object's content.
"""

from __future__ import annotations

from dataclasses import dataclass

from aws_cdk import aws_iam as iam
from aws_cdk import aws_s3 as s3

RUNS = "runs/*"
OWNER = "runs/*/owner.json"  # who submitted a run through the API (api/backend.py): the API's alone
INDEXES = ("history/*", "suites/*")
SITE = "site/*"


@dataclass(frozen=True)
class BucketAccess:
    """Key patterns a stage reads (``s3:GetObject``, also HeadObject) and writes (``s3:PutObject``)."""

    read: tuple[str, ...] = ()
    put: tuple[str, ...] = ()


NONE = BucketAccess()
# the finishing stages: earlier runs' records (verdict, trend chart; a suite's cells), the index keys
# their run's record adds, the site and digests they refresh; their own run's objects: ResultsRunRole
FINISHING = BucketAccess(read=(RUNS, SITE), put=(*INDEXES, SITE))
# a stored record adds its index keys (store.py): history/ (and suites/ for a suite's run)
STORING = BucketAccess(put=INDEXES)

BUCKET_ACCESS: dict[str, BucketAccess] = {
    "ValidateSpec": NONE,  # pure stages
    "ExpandMatrix": NONE,
    "InfluxToken": NONE,  # the sink's custom resource: its two secrets only
    "ProvisionTarget": NONE,  # targets, tags and secrets; nothing in the bucket
    "CheckTarget": NONE,
    "CheckOperations": NONE,
    "Janitor": NONE,  # deletes leaked resources by tag; run objects stay (the bucket's lifecycle ages them)
    # the run's plan, outputs, documents, metrics and verdicts: all its own run's (ResultsRunRole)
    "LaunchRunner": NONE,
    "CheckRunner": NONE,
    "CollectMetrics": NONE,
    "Judge": NONE,
    "Ingest": STORING,
    "Price": STORING,  # the priced record, saved again
    "Teardown": BucketAccess(read=(RUNS,)),  # a failed runner's output, for the reason it gives
    "FinishRun": FINISHING,
    "SummarizeSuite": FINISHING,
    "AbortTeardown": FINISHING,  # finishes an aborted execution through the same finish stage
}
BUCKET_ACCESS["JudgeResults"] = BUCKET_ACCESS["Judge"]  # the ASL's names for the same stages
BUCKET_ACCESS["StoreResults"] = BUCKET_ACCESS["Ingest"]
BUCKET_ACCESS["PriceRun"] = BUCKET_ACCESS["Price"]


def bucket_statements(bucket: s3.IBucket, access: BucketAccess) -> list[iam.PolicyStatement]:
    """Exact actions on exact key patterns: no ``s3:*Object*`` wildcard, no delete, no ACL."""
    out: list[iam.PolicyStatement] = []
    if access.read:
        out.append(
            iam.PolicyStatement(
                actions=["s3:GetObject"], resources=[bucket.arn_for_objects(p) for p in access.read]
            )
        )
        out.append(iam.PolicyStatement(actions=["s3:ListBucket"], resources=[bucket.bucket_arn]))
    if access.put:
        out.append(
            iam.PolicyStatement(
                actions=["s3:PutObject"], resources=[bucket.arn_for_objects(p) for p in access.put]
            )
        )
    if RUNS in access.put:  # a run's objects are written as a session of its run (infra/isolation.py)
        raise ValueError("no stage's own role writes under runs/: its run session does")
    return out


def api_statements(bucket: s3.IBucket, quota: str) -> list[iam.PolicyStatement]:
    """The API's share: it reads run objects (records, owners, reports it presigns), writes a run's
    owner at submit and its callers' quota markers, and deletes only a refused request's markers."""
    return [
        iam.PolicyStatement(actions=["s3:GetObject"], resources=[bucket.arn_for_objects(RUNS)]),
        iam.PolicyStatement(actions=["s3:ListBucket"], resources=[bucket.bucket_arn]),
        iam.PolicyStatement(
            actions=["s3:PutObject"], resources=[bucket.arn_for_objects(OWNER), bucket.arn_for_objects(quota)]
        ),
        iam.PolicyStatement(actions=["s3:DeleteObject"], resources=[bucket.arn_for_objects(quota)]),
    ]
