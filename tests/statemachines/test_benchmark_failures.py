"""The benchmark state machine, EXECUTED by moto's Step Functions interpreter with the real handlers:
a failure injected at a stage, retried errors, a runner that fails, a target never reachable, Slack
down, and what must never leak.

Given a moto account (tests/aws_world.py), when a run fails somewhere in the workflow, then the
outcome is the expected one, Teardown ran, the record says why, and no resource tagged with the run id
is left. The runs that go through are test_benchmark_workflow.py's.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from benchwright.errors import (
    IngestFailed,
    ProvisioningFailed,
    RetryableIngestError,
    RunnerFailed,
)
from tests.aws_world import World, rds_spec, run_input, run_record

# Executions here run real runners (two in a test at most): seconds on a quiet machine, a minute or
# more on a loaded one. The project's 300 s per test would fail them for being slow; this only bounds
# a hang (World.execute stops an execution after 600 s).
pytestmark = pytest.mark.timeout(1200)


def once(error: Exception) -> Any:
    """A fault that fires on the first call only (a transient failure)."""
    fired: list[bool] = []

    def fault(event: dict[str, Any]) -> None:
        if not fired:
            fired.append(True)
            raise error

    return fault


def test_invalid_spec_fails_at_the_edge_and_creates_nothing(world: World) -> None:
    spec = rds_spec(instance_class="m6i.large")  # not db.*: the spec model rejects it

    result = world.execute("benchmark", run_input(spec, "invalid-1"))

    assert result["status"] == "FAILED"
    assert result["error"] == "SpecError"
    assert world.calls == ["ValidateSpec"]
    assert (
        world.clients("rds").describe_db_instances()["DBInstances"] == []
        or world.leftovers("invalid-1") == []
    )
    assert "instance_class" in (result["cause"] or "")


@pytest.mark.parametrize(
    ("stage", "error"),
    [
        ("ProvisionTarget", ProvisioningFailed("rds: InvalidParameterCombination: bad instance class")),
        ("CheckTarget", ProvisioningFailed("rds instance: failed")),
        ("LaunchRunner", RunnerFailed("ecs run_task: no task")),
        ("CheckRunner", RunnerFailed("task exited 1")),
        ("CollectMetrics", IngestFailed("cloudwatch: AccessDenied")),
        ("JudgeResults", ValueError("judge crashed")),
        # the S3 write itself (the record is the truth); a refused sink write is only a warning (below)
        ("StoreResults", IngestFailed("s3 put s3://bw-results-test/runs/x/record.json: AccessDenied")),
        ("PriceRun", ProvisioningFailed("no price")),
    ],
    ids=lambda v: v if isinstance(v, str) else type(v).__name__,
)
def test_a_failure_at_any_stage_tears_down_and_fails_the_run(
    world: World, stage: str, error: Exception
) -> None:
    run_id = f"fail-{stage.lower()}"
    world.faults[stage] = error

    result = world.execute("benchmark", run_input(rds_spec(), run_id))

    assert result["status"] == "FAILED"
    assert result["error"] == "RunFailed"
    assert world.calls[-2:] == ["Teardown", "FinishRun"]
    assert world.leftovers(run_id) == []
    record = run_record(world, run_id)
    assert record["status"] == "failed"
    assert record["error"].startswith(type(error).__name__)
    assert len(world.slack.posts) == 1  # the failure is announced too


def test_throttling_while_provisioning_is_retried_and_the_run_succeeds(world: World) -> None:
    calls = world.aws_error("rds", "CreateDBInstance", "Throttling", times=1)

    result = world.execute("benchmark", run_input(rds_spec(), "throttle-1"))

    assert result["status"] == "SUCCEEDED", result["cause"]
    assert world.calls.count("ProvisionTarget") == 2  # the ASL retried RetryableProvisioningError
    assert len(calls) == 2


def test_throttling_that_never_ends_is_bounded_then_torn_down(world: World) -> None:
    world.aws_error("rds", "CreateDBInstance", "Throttling")

    result = world.execute("benchmark", run_input(rds_spec(), "throttle-2"))

    assert result["status"] == "FAILED"
    assert world.calls.count("ProvisionTarget") == 5  # 1 + MaxAttempts 4
    assert world.calls[-2:] == ["Teardown", "FinishRun"]
    assert run_record(world, "throttle-2")["error"].startswith("RetryableProvisioningError")
    assert world.leftovers("throttle-2") == []  # the parameter group made before the failure is gone too


def test_a_quota_failure_is_not_retried(world: World) -> None:
    world.aws_error("rds", "CreateDBInstance", "InstanceQuotaExceeded")

    result = world.execute("benchmark", run_input(rds_spec(), "quota-1"))

    assert result["status"] == "FAILED"
    assert world.calls.count("ProvisionTarget") == 1
    assert "InstanceQuotaExceeded" in run_record(world, "quota-1")["error"]
    assert world.leftovers("quota-1") == []


def test_a_refused_sink_write_is_a_warning_and_the_run_keeps_its_status_and_cost(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Timestream refuses every write (its table does not exist): the run still succeeds, PriceRun
    prices it, and the record says what the sink answered."""
    import functions._common as common

    database = "bw-missing"
    settings = world.settings.model_copy(update={"sink": "timestream", "timestream_database": database})
    monkeypatch.setattr(common, "_settings", settings)
    monkeypatch.setattr(common, "_clients", None)

    result = world.execute("benchmark", run_input(rds_spec(), "sink-refused-1"))

    assert result["status"] == "SUCCEEDED", (result["error"], result["cause"], world.calls)
    assert world.calls[-4:] == ["StoreResults", "PriceRun", "Teardown", "FinishRun"]
    assert world.calls.count("StoreResults") == 1  # a refusal is not retried as if transient
    record = run_record(world, "sink-refused-1")
    assert record["status"] == "succeeded"
    assert record["cost"]["total"] > 0 and record["cells"][0]["cost"]["total"] > 0
    (warning,) = record["warnings"]
    assert warning["code"] == "sink_failed"
    assert "IngestFailed" in warning["message"] and database in warning["message"]
    assert record["cells"][0]["phases"]["run"]["operations_total"] == 2000
    assert world.leftovers("sink-refused-1") == []


