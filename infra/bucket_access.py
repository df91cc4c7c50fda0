"""Each stage Lambda's share of the results bucket, by key prefix (issue 30: a "read-only" stage
could write anywhere in the bucket, and every stage could delete any object).

The table is what the handlers really do (tests/infra/test_bucket_access.py runs the workflow in
moto and holds every recorded S3 call to these statements, and these statements to the table):

- ``runs/<run id>/...``: the run's own objects (runner plans, outputs, cell documents, metrics,
  verdicts, ``record.json``, ``report.html``);
- ``history/<spec>/...`` and ``suites/<suite>/...``: the index keys a stored record adds;
- ``site/...``: the static site and the nightly digests the finishing stages refresh.

No stage deletes an object (versioning keeps overwritten ones), and none may write a run's
``owner.json`` (explicit deny): the API's quota markers and owner records are the API's
(``api_statements``). A stage that reads also gets ``s3:ListBucket`` on the bucket: without it S3
answers a missing key with 403 instead of 404, and the stages ask for keys that may not exist yet
(a runner's output, the site's state). Listing shows key names only, never an object's content.
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
# the finishing stages: the run's record and report, its index keys, the site and digests they refresh
FINISHING = BucketAccess(read=(RUNS, SITE), put=(RUNS, *INDEXES, SITE))
# a stored record adds its index keys (store.py): the record, then history/ (and suites/ for a suite's run)
STORING = BucketAccess(read=(RUNS,), put=(RUNS, *INDEXES))

BUCKET_ACCESS: dict[str, BucketAccess] = {
    "ValidateSpec": NONE,  # pure stages
    "ExpandMatrix": NONE,
    "InfluxToken": NONE,  # the sink's custom resource: its two secrets only
    "ProvisionTarget": NONE,  # targets, tags and secrets; nothing in the bucket
    "CheckTarget": NONE,
    "CheckOperations": NONE,
    "Janitor": NONE,  # deletes leaked resources by tag; run objects stay (the bucket's lifecycle ages them)
    "LaunchRunner": BucketAccess(put=(RUNS,)),  # the runner's plan.json
    "CheckRunner": BucketAccess(read=(RUNS,), put=(RUNS,)),  # the runner's output -> the cell's documents
    "CollectMetrics": BucketAccess(put=(RUNS,)),  # the cell's metrics.json
    "Judge": BucketAccess(read=(RUNS,), put=(RUNS,)),  # documents + metrics -> the cell's verdict
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
    if RUNS in access.put:  # a stage writes its run's objects, never the API's record of who owns the run
        out.append(
            iam.PolicyStatement(
                effect=iam.Effect.DENY, actions=["s3:PutObject"], resources=[bucket.arn_for_objects(OWNER)]
            )
        )
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
