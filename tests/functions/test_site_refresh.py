"""The bucket's site, refreshed by FinishRun on a moto server (HTTP on 127.0.0.1): two nights of two
benchmarks give the index and both pages; a third run of one benchmark puts only its page, the index
and the state; the Slack message links the index by a presigned URL; a site that cannot be built
leaves the run's status and cost as they were, with a ``site_failed`` warning."""

from __future__ import annotations

import json
import urllib.request
from collections import Counter
from dataclasses import replace
from datetime import timedelta
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

import pytest

from benchwright.providers.aws.store import S3ResultStore
from benchwright.providers.base import Notifier
from benchwright.report.sample import EPOCH, make_run, noisy_series
from benchwright.report.slack import build_message
from benchwright.runs import CostEstimate, RunRecord
from benchwright.site.refresh import INDEX_KEY, SITE_LINK_SECONDS, STATE_KEY, refresh_site
from benchwright.stages.finish import finish_run
from benchwright.stages.state import FinishState
from tests.functions.test_cloud_views import BUCKET, SUITE, bucket, suite_records  # noqa: F401
from tests.unit.test_finish import MemoryStore, providers

PLAIN, GRID = "site/bench/exp-plain.html", "site/bench/exp-grid.html"


def s3_client(cache: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, Counter[str]]:
    """An S3 client on the moto server, with every PutObject it makes counted by key."""
    import boto3

    monkeypatch.setenv("BENCHWRIGHT_CACHE", str(cache))
    client = boto3.client("s3")
    puts: Counter[str] = Counter()
    client.meta.events.register(
        "provide-client-params.s3.PutObject", lambda params, **_: puts.update([params["Key"]])
    )
    return client, puts


def plain_run(night: int, level: float = 2000.0) -> RunRecord:
    run = make_run("exp-plain", f"2026010{night + 1}-000000-aaaaaa",
                   [("clients=8", {"clients": 8}, noisy_series(level, 30, seed=night))],
                   started_at=EPOCH + timedelta(days=night), seed=night)  # fmt: skip
    run.tags["suite"] = SUITE
    return run


