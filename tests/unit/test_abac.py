"""The run-scoped policy evaluator (benchwright.rehearse.abac): IAM's rules for what the stack's
run-scoped roles use, and a loud refusal of anything else."""

from __future__ import annotations

from typing import Any

import pytest

from benchwright.rehearse.abac import Request, Unsupported, evaluate, operators_of, substitute

OWN = "${aws:PrincipalTag/benchwright:run-id}"
SECRET = "arn:aws:secretsmanager:us-east-1:123456789012:secret:bw-run-1-db-AbCdEf"
READ_OWN_SECRET: dict[str, Any] = {
    "Effect": "Allow",
    "Action": "secretsmanager:GetSecretValue",
    "Resource": "*",
    "Condition": {"StringEquals": {"secretsmanager:ResourceTag/benchwright:run-id": OWN}},
}
WRITE_OWN_PREFIX: dict[str, Any] = {
    "Effect": "Allow",
    "Action": ["s3:GetObject", "s3:PutObject"],
    "Resource": f"arn:aws:s3:::results/runs/{OWN}/*",
}
LIST_OWN_PREFIX: dict[str, Any] = {
    "Effect": "Allow",
    "Action": "s3:ListBucket",
    "Resource": "arn:aws:s3:::results",
    "Condition": {"StringLike": {"s3:prefix": f"runs/{OWN}/*"}},
}


def session(run: str | None, **kw: Any) -> dict[str, Any]:
    return {"principal_tags": {} if run is None else {"benchwright:run-id": run}, **kw}


def test_a_session_reads_the_secret_tagged_with_its_own_run_only() -> None:
    def read(run: str | None, tags: dict[str, str]) -> str:
        request = Request("secretsmanager:GetSecretValue", SECRET, **session(run, resource_tags=tags))
        return evaluate([READ_OWN_SECRET], request)

    assert read("run-1", {"benchwright:run-id": "run-1"}) == "allow"
    assert read("run-2", {"benchwright:run-id": "run-1"}) == "implicit-deny"
    assert read("run-1", {}) == "implicit-deny"  # an untagged secret: nobody's
    assert read(None, {"benchwright:run-id": "run-1"}) == "implicit-deny"  # an untagged session


def test_the_prefix_variable_binds_the_whole_path_component() -> None:
    def put(run: str, key: str) -> str:
        request = Request("s3:PutObject", f"arn:aws:s3:::results/{key}", **session(run))
        return evaluate([WRITE_OWN_PREFIX], request)

    assert put("run-1", "runs/run-1/cell/repeat-0/runner-0") == "allow"
    assert put("run-1", "runs/run-10/cell/repeat-0/runner-0") == "implicit-deny"  # a longer id
    assert put("run-1", "runs/run-2/record.json") == "implicit-deny"
    assert put("run-1", "history/spec/x") == "implicit-deny"


def test_listing_is_held_to_the_own_prefix_by_s3_prefix() -> None:
    def ls(run: str, prefix: str | None) -> str:
        context = {} if prefix is None else {"s3:prefix": prefix}
        return evaluate(
            [LIST_OWN_PREFIX],
            Request("s3:ListBucket", "arn:aws:s3:::results", **session(run, context=context)),
        )

    assert ls("run-1", "runs/run-1/cell/") == "allow"
    assert ls("run-1", "runs/run-2/") == "implicit-deny"
    assert ls("run-1", None) == "implicit-deny"  # the whole bucket


def test_an_explicit_deny_wins_and_actions_match_case_insensitively() -> None:
    allow_all = {"Effect": "Allow", "Action": "S3:*", "Resource": "*"}
    deny = {"Effect": "Deny", "Action": "s3:PutObject", "Resource": "arn:aws:s3:::results/runs/*"}
    put = Request("s3:PutObject", "arn:aws:s3:::results/runs/x")
    assert evaluate([allow_all], put) == "allow"
    assert evaluate([deny, allow_all], put) == "explicit-deny"
    assert evaluate([allow_all, deny], put) == "explicit-deny"
    assert evaluate([], put) == "implicit-deny"


def test_null_tests_presence_and_brackets_are_not_character_classes() -> None:
    tagged = {"Null": {"aws:ResourceTag/benchwright:run-id": "false"}}
    statement = {"Effect": "Allow", "Action": "rds:DeleteDBInstance", "Resource": "*", "Condition": tagged}
    delete = "rds:DeleteDBInstance"
    assert evaluate([statement], Request(delete, "db", resource_tags={"benchwright:run-id": "x"})) == "allow"
    assert evaluate([statement], Request(delete, "db")) == "implicit-deny"
    literal = {"Effect": "Allow", "Action": "s3:GetObject", "Resource": "arn:aws:s3:::b/[ab]"}
    assert evaluate([literal], Request("s3:GetObject", "arn:aws:s3:::b/a")) == "implicit-deny"
    assert evaluate([literal], Request("s3:GetObject", "arn:aws:s3:::b/[ab]")) == "allow"


def test_what_is_not_evaluated_is_refused_never_guessed() -> None:
    request = Request("s3:GetObject", "arn:aws:s3:::b/k")
    with pytest.raises(Unsupported, match="ArnLike"):
        evaluate(
            [
                {
                    "Effect": "Allow",
                    "Action": "s3:*",
                    "Resource": "*",
                    "Condition": {"ArnLike": {"aws:SourceArn": "x"}},
                }
            ],
            request,
        )
    with pytest.raises(Unsupported, match="NotAction"):
        evaluate([{"Effect": "Allow", "NotAction": "iam:*", "Resource": "*"}], request)
    with pytest.raises(Unsupported, match="aws:username"):
        substitute("arn:aws:s3:::b/${aws:username}/*", request)
    assert operators_of([READ_OWN_SECRET, LIST_OWN_PREFIX, WRITE_OWN_PREFIX]) == {
        "StringEquals",
        "StringLike",
    }
