"""The morning digest (issue 26): one message per suite per night with the changes found that night,
the invalid cells, the cost and the site's link; short per-benchmark lines; a message Slack accepts
(tests/receivers.py checks Slack's limits), posted by the Slack notifier."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from benchwright.cli import main
from benchwright.providers.local.notify import SlackNotifier
from benchwright.record_files import store_of_records
from benchwright.site.build import write_site
from benchwright.site.digest import digests
from benchwright.site.sample import Plan, history
from tests.receivers import SlackWebhookReceiver, slack_problem

NIGHTS = 12
SITE = "https://results.example/site/index.html?X-Amz-Signature=abc"


@pytest.fixture
def slack() -> Iterator[SlackWebhookReceiver]:
    receiver = SlackWebhookReceiver(token="s3cr3tT0ken")
    yield receiver
    receiver.close()


def nightly(tmp_path: Path) -> list[dict]:
    plans = [Plan("pg-ycsb", shifts={NIGHTS - 1: 0.8}), Plan("mysql-tpcc", invalid=(NIGHTS - 1,)),
             Plan("redis-get", cells=("pipeline=16",))]  # fmt: skip
    records = history(plans, NIGHTS, seed=2)
    for r in records:
        if r.spec_name == "redis-get":
            r.tags["suite"] = "cache"
    with store_of_records(records) as store:
        built = write_site(store, tmp_path / "site")
    return digests(built.judged, SITE)


def text_of(message: dict) -> str:
    return json.dumps(message["blocks"], ensure_ascii=False)


def test_one_message_per_suite_with_changes_invalid_cells_cost_and_link(tmp_path: Path) -> None:
    messages = nightly(tmp_path)
    assert [m["blocks"][0]["text"]["text"] for m in messages] == [
        "cache: night of 2026-10-12", "nightly: night of 2026-10-12"]  # fmt: skip
    nightly_text = text_of(messages[1])
    assert "2 benchmark(s), 2 level change(s) found, 2 invalid cell(s), cost $3.36" in nightly_text
    assert (
        "`pg-ycsb` clients=8: " in nightly_text and "% slower since 2026-10-12, 95% interval" in nightly_text
    )
    assert "`mysql-tpcc` clients=8" in nightly_text and "`mysql-tpcc` clients=32" in nightly_text
    assert "ops/s, p99 2.5 ms: no verdict :no_entry: invalid" in nightly_text
    assert "ops/s, p99 2.5 ms: changed tonight" in nightly_text
    assert f"<{SITE}|open the nightly site>" in nightly_text
    cache = text_of(messages[0])
    assert "1 benchmark(s), 0 level change(s) found, 0 invalid cell(s), cost $0.84" in cache
    assert "`redis-get` 10" in cache and "ops/s, p99 2.5 ms: steady" in cache
    for message in messages:
        assert slack_problem(message) is None


def test_the_slack_notifier_posts_the_digest(tmp_path: Path, slack: SlackWebhookReceiver) -> None:
    messages = nightly(tmp_path)
    notifier = SlackNotifier(webhook_url=slack.url)
    assert all(notifier.post(m) for m in messages)
    assert slack.refused == [] and len(slack.posts) == 2
    assert slack.posts[1].body["text"].startswith("nightly night of 2026-10-12: 2 benchmark(s)")


def test_a_long_suite_stays_within_slacks_limits(tmp_path: Path) -> None:
    plans = [Plan(f"bench-{'x' * 80}-{i}", cells=tuple(f"c{j}-{'y' * 60}" for j in range(4)), shifts={3: 0.5})
             for i in range(40)]  # fmt: skip
    with store_of_records(history(plans, 4)) as store:
        built = write_site(store, tmp_path / "site")
    (message,) = digests(built.judged, "https://r.example/" + "q" * 1500)
    assert slack_problem(message) is None
    assert "…and" in text_of(message)  # 160 changed cells: counted, not all listed


def test_the_command_prints_the_digest(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    records = tmp_path / "records.json"
    runs = history([Plan("printed", cells=("c",))], 4)
    records.write_text("[" + ",".join(r.model_dump_json() for r in runs) + "]", encoding="utf-8")
    assert main(["site", "--records", str(records), "--out", str(tmp_path / "out"), "--digest"]) == 0
    out = capsys.readouterr().out
    assert "nightly: night of 2026-10-04" in out and "`printed` " in out and "*Changes tonight*\nnone" in out
