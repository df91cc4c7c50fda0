"""A real local run that cannot be valid ends ``invalid``, never ``succeeded``: a throwaway Redis with
``maxmemory`` and ``noeviction`` refuses most inserts of the load and most updates of the run. The
command exits 4 (0 with --allow-invalid, the status staying invalid), and the Slack message (to a
receiver that checks what Slack accepts) and the HTML report's header say "invalid: 1 of 1 cell" and
why. A valid run with ``--fail-on regression`` and no history exits 5 and says what it needs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from benchwright.cli import main
from benchwright.providers.local.sqlite_store import SQLiteResultStore
from benchwright.report.slack import STATUS_COLOUR
from tests.receivers import SlackWebhookReceiver

pytestmark = [pytest.mark.servers, pytest.mark.slow]
WEBHOOK_ENV = "BW_TEST_INVALID_RUN_SLACK"


def spec_file(tmp_path: Path, name: str, settings: dict[str, Any]) -> Path:
    spec = {
        "name": name,
        "target": {"provider": "local", "engine": "redis", "settings": {"appendonly": "no", **settings}},
        "workload": {
            "name": "ycsb",
            "properties": {
                "recordcount": 500,
                "fieldcount": 10,
                "fieldlength": 400,
                "redis.datatype": "hash",
                "readproportion": 0.5,
                "updateproportion": 0.5,
            },
            "phases": {"load": {"threads": 2}, "run": {"threads": 2, "operation_count": 1000}},
        },
        "notify": {"slack": {"webhook_env": WEBHOOK_ENV}, "on": "always"},
    }
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(spec))
    return path


def run(tmp_path: Path, spec: Path, out: str, *extra: str) -> int:
    store = tmp_path / "store.sqlite"
    return main(["run", str(spec), "--quick", "--out", str(tmp_path / out), "--store", str(store), *extra])


@pytest.fixture
def slack(monkeypatch: pytest.MonkeyPatch) -> Any:
    receiver = SlackWebhookReceiver(token="invalidRunT0ken")
    monkeypatch.setenv(WEBHOOK_ENV, receiver.url)
    yield receiver
    receiver.close()


def test_a_redis_that_fills_up_ends_invalid_exits_4_and_says_so_everywhere(
    tmp_path: Path, slack: SlackWebhookReceiver, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = spec_file(tmp_path, "redis-full", {"maxmemory": "2mb", "maxmemory-policy": "noeviction"})

    assert run(tmp_path, spec, "first") == 4
    out = capsys.readouterr().out
    assert "exit 4: redis-full ended invalid: 1 of 1 cell" in out and "status: invalid" in out

    with SQLiteResultStore(tmp_path / "store.sqlite") as store:
        [record] = store.history("redis-full")
    assert record.status == "invalid"
    assert record.error is not None and record.error.startswith("invalid: 1 of 1 cell (default: load ")
    load, measured = record.cells[0].phases["load"], record.cells[0].phases["run"]
    assert load.failed("INSERT") > 0 and load.operations["INSERT"].operations > 0  # some fitted, not all
    assert measured.failed("UPDATE") > 0  # the run's writes were refused too
    assert "run error_rate" in record.error and "load error_rate" in record.error

    # Slack: accepted, not green, "invalid: 1 of 1 cell" and the reasons
    assert slack.refused == [] and len(slack.posts) == 1
    body = slack.posts[0].body
    assert body["text"].startswith(f"redis-full {record.run_id}: invalid: 1 of 1 cell")
    assert body["attachments"][0]["color"] != STATUS_COLOUR["succeeded"]
    assert body["blocks"][0]["text"]["text"] == "redis-full: invalid: 1 of 1 cell"
    text = json.dumps(body)
    assert "load incomplete_load" in text and "run error_rate" in text
    assert ":white_check_mark:" not in text and "*Status*\\n:no_entry: invalid: 1 of 1 cell" in text

    # the HTML header and its validity section: every flag of both phases, the run's not hidden by the load's
    html = Path(record.report or "").read_text()
    assert '<span class="badge invalid" id="status">invalid: 1 of 1 cell</span>' in html
    assert 'id="invalid-cells"' in html and "no validity flags" not in html
    section = html[html.index('<table id="validity">') :]
    section = section[: section.index("</table>")]
    for flag in [*load.validity, *measured.validity]:
        assert flag.message.replace("'", "&#39;") in section, flag.code

    # --allow-invalid: exit 0, the status stays invalid
    assert run(tmp_path, spec, "second", "--allow-invalid") == 0
    with SQLiteResultStore(tmp_path / "store.sqlite") as store:
        assert [r.status for r in store.history("redis-full")] == ["invalid", "invalid"]
    assert len(slack.posts) == 2 and "invalid: 1 of 1 cell" in slack.posts[1].body["text"]


def test_fail_on_regression_without_history_exits_5_and_says_what_it_needs(
    tmp_path: Path, slack: SlackWebhookReceiver, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = spec_file(tmp_path, "redis-roomy", {})
    assert run(tmp_path, spec, "first", "--fail-on", "regression") == 5
    out = capsys.readouterr().out
    assert "status: succeeded" in out
    assert "no verdict is possible yet; it needs 3 earlier valid run(s) of 'redis-roomy'" in out
    assert "and has 0" in out
    body = slack.posts[0].body
    assert body["attachments"][0]["color"] == STATUS_COLOUR["succeeded"]