def test_a_transient_ingest_failure_is_retried_without_losing_the_document(world: World) -> None:
    world.faults["StoreResults"] = once(RetryableIngestError("timestream: ThrottlingException (transient)"))

    result = world.execute("benchmark", run_input(rds_spec(), "ingest-1"))

    assert result["status"] == "SUCCEEDED", result["cause"]
    assert world.calls.count("StoreResults") == 2
    assert run_record(world, "ingest-1")["cells"][0]["phases"]["run"]["operations_total"] == 2000


@pytest.mark.parametrize("mode", ["fail", "never_start"])
def test_a_runner_that_fails_or_never_starts_fails_the_run_after_teardown(world: World, mode: str) -> None:
    world.runner_mode = mode
    run_id = f"runner-{mode}"

    result = world.execute("benchmark", run_input(rds_spec(), run_id))

    assert result["status"] == "FAILED"
    assert "CheckRunner" in world.calls and world.calls[-2:] == ["Teardown", "FinishRun"]
    assert world.leftovers(run_id) == []
    record = run_record(world, run_id)
    assert record["error"].startswith("RunnerFailed")
    if mode == "never_start":
        assert "CannotPullContainerError" in record["error"]
    else:  # the real runner was refused by the database and said so in its output
        assert "password authentication failed" in record["error"], record["error"]


def test_a_database_that_never_becomes_reachable_times_out_then_tears_down(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dataclasses import replace

    from benchwright.providers.aws.targets.kinds.rds.spec import RdsTarget

    monkeypatch.setattr(RdsTarget, "facts", replace(RdsTarget.facts, ready_timeout_s=0.0))
    world.faults["unreachable"] = True

    result = world.execute("benchmark", run_input(rds_spec(), "unreachable-1"))

    assert result["status"] == "FAILED"
    assert run_record(world, "unreachable-1")["error"].startswith("TargetNotReady")
    assert world.leftovers("unreachable-1") == []


def test_slack_down_does_not_fail_the_run(world: World, caplog: pytest.LogCaptureFixture) -> None:
    world.slack.down = 500

    result = world.execute("benchmark", run_input(rds_spec(), "slack-1"))

    assert result["status"] == "SUCCEEDED", result["cause"]
    assert world.slack.requests == 1 and world.slack.posts == []  # it was tried
    assert "notification failed: NotifyFailed: slack: webhook answered HTTP 500" in caplog.text
    assert world.leftovers("slack-1") == []


def test_no_secret_reaches_state_logs_or_results(
    world: World, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    world.faults["CheckRunner"] = RunnerFailed("boom")
    results = [world.execute("benchmark", run_input(rds_spec(), "secrets-1"))]
    world.reset()
    results.append(world.execute("benchmark", run_input(rds_spec(), "secrets-2")))

    logs = json.dumps([vars(r) for r in caplog.records], default=str)
    text = (
        json.dumps([r["events"] for r in results], default=str)
        + capsys.readouterr().out
        + logs
        + world.all_text()
        + "\n".join(world.runner_logs)
    )
    assert len(world.secrets) >= 2  # the Slack webhook token and at least one RDS-managed password
    assert world.runner_runs >= 1 and world.runner_logs  # the real runner read and used the secret
    for secret in world.secrets:
        assert secret not in text


def test_a_failed_runner_logs_each_pending_event_as_not_issued(world: World) -> None:
    """CheckRunner raises on the failed runner, so the Catch carries the poll before (no event closed);
    Teardown closes the schedule: every event still to come is logged as not issued, with the reason."""
    world.runner_mode = "fail"
    spec = rds_spec("events-fail")
    spec["events"] = [{"at_s": 30, "action": "reboot"}, {"at_s": 60, "action": "reboot"}]

    result = world.execute("benchmark", run_input(spec, "events-fail"))

    assert result["status"] == "FAILED"
    exited = [
        json.loads(e["stateExitedEventDetails"]["output"])
        for e in result["events"]
        if e.get("stateExitedEventDetails", {}).get("name") == "Teardown"
    ]
    (after_teardown,) = exited
    log = after_teardown["event_log"]
    assert [(e["action"], e["at_s"], e["issued_at"]) for e in log] == [
        ("reboot", 30, None),
        ("reboot", 60, None),
    ]
    assert all(e["detail"] == "not issued: the run stopped first (RunnerFailed)" for e in log), log
    assert world.leftovers("events-fail") == []
