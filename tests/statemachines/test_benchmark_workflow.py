"""The benchmark state machine, EXECUTED by moto's Step Functions interpreter with the real handlers.

Given a moto account (tests/aws_world.py), when a run goes through the workflow -- happily
or with a failure injected at a stage -- then the outcome is the expected one, Teardown ran, and no
resource tagged with the run id is left.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from benchwright.errors import (
    IngestFailed,
    ProvisioningFailed,
    RetryableIngestError,
    RunnerFailed,
)
from tests.aws_world import REGION, World, rds_spec, run_input, ysql_at_world, yugabyte_spec

# Executions here run real runners one after another (up to four in a test): a minute or two on a quiet
# machine, several on a loaded one. The project's 300 s per test would fail them for being slow; this
# only bounds a hang (World.execute stops an execution after 600 s).
pytestmark = pytest.mark.timeout(1200)

MAX_TRANSITIONS = 60


def entered(result: dict[str, Any]) -> list[str]:
    return [e[k]["name"] for e in result["events"] for k in e if k == "stateEnteredEventDetails"]


def run_record(world: World, run_id: str) -> dict[str, Any]:
    body = world.clients("s3").get_object(
        Bucket=world.settings.results_bucket, Key=f"runs/{run_id}/record.json"
    )
    return json.loads(body["Body"].read())


def once(error: Exception) -> Any:
    """A fault that fires on the first call only (a transient failure)."""
    fired: list[bool] = []

    def fault(event: dict[str, Any]) -> None:
        if not fired:
            fired.append(True)
            raise error

    return fault


def test_happy_path_runs_every_stage_in_order_and_leaves_nothing(world: World) -> None:
    result = world.execute("benchmark", run_input(rds_spec(), "happy-1"))

    assert result["status"] == "SUCCEEDED", (result["error"], result["cause"], world.calls)
    assert world.calls == [
        "ValidateSpec",
        "ProvisionTarget",
        "CheckTarget",
        "LaunchRunner",
        "CheckRunner",
        "CollectMetrics",
        "JudgeResults",
        "StoreResults",
        "PriceRun",
        "Teardown",
        "FinishRun",
    ]
    assert 11 < len(entered(result)) <= MAX_TRANSITIONS
    assert result["output"]["status"] == "succeeded" and result["output"]["torn_down"] is True
    assert world.leftovers("happy-1") == []
    record = run_record(world, "happy-1")
    assert record["status"] == "succeeded"
    assert world.runner_runs == 1  # the real runner, against the stand-in PostgreSQL
    assert record["cells"][0]["phases"]["run"]["operations_total"] == 2000
    assert record["cells"][0]["phases"]["run"]["engine"] == "postgres"
    # a new instance's database is empty: every insert of the load succeeded
    assert record["cells"][0]["phases"]["load"]["operations"]["INSERT"]["statuses"] == {"OK": 1000}
    assert record["cells"][0]["cost"]["total"] > 0
    assert record["cells"][0]["cost"]["monthly_nightly"] == pytest.approx(
        record["cells"][0]["cost"]["total"] * 30, rel=1e-3
    )
    assert len(world.slack.posts) == 1 and world.slack.refused == []
    message = world.slack.posts[0].body
    text = json.dumps(message)
    assert message["text"].startswith("rds-pg-ycsb happy-1: succeeded, verdict")
    assert ":hourglass:" not in text and "running" not in message["text"]
    assert "ops/$" in text  # cost and ops per dollar of the run
    link = re.search(r"<(http[^|>]+)\|open the report>", text)
    assert link is not None and "X-Amz-Signature=" in link[1]  # a presigned S3 URL of the report
    assert record["report"] == f"s3://{world.settings.results_bucket}/runs/happy-1/report.html"
    assert record["environment"]["notification"] == "sent"
    html = world.clients("s3").get_object(
        Bucket=world.settings.results_bucket, Key="runs/happy-1/report.html"
    )
    assert html["ContentType"].startswith("text/html") and b"happy-1" in html["Body"].read()


def test_a_measured_run_launches_one_pinned_ec2_runner_in_the_targets_az_and_labels_it(world: World) -> None:
    """Issue 27 part 1: a spec that names no runner class is measured: LaunchRunner starts one EC2
    instance of the default pinned type in the target's AZ (the real runner, from its user-data),
    the result's fingerprint says measured on that type, and the cost prices that instance."""
    spec = rds_spec("rds-measured")
    spec["runner"] = {"placement": "same-az"}
    result = world.execute("benchmark", run_input(spec, "measured-1"))

    assert result["status"] == "SUCCEEDED", (result["error"], result["cause"], world.calls)
    assert world.runner_runs == 1  # the real runner, started from the instance's docker run line
    reservations = world.clients("ec2").describe_instances(
        Filters=[{"Name": "tag:benchwright:run-id", "Values": ["measured-1"]}]
    )["Reservations"]
    runners = [i for r in reservations for i in r["Instances"]]
    assert [(i["InstanceType"], i["Placement"]["AvailabilityZone"]) for i in runners] == [
        ("c6i.large", f"{REGION}a")
    ]
    record = run_record(world, "measured-1")
    fingerprint = record["cells"][0]["phases"]["run"]["fingerprint"]
    assert (fingerprint["runner_class"], fingerprint["runner_platform"], fingerprint["instance_type"]) == (
        "measured",
        "ec2",
        "c6i.large",
    )
    assert fingerprint["runner_az"] == f"{REGION}a"
    assert record["cells"][0]["cost"]["items"].get("ec2 runner 1 x c6i.large", 0) > 0
    assert not any(k.startswith("fargate") for k in record["cells"][0]["cost"]["items"])
    assert world.leftovers("measured-1") == []


