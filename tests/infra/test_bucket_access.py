"""Each stage Lambda's share of the results bucket (issue 30), over the synthesized stack: its own
role's S3 statements, resolved and evaluated with benchwright.rehearse.abac, allow exactly the
reads and writes infra/bucket_access.py lists for it, on those key prefixes only; no stage deletes
an object, a stage that only reads writes nothing, and no stage's own role writes under ``runs/``
(its run's objects go through its run session: test_run_isolation.py). (test_iam_coverage.py holds every S3 call
the handlers really make, key by key, to the same statements.)"""

from __future__ import annotations

from typing import Any

import pytest

from benchwright.rehearse.abac import Request, evaluate
from benchwright.rehearse.stack import Resolver
from infra.bucket_access import BUCKET_ACCESS, INDEXES, RUNS, SITE, BucketAccess
from tests.infra.test_stack import resources, statements_of

BUCKET = "arn:aws:s3:::bw-results"
# one key under every prefix a stage might touch, and some no stage may
KEYS = {
    RUNS: "runs/20261129-030000-aaaa/record.json",
    INDEXES[0]: "history/nightly/20261129T030000_20261129-030000-aaaa",
    INDEXES[1]: "suites/nightly/20261129T030000_20261129-030000-aaaa",
    SITE: "site/index.html",
    "quota/*": "quota/caller/20261129T030000",
    "other": "elsewhere/x.json",
}
WRITES = (
    "s3:PutObject",
    "s3:PutObjectAcl",
    "s3:PutObjectTagging",
    "s3:DeleteObject",
    "s3:DeleteObjectVersion",
)


def state_name(module: str) -> str:
    return "".join(part.title() for part in module.split("_"))


def s3_statements(doc: dict[str, Any], module: str) -> list[dict[str, Any]]:
    """The role's statements that name an S3 action (or every action), with the bucket resolved."""
    found = [
        st
        for st in statements_of(doc, module)
        if any(
            a == "*" or a.lower().startswith("s3:")
            for a in (st["Action"] if isinstance(st["Action"], list) else [st["Action"]])
        )
    ]
    (bucket,) = [k for k in resources(doc, "AWS::S3::Bucket") if k.startswith("StorageResults")]
    return list(Resolver(template=doc, attrs={(bucket, "Arn"): BUCKET}).resolve(found))


def stage_modules(doc: dict[str, Any]) -> list[str]:
    return sorted(
        f["Properties"]["Handler"].removeprefix("functions.").rsplit(".", 1)[0]
        for f in resources(doc, "AWS::Lambda::Function").values()
        if f["Properties"].get("Handler", "").startswith("functions.")
        and not f["Properties"]["Handler"].startswith("functions.api.")
    )


def test_every_stage_lambda_has_a_bucket_profile(stack: dict[str, Any]) -> None:
    modules = stage_modules(stack)
    assert len(modules) >= 15, modules  # the table really is compared with the stack's functions
    assert {state_name(m) for m in modules} <= set(BUCKET_ACCESS), modules


@pytest.mark.parametrize("module", sorted({"validate_spec", "expand_matrix", "provision_target", "check_target",
                                           "check_operations", "janitor", "launch_runner", "check_runner",
                                           "collect_metrics", "judge_results", "store_results", "price_run",
                                           "teardown", "finish_run", "summarize_suite", "abort_teardown",
                                           "influx_token"}))  # fmt: skip
