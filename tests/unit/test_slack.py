"""Slack: the Block Kit message, delivery through slack_sdk to a receiver on 127.0.0.1 that checks
what Slack's incoming webhooks accept (tests/receivers.py), the webhook secret's shapes, Slack down."""

from __future__ import annotations

import json
import logging
import socket
from collections.abc import Iterator

import pytest

from benchwright.errors import NotifyFailed
from benchwright.judge import judge_run
from benchwright.providers.local.notify import MultiNotifier, SlackNotifier, webhook_url
from benchwright.report.sample import make_run, noisy_series, step_series, sweep_run
from benchwright.report.slack import MAX_CELLS, STATUS_COLOUR, build_message
from benchwright.runs import CostEstimate, RunRecord, Verdict
from tests.receivers import SlackWebhookReceiver, slack_problem

SECRET_PATH = "/services/T000/B000/s3cr3tT0ken"


@pytest.fixture
def slack() -> Iterator[SlackWebhookReceiver]:
    """Slack's incoming webhook as Slack checks it (tests/receivers.py), on 127.0.0.1."""
    receiver = SlackWebhookReceiver(token="s3cr3tT0ken")
    yield receiver
    receiver.close()


def a_run() -> RunRecord:
    run = judge_run(make_run("nightly-pg", "run-42", [("gp2", {"storage": "gp2"}, step_series(3000, 1000, 40, 90)),
                                                      ("io1", {"storage": "io1"}, noisy_series(3000, 90))]))  # fmt: skip
    run.verdict = Verdict(kind="slower", metric="throughput", effect=0.82, ci_low=0.78, ci_high=0.86, min_effect=0.05,
                          message="slower vs 5 earlier runs")  # fmt: skip
    run.cost = CostEstimate(
        total=3.5, items={"rds": 3.0, "storage": 0.5}, ops_per_dollar=1.2e6, source="test"
    )
    run.report = "https://reports.example/run-42/report.html"
    return run


def all_text(message: dict) -> str:
    return json.dumps(message)


def test_message_has_name_verdict_numbers_validity_cost_and_report() -> None:
    message = build_message(a_run())
    blocks = message["blocks"]
    assert blocks[0]["type"] == "header" and "nightly-pg" in blocks[0]["text"]["text"]
    text = all_text(message)
    for needle in ("run-42", "slower", "-18.0 %", "95% CI", "3.50 USD", "1,200,000 ops/$", "`gp2`", "`io1`",
                   "ops/s", "p99", "throughput_collapse", "<https://reports.example/run-42/report.html|"):  # fmt: skip
        assert needle in text, needle
    # gp2's throughput collapsed: an invalid cell, so the run is invalid (even stored as succeeded by an
    # older Benchwright, as make_run does) and the message never reads as a success
    assert message["text"].startswith("nightly-pg run-42: invalid: 1 of 2 cells, verdict slower")
    assert len(blocks) <= 50


def test_an_invalid_run_is_not_green_and_says_how_many_cells_and_why(slack: SlackWebhookReceiver) -> None:
    run = a_run()
    run.status = "invalid"
    message = build_message(run)
    assert blocks_text(message["blocks"][0]) == "nightly-pg: invalid: 1 of 2 cells"
    [bar] = message["attachments"]
    assert bar["color"] == "#e8912d" and bar["color"] != STATUS_COLOUR["succeeded"]
    why = next(b["text"]["text"] for b in message["blocks"] if "do not stand" in json.dumps(b))
    assert "*invalid: 1 of 2 cells*" in why and "`gp2`: run throughput_collapse: throughput collapsed" in why
    assert "`io1`" not in why
    assert ":white_check_mark:" not in all_text(message)
    SlackNotifier(webhook_url=slack.url).notify(run, None)
    assert slack.refused == [] and len(slack.posts) == 1  # Slack takes the coloured attachment


def test_a_valid_run_is_green() -> None:
    run = judge_run(make_run("nightly-pg", "run-43", [("io1", {"storage": "io1"}, noisy_series(3000, 90))]))
    message = build_message(run)
    assert message["text"].startswith("nightly-pg run-43: succeeded")
    assert message["attachments"][0]["color"] == STATUS_COLOUR["succeeded"]
    assert "do not stand" not in all_text(message)


def blocks_text(block: dict) -> str:
    return str(block["text"]["text"])