def test_a_run_is_judged_against_the_s3_history(world: World) -> None:
    spec = rds_spec("rds-history")
    for i in range(1, 5):
        result = world.execute("benchmark", run_input(spec, f"history-{i}"))
        assert result["status"] == "SUCCEEDED", result["cause"]

    assert run_record(world, "history-1")["verdict"]["kind"] == "no_history"
    assert run_record(world, "history-2")["verdict"]["kind"] != "no_history"  # history-1 was found in S3
    verdict = run_record(world, "history-4")["verdict"]
    assert verdict["kind"] != "no_history"  # judged against history-1..3 in S3
    assert f"*{verdict['kind'].replace('_', ' ')}*" in json.dumps(world.slack.posts[-1].body)
    assert len(world.slack.posts) == 4


def test_notify_on_failure_sends_nothing_for_a_run_that_succeeded(world: World) -> None:
    spec = rds_spec("rds-quiet")
    spec["notify"] = {"on": "failure"}

    result = world.execute("benchmark", run_input(spec, "quiet-1"))

    assert result["status"] == "SUCCEEDED", result["cause"]
    assert world.slack.requests == 0
    assert run_record(world, "quiet-1")["environment"]["notification"] == "skipped (notify.on: failure)"


def test_wait_loop_polls_until_the_database_accepts_connections(world: World) -> None:
    world.ready_after = 2  # RDS says "available" at once in moto; the probe refuses twice

    result = world.execute("benchmark", run_input(rds_spec(), "wait-1"))

    assert result["status"] == "SUCCEEDED", result["cause"]
    assert world.calls.count("CheckTarget") == 3
    assert entered(result).count("WaitForTarget") == 3


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

    from benchwright.spec import RdsTarget

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


def test_operations_are_stepped_after_the_runner_timed_and_leave_nothing(world: World) -> None:
    """CheckOperations runs between CheckRunner and CollectMetrics, one step per poll (snapshot,
    restore, probe), and both operations land next to the workload's results; the snapshot and the
    restored instances are deleted (moto's restored instances are the world's PostgreSQL, so the
    probe's count is the loaded table's)."""
    spec = rds_spec("ops-1", backup_retention_days=1)
    spec["operations"] = ["snapshot_restore", "pitr"]

    result = world.execute("benchmark", run_input(spec, "ops-1"))

    assert result["status"] == "SUCCEEDED", (result["error"], result["cause"], world.calls)
    first, last = (
        world.calls.index("CheckOperations"),
        len(world.calls) - 1 - world.calls[::-1].index("CheckOperations"),
    )
    assert world.calls[first - 1] == "CheckRunner" and world.calls[last + 1] == "CollectMetrics", world.calls
    assert world.calls.count("CheckOperations") >= 4  # start, restore, probe ... per operation
    run = run_record(world, "ops-1")["cells"][0]["phases"]["run"]
    ops = run["timed_operations"]
    assert [o["name"] for o in ops] == ["snapshot_restore", "pitr"], ops
    for op in ops:
        assert (
            op["ok"] is True and op["seconds"] >= 0 and "rows in the user tables, as before" in op["detail"]
        ), op
    assert "RestoreDBInstanceFromDBSnapshot" in ops[0]["detail"]
    assert "RestoreDBInstanceToPointInTime" in ops[1]["detail"]
    assert world.leftovers("ops-1") == []
    rds = world.clients("rds")
    names = [d["DBInstanceIdentifier"] for d in rds.describe_db_instances()["DBInstances"]]
    assert not [n for n in names if n.endswith(("-snap", "-pitr"))], names
    assert not [
        s for s in rds.describe_db_snapshots()["DBSnapshots"] if s["DBSnapshotIdentifier"].endswith("-snap")
    ]