def test_a_stage_reads_and_writes_only_its_listed_prefixes_and_deletes_nothing(
    stack: dict[str, Any], module: str
) -> None:
    doc = stack
    access: BucketAccess = BUCKET_ACCESS[state_name(module)]
    statements = s3_statements(doc, module)
    granted = {
        a for st in statements for a in (st["Action"] if isinstance(st["Action"], list) else [st["Action"]])
    }
    assert granted <= {"s3:GetObject", "s3:PutObject", "s3:ListBucket"}, (module, granted)
    for pattern, key in KEYS.items():
        arn = f"{BUCKET}/{key}"
        read = evaluate(statements, Request("s3:GetObject", arn))
        assert read == ("allow" if pattern in access.read else "implicit-deny"), (module, key, read)
        put = evaluate(statements, Request("s3:PutObject", arn))
        assert put == ("allow" if pattern in access.put else "implicit-deny"), (module, key, put)
        for action in WRITES[1:]:  # no ACL, no tagging, and never a delete
            assert evaluate(statements, Request(action, arn)) == "implicit-deny", (module, action, key)
    listing = evaluate(statements, Request("s3:ListBucket", BUCKET, context={"s3:prefix": "runs/"}))
    assert listing == ("allow" if access.read else "implicit-deny"), (module, listing)
    if not access.put:  # a reading stage writes nothing anywhere
        assert not any(a.startswith(("s3:Put", "s3:Delete")) for a in granted), (module, granted)


def test_the_stages_that_only_read_and_the_ones_that_write_nothing_are_the_expected_ones() -> None:
    """The table's shape, so a widening shows up in review: one reader, and the sweepers delete
    leaked resources by tag, never run objects."""
    readers = {s for s, a in BUCKET_ACCESS.items() if a.read and not a.put}
    assert readers == {"Teardown"}
    untouched = {s for s, a in BUCKET_ACCESS.items() if not a.read and not a.put}
    assert {"ValidateSpec", "ExpandMatrix", "Janitor", "InfluxToken", "CheckOperations"} <= untouched
    site_writers = {s for s, a in BUCKET_ACCESS.items() if SITE in a.put}
    assert site_writers == {"FinishRun", "SummarizeSuite", "AbortTeardown"}
    for state, access in BUCKET_ACCESS.items():
        assert set(access.read) | set(access.put) <= {RUNS, *INDEXES, SITE}, state


def test_no_stage_s_own_role_writes_under_runs(stack: dict[str, Any]) -> None:
    """A run's objects, ``owner.json`` included, are written by no stage's own role: a stage writes
    its run's objects as a session of ResultsRunRole tagged with the run (infra/isolation.py;
    tests/infra/test_run_isolation.py holds that session to its run's prefix and denies it
    ``owner.json``), so a state naming another run cannot make a stage write there."""
    run = f"{BUCKET}/runs/20261129-030000-aaaa"
    modules = stage_modules(stack)
    assert len(modules) >= 15, modules
    for module in modules:
        statements = s3_statements(stack, module)
        for key in ("record.json", "owner.json", "report.html", "cells/default.json"):
            assert evaluate(statements, Request("s3:PutObject", f"{run}/{key}")) != "allow", (module, key)
    for access in BUCKET_ACCESS.values():
        assert RUNS not in access.put, access


def test_the_api_writes_only_owners_and_quota_markers_and_deletes_only_markers(
    stack: dict[str, Any],
) -> None:
    statements = s3_statements(stack, "api")
    run = f"{BUCKET}/runs/20261129-030000-aaaa"
    marker = f"{BUCKET}/quota/20261129/abcdef/20261129-030000-aaaa"
    allowed = {
        ("s3:GetObject", f"{run}/record.json"),
        ("s3:GetObject", f"{run}/report.html"),
        ("s3:GetObject", f"{run}/owner.json"),
        ("s3:PutObject", f"{run}/owner.json"),
        ("s3:PutObject", marker),
        ("s3:DeleteObject", marker),
        ("s3:ListBucket", BUCKET),
    }
    denied = {
        ("s3:PutObject", f"{run}/record.json"),
        ("s3:PutObject", f"{BUCKET}/history/nightly/x"),
        ("s3:PutObject", f"{BUCKET}/site/index.html"),
        ("s3:GetObject", f"{BUCKET}/site/state.json"),
        ("s3:DeleteObject", f"{run}/record.json"),
        ("s3:DeleteObject", f"{run}/owner.json"),
        ("s3:DeleteObjectVersion", marker),
        ("s3:PutObjectAcl", marker),
    }
    for action, arn in allowed:
        assert evaluate(statements, Request(action, arn)) == "allow", (action, arn)
    for action, arn in denied:
        assert evaluate(statements, Request(action, arn)) == "implicit-deny", (action, arn)
