"""Slack: the Block Kit message, delivery to a recording webhook on 127.0.0.1, and Slack being down."""

from __future__ import annotations

import json
import logging
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import pytest

from benchwright.errors import NotifyFailed
from benchwright.judge import judge_run
from benchwright.providers.local.notify import MultiNotifier, SlackNotifier, deliver
from benchwright.providers.local.sqlite_store import SQLiteResultStore
from benchwright.report.sample import make_run, noisy_series, step_series, sweep_run
from benchwright.report.slack import MAX_CELLS, build_message
from benchwright.runs import CostEstimate, RunRecord, Verdict

SECRET_PATH = "/services/T000/B000/s3cr3tT0ken"


class Recorder:
    def __init__(self, status: int = 200) -> None:
        self.status = status
        self.requests: list[tuple[str, dict]] = []


@pytest.fixture
def webhook() -> Iterator[tuple[str, Recorder]]:
    """A webhook on 127.0.0.1 that records every JSON payload and answers ``recorder.status``."""
    recorder = Recorder()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers["Content-Length"]))
            recorder.requests.append((self.path, json.loads(body)))
            self.send_response(recorder.status)
            self.end_headers()
            self.wfile.write(b"ok" if recorder.status == 200 else b"internal_error")

        def log_message(self, *args: object) -> None:
            return None

    server = HTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}{SECRET_PATH}", recorder
    server.shutdown()
    server.server_close()


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
    assert message["text"].startswith("nightly-pg run-42: succeeded, verdict slower")
    assert len(blocks) <= 50


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
    webhook: tuple[str, Recorder], caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    url, recorder = webhook
    monkeypatch.setenv("TEAM_SLACK_WEBHOOK", url)
    caplog.set_level(logging.DEBUG)
    notifier = SlackNotifier(env_var="TEAM_SLACK_WEBHOOK")
    notifier.notify(a_run())
    assert len(recorder.requests) == 1
    path, payload = recorder.requests[0]
    assert path == SECRET_PATH
    assert payload["blocks"][0]["type"] == "header"
    assert "run-42" in payload["text"]
    assert "s3cr3tT0ken" not in caplog.text and "127.0.0.1:" not in caplog.text
    assert "run-42" in caplog.text  # it did log, just not the secret
    assert "s3cr3tT0ken" not in repr(notifier)


@pytest.mark.parametrize("failure", ["http_500", "connection_refused"])
def test_slack_down_raises_notify_failed_and_the_run_is_kept(
    failure: str, webhook: tuple[str, Recorder], tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    url, recorder = webhook
    if failure == "http_500":
        recorder.status = 500
    else:
        with socket.socket() as s:  # a port that was free a moment ago: nothing listens there
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        url = f"http://127.0.0.1:{port}{SECRET_PATH}"
    caplog.set_level(logging.DEBUG)
    notifier = SlackNotifier(webhook_url=url, timeout_s=5)
    run = a_run()
    with pytest.raises(NotifyFailed) as raised:
        notifier.notify(run)
    assert "s3cr3tT0ken" not in str(raised.value)
    assert ("HTTP 500" in str(raised.value)) == (failure == "http_500")

    with SQLiteResultStore(tmp_path / "s.sqlite") as store:
        store.save_run(run)  # results are durable before notifications
        message = deliver(notifier, run, store)
        assert message is not None and message.startswith("slack:")
        kept = store.get_run("run-42")
    assert kept is not None and kept.cells == run.cells
    assert kept.environment["notification"].startswith("failed: slack:")
    assert "s3cr3tT0ken" not in caplog.text


def test_missing_webhook_variable_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NO_SUCH_WEBHOOK", raising=False)
    with pytest.raises(NotifyFailed, match="NO_SUCH_WEBHOOK"):
        SlackNotifier(env_var="NO_SUCH_WEBHOOK").notify(a_run())


def test_multi_notifier_tries_every_notifier(
    webhook: tuple[str, Recorder], monkeypatch: pytest.MonkeyPatch
) -> None:
    url, recorder = webhook
    monkeypatch.delenv("NO_SUCH_WEBHOOK", raising=False)
    both = MultiNotifier(SlackNotifier(env_var="NO_SUCH_WEBHOOK"), SlackNotifier(webhook_url=url))
    run = a_run()
    assert deliver(both, run) is not None
    assert len(recorder.requests) == 1


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
