"""The benchmark state machine, EXECUTED by moto's Step Functions interpreter with the real handlers:
the runs that go through (with a wait loop, operations, history, an invalid result).

Given a moto account (tests/aws_world.py), when a run goes through the workflow, then every stage ran
in order, the record holds what the real runner measured, and no resource tagged with the run id is
left. The failure paths are test_benchmark_failures.py's (one module per pytest-xdist worker at once).
"""

from __future__ import annotations

import json
import re

import pytest

from tests.aws_world import (
    REGION,
    World,
    entered,
    rds_spec,
    run_input,
    run_record,
    ysql_at_world,
    yugabyte_spec,
)

# Executions here run real runners one after another (up to four in a test): a minute or two on a quiet
# machine, several on a loaded one. The project's 300 s per test would fail them for being slow; this
# only bounds a hang (World.execute stops an execution after 600 s).
pytestmark = pytest.mark.timeout(1200)

MAX_TRANSITIONS = 60


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
