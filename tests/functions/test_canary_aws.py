"""Issue 30, item 3 on the AWS path: one canary planted through every route a secret can enter a cloud
run, searched for in every payload, log and stored object. 0 hits is the only pass.

Executed by moto's Step Functions interpreter with the real handlers and the real runner
(tests/aws_world.py). A run gets its secrets by reference: the RDS-managed master password (Secrets
Manager), the stack's Slack webhook (Secrets Manager; its token is the receiver's) and an environment
variable both the Lambdas and the runner process see. The execution history (every state's input and
output), the handlers' log records and printed output, every object in the results bucket, the
runner's output and the Slack message are searched for all of them.

A spec that WRITES a secret (a URL or DSN with a password, a password-like key, a webhook URL in tags
or description, a credential in the master user's name) fails at ValidateSpec, whose handler now runs
the same guards as every other door: no later stage runs, and its failure events, the logs and the
bucket hold no trace of it. The API's refusal of the same specs (no execution
is ever started) is tests/functions/test_canary_api.py.
"""

from __future__ import annotations

import json
import logging
import secrets
from typing import Any

import pytest

from tests.aws_world import World, rds_spec, run_input

pytestmark = pytest.mark.timeout(1200)  # one real runner, as in the workflow tests

CANARY = f"cnry{secrets.token_hex(10)}"
HOOK = f"https://hooks.slack.com/services/T0CANARY/B0CANARY/{CANARY}"


def hostile_specs() -> dict[str, dict[str, Any]]:
    """rds_spec with the canary written in, one route each."""
    out: dict[str, dict[str, Any]] = {}
    for route, plant in {
        "URL": lambda s: s["workload"]["properties"].update({"db.url": f"postgresql://u:{CANARY}@db:5432/x"}),
        "URL ?password=": lambda s: s["workload"]["properties"].update({"db.url": f"postgresql://db/x?password={CANARY}"}),
        "DSN": lambda s: s["workload"]["properties"].update({"db.dsn": f"host=db user=u password={CANARY}"}),
        "password key": lambda s: s["workload"]["properties"].update({"postgres.password": CANARY}),
        "master password": lambda s: s["target"].update({"password": CANARY}),
        "user with a credential": lambda s: s["target"].update({"username": f"u:{CANARY}@db"}),
        "webhook in tags": lambda s: s.update({"tags": {"hook": HOOK}}),
        "webhook in description": lambda s: s.update({"description": f"posts to {HOOK}"}),
    }.items():  # fmt: skip
        spec = rds_spec("canary-hostile")
        plant(spec)
        out[route] = spec
    return out


FAILURES = ("TaskFailed", "LambdaFunctionFailed", "ExecutionFailed")


def failures(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """What the workflow itself wrote about a refused spec: its failure events. (The history also
    carries the caller's own input into ValidateSpec and on to the Fail state: Step Functions keeps
    what the caller sent, which is why the API refuses such a spec before any execution starts.)"""
    return [e for e in events if e["type"] in FAILURES]


def test_no_canary_in_any_payload_log_or_object_of_the_aws_path(
    world: World,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO)
    env_canary = f"envcnry{secrets.token_hex(8)}"
    monkeypatch.setenv("BW_CANARY_VARIABLE", env_canary)  # the Lambdas' and the runner's environment
    good = world.execute("benchmark", run_input(rds_spec("canary-aws"), "canary-aws-1"))
    assert good["status"] == "SUCCEEDED", (good["error"], good["cause"])
    assert world.runner_runs == 1 and world.runner_logs  # the real runner read the secret and used it
    assert world.record("canary-aws-1")["status"] == "succeeded"
    assert world.slack.refused == [] and len(world.slack.posts) == 1  # the webhook route was taken
    # the secrets the run was given by reference: the managed password(s), the Slack token, the variable
    given = {s for s in world.secrets if s} | {env_canary}
    assert len(given) >= 3, given

    refused: dict[str, dict[str, Any]] = {}
    for i, (route, spec) in enumerate(sorted(hostile_specs().items())):
        world.calls.clear()
        result = world.execute("benchmark", run_input(spec, f"canary-aws-h{i}"))
        assert result["status"] == "FAILED" and result["error"] == "SpecError", (route, result["cause"])
        assert world.calls == ["ValidateSpec"] and len(failures(result["events"])) >= 2, route
        refused[route] = result

    logs = json.dumps([vars(r) for r in caplog.records], default=str)
    printed = capsys.readouterr()
    texts = {
        "good run: execution history": json.dumps(good["events"], default=str),
        "good run: output": json.dumps(good["output"], default=str),
        "handlers' logs": logs,
        "printed": printed.out + printed.err,
        "results bucket": world.all_text(),
        "runner": "\n".join(world.runner_logs),
        "slack": json.dumps([p.body for p in world.slack.posts]),
    }
    for route, result in refused.items():
        texts[f"{route}: error"] = f"{result['error']} {result['cause']}"
        texts[f"{route}: failure events"] = json.dumps(failures(result["events"]), default=str)
    assert "canary-aws-1" in texts["results bucket"] and texts["runner"].strip()  # nothing searched empty
    leaks = [(where, n[:8]) for where, text in texts.items() for n in (*given, CANARY) if n in text]
    assert leaks == []
