"""The suite's morning digest on AWS, on a moto server (S3 and Secrets Manager over HTTP on
127.0.0.1) and a Slack webhook receiver on 127.0.0.1: the two benchmarks of a suite finish one after
the other; the last one posts exactly one digest, listing both, the night's cost and the site's signed
index; a retried finish posts no second one; a digest that cannot be posted leaves the run as it was."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from benchwright.notifiers.slack.aws import SecretsSlackNotifier
from benchwright.providers.aws.store import S3ResultStore
from benchwright.runs import CostEstimate, RunRecord
from benchwright.stages.finish import finish_run
from benchwright.stages.state import FinishState
from tests.functions.test_cloud_views import SUITE, bucket, suite_records  # noqa: F401
from tests.functions.test_site_refresh import aws_providers
from tests.receivers import SlackPost, SlackWebhookReceiver


@pytest.fixture
def slack() -> Iterator[SlackWebhookReceiver]:
    receiver = SlackWebhookReceiver()
    yield receiver
    receiver.close()


def notifier(store: S3ResultStore, slack: SlackWebhookReceiver) -> SecretsSlackNotifier:
    """The AWS Slack notifier, its webhook in a Secrets Manager secret as docs/deploy.md stores it."""
    clients, secret = store.artifacts.clients, json.dumps({"webhook_url": slack.url})
    sm = clients("secretsmanager")
    found = sm.list_secrets(Filters=[{"Key": "name", "Values": ["bw-slack"]}])["SecretList"]
    arn = found[0]["ARN"] if found else sm.create_secret(Name="bw-slack", SecretString=secret)["ARN"]
    return SecretsSlackNotifier(clients, arn)


def night(store: S3ResultStore, again: str = "") -> tuple[RunRecord, RunRecord]:
    """A night of the two-benchmark suite, both still running (the cell records already written);
    ``again``: a later round of the same night (its run ids end with it)."""
    plain, grid, *cells = suite_records(0)
    if again:
        for record in (plain, grid, *cells):
            record.run_id += again
            record.suite_run_id = record.suite_run_id and record.suite_run_id + again
            record.started_at += timedelta(hours=1)
    for record, cost in ((plain, 1.25), (grid, 2.5)):
        record.status = "running"
        record.cost = CostEstimate(total=cost, source="test prices")
    for record in (plain, grid, *cells):
        record.tags["suite_size"] = "2"
        store.save_run(record)
    return plain, grid


def finish(
    record: RunRecord, store: S3ResultStore, tmp_path: Path, slack: SlackWebhookReceiver
) -> FinishState:
    state = FinishState(run_id=record.run_id, spec_name=record.spec_name, status="running")
    return finish_run(state, aws_providers(store, tmp_path, notifier(store, slack)))


def digests(slack: SlackWebhookReceiver) -> list[SlackPost]:
    return [p for p in slack.posts if " night of " in str(p.body.get("text", ""))]


def test_the_last_benchmark_of_a_suite_posts_one_digest_with_both_the_cost_and_the_signed_site(
    bucket: S3ResultStore,  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    slack: SlackWebhookReceiver,
    caplog: pytest.LogCaptureFixture,
) -> None:
    monkeypatch.setenv("BENCHWRIGHT_CACHE", str(tmp_path / "cache"))
    plain, grid = night(bucket)

    first = finish(plain, bucket, tmp_path, slack)
    assert first.status == "succeeded" and first.warnings == []
    assert len(slack.posts) == 1 and digests(slack) == []  # the run's own message; the night is not complete
    stored = bucket.get_run(plain.run_id)
    assert stored is not None and stored.environment["digest"] == "waiting (1 of 2 benchmarks finished)"

    with caplog.at_level("DEBUG"):
        last = finish(grid, bucket, tmp_path, slack)
    assert last.status == "succeeded" and last.warnings == []
    assert len(slack.posts) == 3 and slack.refused == []  # two run messages and the digest
    [post] = digests(slack)
    text = json.dumps(post.body)
    assert post.body["text"].startswith(f"{SUITE} night of 2026-01-01: 2 benchmark(s)")
    assert "`exp-plain`" in text and "`exp-grid`" in text and "cost $3.75" in text
    [site] = [e["text"] for b in post.body["blocks"] if b["type"] == "context" for e in b["elements"]]
    assert "/bw-results/site/index.html?" in site and "X-Amz-Signature" in site
    ours = "\n".join(r.getMessage() for r in caplog.records if r.name.startswith("benchwright"))
    assert "digest sent" in ours  # what the stage logs: neither the signed link nor the webhook
    assert "X-Amz-Signature" not in ours and slack.token not in ours
    stored = bucket.get_run(grid.run_id)
    assert stored is not None and stored.environment["digest"] == "sent"
    assert "X-Amz" not in stored.model_dump_json()

    again = finish(grid, bucket, tmp_path, slack)  # a retried FinishRun: its run message, no second digest
    assert again.status == "succeeded" and len(digests(slack)) == 1 and len(slack.posts) == 4
    stored = bucket.get_run(grid.run_id)
    assert (
        stored is not None
        and stored.environment["digest"] == "skipped (already in the suite's latest digest)"
    )


def test_a_digest_that_cannot_be_posted_is_a_warning_and_leaves_the_suites_status(
    bucket: S3ResultStore,  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    slack: SlackWebhookReceiver,
) -> None:
    monkeypatch.setenv("BENCHWRIGHT_CACHE", str(tmp_path / "cache"))
    plain, grid = night(bucket)
    finish(plain, bucket, tmp_path, slack)
    slack.down = 500  # Slack is down when the last benchmark finishes

    out = finish(grid, bucket, tmp_path, slack)

    assert out.status == "succeeded" and digests(slack) == []
    assert [w for w in out.warnings if w.startswith("digest_failed: NotifyFailed")], out.warnings
    stored = bucket.get_run(grid.run_id)
    assert stored is not None and stored.status == "succeeded" and stored.verdict is not None
    assert stored.cost is not None and stored.cost.total == 2.5
    assert stored.environment["digest"] == "failed: NotifyFailed"


def test_a_second_round_on_the_same_night_waits_for_all_its_benchmarks_then_posts_its_own_digest(
    bucket: S3ResultStore,  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    slack: SlackWebhookReceiver,
) -> None:
    monkeypatch.setenv("BENCHWRIGHT_CACHE", str(tmp_path / "cache"))
    for record in night(bucket):
        finish(record, bucket, tmp_path, slack)
    assert len(digests(slack)) == 1
    plain, grid = night(bucket, again="-r2")

    finish(plain, bucket, tmp_path, slack)  # the grid's newest run is still the first round's
    assert len(digests(slack)) == 1
    stored = bucket.get_run(plain.run_id)
    assert stored is not None and stored.environment["digest"] == "waiting (1 of 2 benchmarks finished)"

    finish(grid, bucket, tmp_path, slack)
    _, second = digests(slack)
    assert "2 benchmark(s)" in second.body["text"] and "cost $3.75" in second.body["text"]
