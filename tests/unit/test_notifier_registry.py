"""Notifier kinds: every registered kind honours the descriptor's contract, and a toy kind registered
from a test folder (tests/unit/toy_notifier) is validated in a spec and sent through a local run."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from benchwright.errors import SpecError
from benchwright.local import run_spec
from benchwright.notifiers import registry
from benchwright.notifiers.base import NotifierKind
from benchwright.providers.base import Providers
from benchwright.providers.local import SilentNotifier, default_notifier
from benchwright.providers.local.notify import MultiNotifier
from benchwright.spec import NotifySpec, parse_spec
from benchwright.specguard import check_no_secrets, is_secret_key
from tests.unit.test_stages import SPEC, quiet, world  # noqa: F401 (world is a fixture)

TOY = "tests.unit.toy_notifier.kind"
ARN = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:{}"


@pytest.fixture
def toy() -> Iterator[NotifierKind]:
    kind = registry.load(TOY)  # the toy's one registry line
    yield kind
    registry.unregister("toy")


class Receiver:
    """A webhook on 127.0.0.1 that keeps what it was sent."""

    def __init__(self) -> None:
        self.posts: list[dict[str, Any]] = []
        outer = self

        class Hook(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                outer.posts.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
                self.send_response(200)
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                return None

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Hook)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.url = f"http://127.0.0.1:{self.server.server_port}/hook"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    hook = Receiver()
    yield hook
    hook.close()


# ---------------------------------------------------------------- the contract, for every kind
def _kinds() -> list[str]:
    return sorted(registry.kinds())


@pytest.mark.parametrize("name", ["slack", "toy"])
def test_every_kind_honours_the_descriptor_contract(name: str, toy: NotifierKind) -> None:
    kind = registry.kinds()[name]
    assert kind.name == name and name in _kinds()
    assert kind.spec.model_config.get("extra") == "forbid"  # an unknown field is an error
    assert callable(kind.local)
    for field in kind.spec.model_fields:  # a secret is named by reference, and the guard lets it through
        if field.endswith(("_env", "_arn")):
            assert not is_secret_key(f"notify.{name}.{field}")
    if kind.secret_arn_field is not None:
        assert kind.secret_name is not None and kind.cloud is not None
        assert kind.secret_allowed(ARN.format(f"{kind.secret_name}/team-AbCdEf"))
        assert kind.secret_allowed(f"{kind.secret_name}")
        assert not kind.secret_allowed(ARN.format("someone-elses-secret-AbCdEf"))
    with pytest.raises(ValidationError) as invalid:
        kind.spec.model_validate({"no_such_field": "x"})
    assert "extra_forbidden" in {e["type"] for e in invalid.value.errors()}
    with pytest.raises(SpecError) as raised:  # a spec's error names the field under notify.<kind>
        parse_spec({**SPEC, "notify": {name: {"no_such_field": "x"}}})
    assert raised.value.field.startswith(f"notify.{name}.")


def test_slack_is_built_in_and_names_its_secret_convention() -> None:
    from benchwright.spec.notify import SLACK_SECRET_NAME

    slack = registry.kinds()["slack"]
    assert slack.secret_name == SLACK_SECRET_NAME == "benchwright/slack"
    assert slack.secret_arn_field == "webhook_secret_arn" and slack.uses_deployment_secret
    with pytest.raises(ValueError, match="built in"):
        registry.unregister("slack")


def test_a_kind_is_registered_once_and_named_plainly(toy: NotifierKind) -> None:
    with pytest.raises(ValueError, match="twice"):
        registry.register(NotifierKind(name="toy", spec=toy.spec, local=toy.local))
    assert registry.load(TOY) is toy  # loading the same module again is harmless
    with pytest.raises(ValueError, match="lower-case"):
        NotifierKind(name="on", spec=toy.spec, local=toy.local)
    with pytest.raises(ValueError, match="secret_arn_field"):
        NotifierKind(name="bad", spec=toy.spec, local=toy.local, secret_arn_field="url_env")


# ---------------------------------------------------------------- the toy, in a spec
def test_an_unregistered_kind_is_an_unknown_notifier_naming_the_field() -> None:
    with pytest.raises(SpecError) as raised:
        parse_spec({**SPEC, "notify": {"toy": {"url_env": "TOY_HOOK"}}})
    assert raised.value.field == "notify.toy" and "unknown notifier (one of slack" in str(raised.value)


def test_the_toy_section_is_validated_by_its_own_model(toy: NotifierKind) -> None:
    spec = parse_spec({**SPEC, "notify": {"on": "failure", "toy": {"url_env": "TOY_HOOK"}}})
    [(name, section)] = spec.notify.configured()
    assert name == "toy" and isinstance(section, toy.spec) and section.url_env == "TOY_HOOK"
    assert spec.notify.on == "failure"
    with pytest.raises(SpecError) as raised:
        parse_spec({**SPEC, "notify": {"toy": {"url_env": "lower-case"}}})
    assert raised.value.field == "notify.toy.url_env" and "environment variable NAME" in str(raised.value)


def test_the_secret_guard_refuses_a_secret_written_in_a_notifier_section(toy: NotifierKind) -> None:
    with pytest.raises(SpecError) as raised:
        check_no_secrets({"notify": {"toy": {"url_env": "TOY_HOOK", "token": "s3cr3t"}}})
    assert raised.value.field == "notify.toy.token"


def test_a_cloud_spec_cannot_name_a_kind_without_an_aws_sender(toy: NotifierKind) -> None:
    cloud = {
        "name": "toy-in-the-cloud",
        "target": {"provider": "elasticache", "engine": "redis", "engine_version": "7.1",
                   "node_type": "cache.t4g.small", "availability_zone": "eu-west-1a"},
        "runner": {"platform": "fargate"},
        "workload": {"name": "ycsb"},
        "notify": {"toy": {"url_env": "TOY_HOOK"}},
    }  # fmt: skip
    with pytest.raises(SpecError) as raised:
        parse_spec(cloud)
    assert "notify.toy: this notifier cannot send from AWS" in str(raised.value)


# ---------------------------------------------------------------- the toy, through a local run
def test_a_local_run_sends_through_the_toy_kind(
    world: dict[str, Any],  # noqa: F811 (the fixture imported above)
    toy: NotifierKind,
    receiver: Receiver,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("TOY_HOOK", receiver.url)
    spec = parse_spec({**SPEC, "notify": {"toy": {"url_env": "TOY_HOOK", "label": "team-a"}}})
    notifier = default_notifier(spec.notify)
    assert type(notifier).__name__ == "ToyNotifier"

    def factory(out: Path, s: Any) -> Providers:
        providers: Providers = world["factory"](out, s)
        providers.notifier = default_notifier(s.notify)
        return providers

    outcome = run_spec(spec, world["out"], factory, quiet())
    assert outcome.record.status == "succeeded"
    assert outcome.record.environment["notification"] == "sent"
    [post] = receiver.posts
    assert post["label"] == "team-a" and post["run_id"] == outcome.record.run_id
    assert post["status"] == "succeeded" and post["spec"] == "fake"
    assert receiver.url not in outcome.record.model_dump_json()  # the webhook is never stored


def test_two_kinds_are_sent_together_and_an_unset_one_stays_silent(
    toy: NotifierKind, monkeypatch: pytest.MonkeyPatch
) -> None:
    both = NotifySpec.model_validate({"slack": {"webhook_env": "TEAM_HOOK"}, "toy": {"url_env": "TOY_HOOK"}})
    notifier = default_notifier(both)
    assert isinstance(notifier, MultiNotifier)
    assert [type(n).__name__ for n in notifier.notifiers] == ["SlackNotifier", "ToyNotifier"]
    arn = ARN.format("benchwright/slack-AbCdEf")
    assert isinstance(default_notifier(NotifySpec.model_validate({"slack": {"webhook_secret_arn": arn}})),
                      SilentNotifier)  # fmt: skip
