"""A long suite's target is never reaped mid-run: its expires-at covers every cell of its target
group, and the janitor deletes an expired resource only when its run's execution has ended."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from benchwright.providers.aws.common import Clients, lifecycle_tags, tag_list, target_ttl_hours
from benchwright.providers.aws.config import AwsSettings
from benchwright.providers.aws.executions import RunningExecutions, execution_names
from benchwright.providers.aws.janitor import leftovers, sweep
from benchwright.providers.aws.names import EXPIRES_TAG, SUITE_TIMEOUT_RUNS
from benchwright.stages.suite import expand
from tests.aws_world import ENV, REGION, rds_spec

ROLE = "arn:aws:iam::123456789012:role/bw-sfn"
WAITS = '{"StartAt": "W", "States": {"W": {"Type": "Wait", "Seconds": 86400, "End": true}}}'


@pytest.fixture
def aws() -> Iterator[tuple[AwsSettings, Clients]]:
    from moto import mock_aws

    mp = pytest.MonkeyPatch()
    for k, v in ENV.items():
        mp.setenv(k, v)
    with mock_aws():
        settings = AwsSettings(region=REGION, owner="tests", ttl_hours=12.0, max_run_hours=8.0)
        yield settings, Clients(settings)
    mp.undo()


def test_a_groups_target_state_counts_its_cells_and_its_ttl_covers_them() -> None:
    spec = rds_spec("grid")
    spec["matrix"] = {"workload.phases.run.threads": [2, 4, 8]}  # one target group, three cells
    (group,) = expand({"spec": spec, "run_id": "suite-1", "poll_seconds": 1})["groups"]
    assert group["target"]["target_cells"] == 3 and all(c["target_cells"] == 1 for c in group["cells"])
    settings = AwsSettings(ttl_hours=12.0, max_run_hours=8.0)
    assert target_ttl_hours(settings, 1) == 12.0
    assert target_ttl_hours(settings, 3) == 12.0 + 2 * 8.0
    # capped by the suite execution's own timeout: after it, the execution is over anyway
    assert target_ttl_hours(settings, 40) == 12.0 + (SUITE_TIMEOUT_RUNS - 1) * 8.0


def test_the_provisioning_state_tags_the_target_with_the_groups_expiry(
    aws: tuple[AwsSettings, Clients], monkeypatch: pytest.MonkeyPatch
) -> None:
    import functions._common as common
    from benchwright.stages import RunState

    settings, _ = aws
    monkeypatch.setattr(common, "_settings", settings)
    monkeypatch.setattr(common, "_clients", None)
    spec = rds_spec("grid")
    spec["matrix"] = {"workload.phases.run.threads": [2, 4, 8, 16]}
    (group,) = expand({"spec": spec, "run_id": "suite-2", "poll_seconds": 1})["groups"]
    before = datetime.now(UTC)
    for state, hours in ((group["target"], 12.0 + 3 * 8.0), (group["cells"][0], 12.0)):
        run = RunState.model_validate(state)
        target = common.providers_for(run).target(run.spec.target, run.run_id, None)
        expires = datetime.strptime(target.tags()[EXPIRES_TAG], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
        assert before + timedelta(hours=hours) - timedelta(seconds=2) <= expires
        assert expires <= datetime.now(UTC) + timedelta(hours=hours)


def _db(clients: Clients, name: str, run_id: str, settings: AwsSettings, age_h: float) -> None:
    tags = lifecycle_tags(settings, run_id, now=datetime.now(UTC) - timedelta(hours=age_h))
    clients("rds").create_db_instance(
        DBInstanceIdentifier=name, Engine="postgres", DBInstanceClass="db.t3.micro", MasterUsername="u",
        MasterUserPassword="p" * 12, AllocatedStorage=20, Tags=tag_list(tags),
    )  # fmt: skip


def test_the_janitor_keeps_an_expired_target_while_its_suite_runs_and_reaps_a_dead_ones(
    aws: tuple[AwsSettings, Clients],
) -> None:
    settings, clients = aws
    sfn = clients("stepfunctions")
    suite = sfn.create_state_machine(name="bw-suite", definition=WAITS, roleArn=ROLE)["stateMachineArn"]
    bench = sfn.create_state_machine(name="bw-bench", definition=WAITS, roleArn=ROLE)["stateMachineArn"]
    long_run = sfn.start_execution(stateMachineArn=suite, name="long-suite")["executionArn"]
    dead = sfn.start_execution(stateMachineArn=bench, name="dead-run")["executionArn"]
    sfn.stop_execution(executionArn=dead)
    _db(clients, "bw-long", "long-suite-003", settings, age_h=20)  # a 20-hour suite's group target
    _db(clients, "bw-dead", "dead-run", settings, age_h=20)
    _db(clients, "bw-lost", "never-started", settings, age_h=20)
    _db(clients, "bw-young", "long-suite-004", settings, age_h=1)

    report = sweep(clients, running=RunningExecutions(clients, [bench, suite]))

    assert report.running == ["rds-instance:bw-long"]
    assert sorted(report.deleted) == ["rds-instance:bw-dead", "rds-instance:bw-lost"]
    assert report.kept == ["rds-instance:bw-young"] and report.unchecked == []
    assert len(leftovers(clients, "long-suite-003")) == 1

    sfn.stop_execution(executionArn=long_run)  # the suite ended (or was cancelled)
    report = sweep(clients, running=RunningExecutions(clients, [bench, suite]))
    assert report.deleted == ["rds-instance:bw-long"] and leftovers(clients, "long-suite-003") == []


def test_without_an_answer_from_step_functions_the_tag_decides(aws: tuple[AwsSettings, Clients]) -> None:
    from botocore.stub import Stubber

    settings, clients = aws
    _db(clients, "bw-old", "old-run", settings, age_h=20)
    machine = f"arn:aws:states:{REGION}:123456789012:stateMachine:bw-suite"
    with Stubber(clients("stepfunctions")) as stub:
        stub.add_client_error("describe_execution", "AccessDeniedException", "not allowed")
        report = sweep(clients, running=RunningExecutions(clients, [machine]))
    # a leak costs money and raises the alarm; a policy mistake must not keep every resource forever
    assert report.unchecked == ["rds-instance:bw-old"] and report.deleted == ["rds-instance:bw-old"]


def test_a_suite_cells_execution_is_its_suites() -> None:
    assert execution_names("20261122-020000-a1b2c3-007") == [
        "20261122-020000-a1b2c3-007",
        "20261122-020000-a1b2c3",
    ]
    assert execution_names("20261122-020000-a1b2c3") == ["20261122-020000-a1b2c3"]