def test_node_replace_is_stepped_through_the_workflow_and_teardown_terminates_the_replacement(
    world: World,
) -> None:
    """A YugabyteDB cluster on EC2: CheckOperations launches a replacement at a new address, probes
    through it, blacklists the old node's tserver (yb-admin over SSM), waits for the load move, then
    terminates the old node and unblacklists it; Teardown terminates the replacement."""
    spec = yugabyte_spec("nr-1")
    spec["operations"] = ["node_replace"]

    with ysql_at_world(world) as asked:
        result = world.execute("benchmark", run_input(spec, "nr-1"))

    assert result["status"] == "SUCCEEDED", (result["error"], result["cause"], world.calls)
    # launch, running, serving, blacklisted, load move 100 %, terminated, unblacklisted
    assert world.calls.count("CheckOperations") >= 7, world.calls
    (op,) = run_record(world, "nr-1")["cells"][0]["phases"]["run"]["timed_operations"]
    assert op["name"] == "node_replace" and op["ok"] is True, op
    clocked = {"launch_s", "ready_s", "blacklist_s", "rereplicate_s"}
    assert set(op["steps"]) == clocked | {"serving_s", "terminate_s"}, op
    assert abs(op["seconds"] - sum(op["steps"][k] for k in clocked)) < 0.01, op
    assert "rows in the user tables, as before" in op["detail"], op
    assert len(asked) >= 2 and asked[0] != asked[-1] and asked[-1].endswith(":5433"), asked
    assert f"probe through the new node at {asked[-1]}" in op["detail"], op
    old = op["detail"].split("change_blacklist ADD ", 1)[1].split(";", 1)[0]
    assert asked.yb.said == [f"change_blacklist ADD {old}", "get_load_move_completion",
                             f"change_blacklist REMOVE {old}"], asked.yb.said  # fmt: skip
    assert old.endswith(":9100") and old.split(":")[0] != asked[-1].split(":")[0]  # never the new node
    ec2 = world.clients("ec2")
    tagged = ec2.describe_instances(Filters=[{"Name": "tag:benchwright:run-id", "Values": ["nr-1"]}])
    states = [i["State"]["Name"] for r in tagged["Reservations"] for i in r["Instances"]]
    assert len(states) == 4 and set(states) <= {"shutting-down", "terminated"}, states  # 3 + replacement
    assert world.leftovers("nr-1") == []


def test_a_spec_without_operations_skips_the_operations_loop(world: World) -> None:
    result = world.execute("benchmark", run_input(rds_spec(), "no-ops-1"))
    assert result["status"] == "SUCCEEDED", result["cause"]
    assert "CheckOperations" not in world.calls


def test_an_invalid_run_is_stored_reported_torn_down_and_ends_in_run_invalid(world: World) -> None:
    """The runner's run phase had 5 % failed operations (over the 1 % the policy allows): the results
    are stored and announced, everything is torn down, and the execution ends in RunInvalid (never
    SUCCEEDED); the record says how many cells and why."""
    world.recorded_errors["default"] = 0.05
    result = world.execute("benchmark", run_input(yugabyte_spec("inv-1"), "inv-1"))

    assert (result["status"], result["error"]) == ("FAILED", "RunInvalid"), (result["cause"], world.calls)
    assert world.calls[-2:] == ["Teardown", "FinishRun"] and "JudgeResults" in world.calls
    assert world.leftovers("inv-1") == []
    record = run_record(world, "inv-1")
    assert record["status"] == "invalid"
    assert record["error"].startswith("invalid: 1 of 1 cell (default: run error_rate: 100 of 2000 operations")
    assert record["report"] == f"s3://{world.settings.results_bucket}/runs/inv-1/report.html"
    html = world.clients("s3").get_object(Bucket=world.settings.results_bucket, Key="runs/inv-1/report.html")
    assert b'<span class="badge invalid" id="status">invalid: 1 of 1 cell</span>' in html["Body"].read()
    assert len(world.slack.posts) == 1 and world.slack.refused == []
    message = world.slack.posts[0].body
    assert message["text"].startswith("inv-1 inv-1: invalid: 1 of 1 cell")  # spec name, run id: status
    assert message["attachments"][0]["color"] == "#e8912d"