def test_a_refresh_writes_every_page_once_then_only_the_touched_page_and_the_index(
    bucket: S3ResultStore,  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    client, puts = s3_client(tmp_path / "cache", monkeypatch)
    for night in (0, 1):
        for record in suite_records(night):
            bucket.save_run(record)
    first = refresh_site(BUCKET, client, ["exp-plain"])
    assert sorted(first.written) == sorted([PLAIN, GRID, INDEX_KEY, STATE_KEY])
    keys = {o["Key"] for o in client.list_objects_v2(Bucket=BUCKET, Prefix="site/")["Contents"]}
    assert keys == {PLAIN, GRID, INDEX_KEY, STATE_KEY}
    index = client.get_object(Bucket=BUCKET, Key=INDEX_KEY)["Body"].read().decode()
    assert 'data-benchmark="exp-grid"' in index and 'data-benchmark="exp-plain"' in index
    assert "<link" not in index and "<script src" not in index  # nothing from another origin

    puts.clear()
    bucket.save_run(plain_run(2, level=1200.0))  # a third night of exp-plain only
    again = refresh_site(BUCKET, client, ["exp-plain"])

    assert puts == Counter({PLAIN: 1, INDEX_KEY: 1, STATE_KEY: 1})  # the grid's page is not rewritten
    assert again.written == [PLAIN, INDEX_KEY, STATE_KEY]
    state = json.loads(client.get_object(Bucket=BUCKET, Key=STATE_KEY)["Body"].read())
    assert state["pages"]["exp-plain"] == "20260103-000000-aaaaaa"
    # the index opens from its presigned URL, and its page links carry their own signatures
    with urllib.request.urlopen(again.index_url, timeout=10) as response:
        served = response.read().decode()
    assert 'data-benchmark="exp-plain"' in served
    page_link = next(p for p in served.split('href="')[1:] if p.startswith("http") and "exp-grid" in p)
    query = parse_qs(urlparse(page_link.split('"')[0].replace("&amp;", "&")).query)
    assert "X-Amz-Signature" in query and query["X-Amz-Expires"] == [str(SITE_LINK_SECONDS)]
    with urllib.request.urlopen(page_link.split('"')[0].replace("&amp;", "&"), timeout=10) as response:
        assert b"exp-grid" in response.read()


class Payloads(Notifier):
    """The Slack notifier's payload, built as it would post it (report/slack.build_message)."""

    def __init__(self) -> None:
        self.messages: list[dict[str, Any]] = []

    def notify(
        self, record: RunRecord, report_url: str | None = None, *, site_url: str | None = None
    ) -> bool:
        self.messages.append(build_message(record, report_url, site_url))
        return True


def aws_providers(bucket: S3ResultStore, tmp_path: Path, notifier: Notifier) -> Any:  # noqa: F811
    return replace(providers(tmp_path, MemoryStore(), notifier), store=bucket, artifacts=bucket.artifacts)


def finished(run_id: str) -> FinishState:
    return FinishState(run_id=run_id, spec_name="exp-plain", status="running")


def test_finish_run_refreshes_the_site_and_slack_links_its_presigned_index(
    bucket: S3ResultStore,  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    monkeypatch.setenv("BENCHWRIGHT_CACHE", str(tmp_path / "cache"))
    bucket.save_run(plain_run(0))
    running = plain_run(1)
    running.status = "running"
    bucket.save_run(running)
    slack = Payloads()

    with caplog.at_level("DEBUG"):
        out = finish_run(finished(running.run_id), aws_providers(bucket, tmp_path, slack))

    assert out.status == "succeeded" and out.warnings == []
    [message] = slack.messages
    links = [e["text"] for b in message["blocks"] if b["type"] == "context" for e in b["elements"]]
    [site] = [t for t in links if t.startswith("Site: <http")]
    assert f"/{BUCKET}/site/index.html?" in site and f"X-Amz-Expires={SITE_LINK_SECONDS}" in site
    assert "X-Amz-Signature" in site
    assert "X-Amz-Signature" not in caplog.text  # the bearer link is never logged
    stored = bucket.get_run(running.run_id)
    assert stored is not None and stored.warnings == [] and "X-Amz" not in stored.model_dump_json()


def test_a_site_that_cannot_be_built_is_a_warning_and_leaves_the_run_as_it_was(
    bucket: S3ResultStore,  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    (tmp_path / "cache").write_text("not a directory")  # the cache store cannot be created
    monkeypatch.setenv("BENCHWRIGHT_CACHE", str(tmp_path / "cache"))
    running = plain_run(0)
    running.status = "running"
    running.cost = CostEstimate(total=1.25, source="test prices")
    bucket.save_run(running)
    slack = Payloads()

    out = finish_run(finished(running.run_id), aws_providers(bucket, tmp_path, slack))

    assert out.status == "succeeded" and out.notification == "sent"
    [warning] = out.warnings
    assert warning.startswith("site not refreshed (")
    stored = bucket.get_run(running.run_id)
    assert stored is not None and stored.status == "succeeded"
    assert stored.cost is not None and stored.cost.total == 1.25 and stored.verdict is not None
    assert [w.code for w in stored.warnings] == ["site_failed"]
    [message] = slack.messages
    assert "nightly site" not in json.dumps(message)  # no link to a site that was not written


def test_the_download_is_bounded_and_writes_nothing_past_its_budget(
    bucket: S3ResultStore,  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    client, puts = s3_client(tmp_path / "cache", monkeypatch)
    for record in suite_records(0):
        bucket.save_run(record)
    with pytest.raises(TimeoutError, match="took over 0 s to download"):
        refresh_site(BUCKET, client, ["exp-plain"], budget_s=0.0)
    assert puts == Counter()  # no page, index or state from a partial history


def test_results_prints_a_presigned_link_to_the_site_index(
    bucket: S3ResultStore,  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from benchwright.cli import main
    from benchwright.commands import cloud

    client, _ = s3_client(tmp_path / "cache", monkeypatch)
    run = plain_run(0)

    def api(url: str, method: str, path: str, *_: Any, **__: Any) -> dict[str, Any]:
        """The API's two answers (the API is not what this test is about; the bucket is moto's)."""
        if path.endswith("/report"):
            return {"url": "https://example.invalid/report.html"}
        return {"run_id": run.run_id, "status": "succeeded"}

    monkeypatch.setattr(cloud, "call_api", api)
    argv = ["results", run.run_id, "--api-url", "https://example.invalid", "--bucket", f"s3://{BUCKET}"]
    assert main(argv) == 0
    assert json.loads(capsys.readouterr().out)["site"] is None  # no refresh yet: no link to nothing
    bucket.save_run(run)
    refresh_site(BUCKET, client, [run.spec_name])

    assert main(argv) == 0
    site = json.loads(capsys.readouterr().out)["site"]
    assert f"/{BUCKET}/site/index.html?" in site and "X-Amz-Expires=43200" in site
    with urllib.request.urlopen(site, timeout=10) as response:
        assert b'data-benchmark="exp-plain"' in response.read()