def test_message_limits_long_matrices() -> None:
    cells = [(f"c{i}", {"i": i}, noisy_series(100, 5, seed=i)) for i in range(40)]
    message = build_message(make_run("big", "b1", cells, with_metrics=False))
    text = all_text(message)
    assert f"and {40 - MAX_CELLS} more cells" in text
    assert all(len(b.get("text", {}).get("text", "")) < 3000 for b in message["blocks"])


def test_unknown_cost_and_no_verdict_are_said_plainly() -> None:
    text = all_text(build_message(sweep_run()))
    assert "unknown" in text and "not compared" in text and "passed the validity policy" in text


def test_notifier_posts_one_message_and_never_logs_the_webhook(
    slack: SlackWebhookReceiver, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TEAM_SLACK_WEBHOOK", slack.url)
    caplog.set_level(logging.DEBUG)
    notifier = SlackNotifier(env_var="TEAM_SLACK_WEBHOOK")
    assert notifier.notify(a_run(), "https://bucket.example/run-42/report.html?X-Amz-Signature=abc") is True
    assert slack.refused == [] and len(slack.posts) == 1
    post = slack.posts[0]
    assert post.path == SECRET_PATH and post.content_type.startswith("application/json")
    assert post.body["blocks"][0]["type"] == "header"
    assert "run-42" in post.body["text"]
    assert "<https://bucket.example/run-42/report.html?X-Amz-Signature=abc|" in json.dumps(post.body)
    assert "s3cr3tT0ken" not in caplog.text and "127.0.0.1:" not in caplog.text
    assert "run-42" in caplog.text  # it did log, just not the secret
    assert "s3cr3tT0ken" not in repr(notifier)


def test_a_long_matrix_with_long_names_is_a_message_slack_accepts(slack: SlackWebhookReceiver) -> None:
    cells = [
        (f"threads={i},storage=gp3-{'x' * 120}", {"i": i}, noisy_series(100, 5, seed=i)) for i in range(60)
    ]
    run = judge_run(make_run("big-" + "y" * 200, "b1", cells, with_metrics=False))
    run.error = "RunnerFailed: " + "z" * 5000
    SlackNotifier(webhook_url=slack.url).notify(run, "https://r.example/" + "q" * 1500)
    assert slack.refused == [] and len(slack.posts) == 1


def test_the_receiver_refuses_what_slack_refuses(slack: SlackWebhookReceiver) -> None:
    """The contract's other half: a message over Slack's limits is refused with Slack's answer."""
    section = {"type": "section", "text": {"type": "mrkdwn", "text": "a"}}
    assert slack_problem({"text": "hi", "blocks": [section] * 50}) is None
    assert slack_problem({"text": "hi", "blocks": [section] * 51}) == "invalid_blocks"
    long = {"type": "section", "text": {"type": "mrkdwn", "text": "a" * 3001}}
    assert slack_problem({"blocks": [long]}) == "invalid_blocks"
    assert slack_problem({}) == "no_text"
    with pytest.raises(NotifyFailed, match="HTTP 400 \\(invalid_blocks\\)"):
        from benchwright.providers.local.notify import send

        send(slack.url, {"text": "hi", "blocks": [long]})
    assert slack.posts == []


@pytest.mark.parametrize(
    ("secret", "expected"),
    [
        (
            '{"webhook_url": "https://hooks.slack.com/services/T/B/x"}',
            "https://hooks.slack.com/services/T/B/x",
        ),
        ("https://hooks.slack.com/services/T/B/x", "https://hooks.slack.com/services/T/B/x"),
        (" https://hooks.slack.com/services/T/B/x\n", "https://hooks.slack.com/services/T/B/x"),
        ("{}", None),  # what the stack creates: Slack not configured
        ("", None),
        ('{"webhook_url": ""}', None),
    ],
)
def test_webhook_secret_shapes(secret: str, expected: str | None) -> None:
    assert webhook_url(secret) == expected


@pytest.mark.parametrize(
    "secret", ["hooks.slack.com/x-s3cr3t", '{"webhook_url": "s3cr3t"}', "{not json s3cr3t"]
)
def test_a_webhook_secret_without_a_url_is_refused_without_repeating_it(secret: str) -> None:
    with pytest.raises(NotifyFailed) as raised:
        webhook_url(secret)
    assert "s3cr3t" not in str(raised.value)


@pytest.mark.parametrize("failure", ["http_500", "connection_refused"])
def test_slack_down_raises_notify_failed(
    failure: str, slack: SlackWebhookReceiver, caplog: pytest.LogCaptureFixture
) -> None:
    url = slack.url
    if failure == "http_500":
        slack.down = 500
    else:
        with socket.socket() as s:  # a port that was free a moment ago: nothing listens there
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        url = f"http://127.0.0.1:{port}{SECRET_PATH}"
    caplog.set_level(logging.DEBUG)
    notifier = SlackNotifier(webhook_url=url, timeout_s=5)
    with pytest.raises(NotifyFailed) as raised:
        notifier.notify(a_run())
    assert "s3cr3tT0ken" not in str(raised.value)
    assert ("HTTP 500" in str(raised.value)) == (failure == "http_500")
    assert "s3cr3tT0ken" not in caplog.text


def test_missing_webhook_variable_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NO_SUCH_WEBHOOK", raising=False)
    with pytest.raises(NotifyFailed, match="NO_SUCH_WEBHOOK"):
        SlackNotifier(env_var="NO_SUCH_WEBHOOK").notify(a_run())


def test_multi_notifier_tries_every_notifier(
    slack: SlackWebhookReceiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("NO_SUCH_WEBHOOK", raising=False)
    both = MultiNotifier(SlackNotifier(env_var="NO_SUCH_WEBHOOK"), SlackNotifier(webhook_url=slack.url))
    with pytest.raises(NotifyFailed, match="NO_SUCH_WEBHOOK"):
        both.notify(a_run())
    assert len(slack.posts) == 1


def test_message_groups_flags_and_shows_numbers_before_and_after() -> None:
    """A warning six cells raised is one line; each cell's throughput comes with the number before."""
    from benchwright.judge import compare_runs, judge_run
    from benchwright.report.sample import make_run as _make_run
    from benchwright.report.sample import noisy_series as _noisy
    from benchwright.report.slack import build_message as _build

    cells = [(f"c{i}", {}, _noisy(2000, 60, seed=i)) for i in range(6)]
    before = _make_run("s", "a", cells, repeats=3, seed=1)
    after = _make_run("s", "b", [(c, p, [v * 0.8 for v in s]) for c, p, s in cells], repeats=3, seed=2)
    for cell in after.cells:
        cell.measured.client.saturated = True  # type: ignore[union-attr]
    judge_run(after)
    after.verdict = compare_runs(after, before)
    text = "\n".join(
        b["text"]["text"] for b in _build(after)["blocks"] if b["type"] == "section" and "text" in b
    )
    assert text.count("client_saturated") == 1 and "6 cells" in text
    assert "before 2,0" in text or "before 1,9" in text
    assert "-2" in text  # the change, about -20 %


def test_the_notifier_factories_read_the_typed_notify_section() -> None:
    """Locally a webhook variable (a Secrets Manager webhook is AWS-side: silent); on AWS the spec's
    secret, else the deployment's, else none."""
    from benchwright.providers.aws.notify import NoNotifier, SecretsSlackNotifier, notifier_for
    from benchwright.providers.local import SilentNotifier, default_notifier
    from benchwright.providers.local.notify import SlackNotifier
    from benchwright.spec import NotifySpec

    arn = "arn:aws:secretsmanager:us-east-1:123456789012:secret:bw-slack-AbCdEf"
    by_env = NotifySpec.model_validate({"slack": {"webhook_env": "TEAM_HOOK"}})
    by_secret = NotifySpec.model_validate({"slack": {"webhook_secret_arn": arn}})

    local = default_notifier(by_env)
    assert isinstance(local, SlackNotifier) and local.env_var == "TEAM_HOOK"
    assert isinstance(default_notifier(by_secret), SilentNotifier)
    assert isinstance(default_notifier(NotifySpec()), SilentNotifier)
    assert isinstance(default_notifier(None), SilentNotifier)

    spec_secret = notifier_for(by_secret, None, "arn:deployment")  # type: ignore[arg-type]
    assert isinstance(spec_secret, SecretsSlackNotifier) and spec_secret.secret_arn == arn
    deployment = notifier_for(NotifySpec(), None, "arn:deployment")  # type: ignore[arg-type]
    assert isinstance(deployment, SecretsSlackNotifier) and deployment.secret_arn == "arn:deployment"
    assert isinstance(notifier_for(None, None, None), NoNotifier)  # type: ignore[arg-type]
