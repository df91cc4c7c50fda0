"""Every AWS call a stage handler really makes is allowed by that handler's IAM role.

The workflow runs in moto with the real handlers (tests/aws_world.py) while every botocore
call is recorded with the handler that made it; the synthesized stack then has to grant each
(handler, service:operation) pair through an action of that Lambda's role. This is what catches a
stage that starts calling something new (a report upload, a sink write, a Slack secret read) without
its role following. Resources and conditions are held to account by test_stack's tag tests.

A call made through a run session (Teardown's and CheckOperations' deletes and secret reads, the
stages' calls on their run's own objects: providers/aws/run_session.py) is recorded as
``<handler> as <run role>`` and must be granted by that run-scoped role, not by the handler's own;
an S3 call through one is evaluated with the session's run tag, so it must fall in its own run's
prefix.
"""

from __future__ import annotations

import fnmatch
import importlib
import re
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from tests.aws_world import FakeContext, World, rds_spec, run_input, ysql_at_world, yugabyte_spec
from tests.infra.test_stack import SUITE, _with_node, actions_of, resources, statements_of, synth

# botocore service name -> IAM service prefix (where they differ or need stating)
IAM_PREFIX = {
    "timestream-write": "timestream",
    "timestream-query": "timestream",
    "resourcegroupstaggingapi": "tag",
    "stepfunctions": "states",
    "cloudwatch": "cloudwatch",
    "pricing": "pricing",
}
# a call that deletes, stops or terminates something (no stage's own role may make one but the sweepers)
DESTROYS = re.compile(r"^[a-z0-9-]+:(Delete|Terminate|Stop)(?!Object)")
# operations whose IAM action has another name
IAM_ACTION = {
    ("s3", "HeadObject"): "s3:GetObject",
    ("s3", "ListObjectsV2"): "s3:ListBucket",
    ("s3", "ListObjects"): "s3:ListBucket",
    ("s3", "HeadBucket"): "s3:ListBucket",
}


def iam_action(service: str, operation: str) -> str:
    return IAM_ACTION.get((service, operation), f"{IAM_PREFIX.get(service, service)}:{operation}")


def allowed(action: str, granted: set[str]) -> bool:
    """IAM matches actions case-insensitively, with ``*`` wildcards."""
    return any(fnmatch.fnmatchcase(action.lower(), g.lower()) for g in granted)


def run_role_of(client: Any) -> str | None:
    """The run-scoped role a client signs as (its credentials' method names it), else None."""
    from benchwright.runner.aws_session import SESSION_METHOD

    method = str(getattr(client._request_signer._credentials, "method", ""))
    return method.rsplit("/", 1)[-1] if method.startswith(SESSION_METHOD) else None


def run_tag_of(client: Any) -> str:
    """The run a run session's client is tagged with (the AssumeRole arguments it refreshes with)."""
    fetch = client._request_signer._credentials._refresh_using.__self__
    (tag,) = [t["Value"] for t in fetch._assume_kwargs["Tags"] if t["Key"] == "benchwright:run-id"]
    return str(tag)


def run_role_statements(doc: dict[str, Any], role: str) -> list[dict[str, Any]]:
    """Every statement of the stack's run-scoped role ``role`` (the world's role names are the
    stack's logical ids without the ``Isolation`` prefix and the hash)."""
    (logical,) = [k for k in resources(doc, "AWS::IAM::Role") if k.startswith(f"Isolation{role}")]
    return [
        statement
        for policy in resources(doc, "AWS::IAM::Policy").values()
        if {"Ref": logical} in policy["Properties"]["Roles"]
        for statement in policy["Properties"]["PolicyDocument"]["Statement"]
    ]


# handler -> (IAM action, S3 ARN, the session's run tag or "") of each S3 call, filled by the
# ``recorded`` fixture's workflow
OBJECTS: dict[str, set[tuple[str, str, str]]] = {}
# the stages whose calls on their run's objects go through a ResultsRunRole session (RUN_SCOPED)
RESULTS_STAGES = {"launch_runner", "check_runner", "collect_metrics", "judge_results", "store_results",
                  "price_run", "finish_run", "summarize_suite"}  # fmt: skip


class Recorder:
    """(handler, IAM action) of every botocore call made while a handler runs, in any thread."""

    def __init__(self, world: World) -> None:
        self.world = world
        self.local = threading.local()
        self.calls: dict[str, set[str]] = {}
        self.objects: dict[str, set[tuple[str, str, str]]] = {}  # handler -> (action, S3 ARN, run tag)
        self.lock = threading.Lock()

    def note(self, client: Any, operation: str, params: Any = None) -> None:
        handler = getattr(self.local, "handler", None)
        if handler is None or client in self.world.clients._clients.values():
            return  # the test world's own calls (runners' outputs, secret scans) are not the handler's
        role = run_role_of(client)
        handler = f"{handler} as {role}" if role else handler
        action = iam_action(client.meta.service_model.service_name, operation)
        with self.lock:
            self.calls.setdefault(handler, set()).add(action)
            if action.startswith("s3:") and isinstance(params, dict) and "Bucket" in params:
                key = params.get("Key")
                arn = f"arn:aws:s3:::{params['Bucket']}" + (f"/{key}" if key else "")
                self.objects.setdefault(handler, set()).add((action, arn, run_tag_of(client) if role else ""))

    def run(self, handler: str, fn: Any, *args: Any) -> Any:
        self.local.handler = handler
        try:
            return fn(*args)
        finally:
            self.local.handler = None


@pytest.fixture(scope="module")
def recorded(aws_world: World) -> Iterator[dict[str, set[str]]]:
    """Run the workflow over every target kind, a failure, a suite and the janitor, recording calls."""
    import botocore.client
    import yaml

    from benchwright.providers.aws.common import lifecycle_tags, tag_list
    from benchwright.stages.suite import expand
    from functions import HANDLERS
    from tests.statemachines.test_seed_experiments_aws import EXAMPLES, for_moto

    world = aws_world
    world.reset()
    recorder = Recorder(world)
    original_call = botocore.client.BaseClient._make_api_call
    original_invoke = world.invoke

    def make_api_call(client: Any, operation: str, params: Any) -> Any:
        recorder.note(client, operation, params)
        return original_call(client, operation, params)

    def invoke(name: str, event: dict[str, Any]) -> tuple[bool, dict[str, Any]]:
        return recorder.run(HANDLERS[name], original_invoke, name, event)

    mp = pytest.MonkeyPatch()
    mp.setattr(botocore.client.BaseClient, "_make_api_call", make_api_call)
    mp.setattr(world, "invoke", invoke)
    try:
        outcomes = []
        for path in EXAMPLES:  # one cell of every seed experiment: every target kind and runner kind
            data = yaml.safe_load(path.read_text())
            for spec in data.get("benchmarks", [data]):
                cell = expand({"spec": for_moto(spec), "run_id": f"iam-{spec['name']}", "poll_seconds": 0})
                outcomes.append(world.execute("benchmark", cell["groups"][0]["target"])["status"])
        # the LiveAnalytics sink, as the template below is synthesized: StoreResults really ingests
        import functions._common as common

        world.clients("timestream-write").create_database(DatabaseName="bw-iam")
        world.clients("timestream-write").create_table(DatabaseName="bw-iam", TableName="results")
        sink = {"sink": "timestream", "timestream_database": "bw-iam", "timestream_table": "results"}
        with pytest.MonkeyPatch.context() as sink_mp:
            sink_mp.setattr(common, "_settings", world.settings.model_copy(update=sink))
            sink_mp.setattr(common, "_clients", None)
            outcomes.append(world.execute("benchmark", run_input(rds_spec("iam-sink"), "iam-sink"))["status"])
        common._clients = None
        ops = rds_spec("iam-ops", backup_retention_days=1)  # CheckOperations: snapshots and restores
        ops["operations"] = ["snapshot_restore", "pitr"]
        outcomes.append(world.execute("benchmark", run_input(ops, "iam-ops"))["status"])
        replace = yugabyte_spec("iam-node-replace")  # CheckOperations: terminate a node, launch another
        replace["operations"] = ["node_replace"]
        with ysql_at_world(world):
            outcomes.append(world.execute("benchmark", run_input(replace, "iam-node-replace"))["status"])
        world.runner_mode = "fail"  # the failure path: Teardown announces the failed run
        outcomes.append(world.execute("benchmark", run_input(rds_spec("iam-fail"), "iam-fail"))["status"])
        world.runner_mode = "ok"
        suite = rds_spec("iam-suite")
        suite["matrix"] = {"workload.phases.run.threads": [1, 2]}
        outcomes.append(
            world.execute("suite", {"spec": suite, "run_id": "iam-suite", "poll_seconds": 0})["status"]
        )
        assert outcomes[-2:] == ["FAILED", "SUCCEEDED"] and set(outcomes[:-2]) == {"SUCCEEDED"}, outcomes

        # the janitor, scheduled and for one run (the API's cancel), with something to delete each time
        janitor = importlib.import_module("functions.janitor").handler
        old = lifecycle_tags(world.settings, "iam-old", now=datetime.now(UTC) - timedelta(days=1))
        for name, tags in (
            ("bw-iam-old", old),
            ("bw-iam-cancel", lifecycle_tags(world.settings, "iam-cancel")),
        ):
            world.clients("rds").create_db_instance(
                DBInstanceIdentifier=name, Engine="postgres", DBInstanceClass="db.t3.micro",
                MasterUsername="u", MasterUserPassword="p" * 12, AllocatedStorage=20, Tags=tag_list(tags),
            )  # fmt: skip
        swept = recorder.run("functions.janitor.handler", janitor, {}, FakeContext())
        cancelled = recorder.run(
            "functions.janitor.handler", janitor, {"run_id": "iam-cancel"}, FakeContext()
        )
        assert "rds-instance:bw-iam-old" in swept["deleted"], swept
        assert cancelled["deleted"] == ["rds-instance:bw-iam-cancel"], cancelled
        OBJECTS.clear()
        OBJECTS.update(recorder.objects)
        yield recorder.calls
    finally:
        mp.undo()
        world.reset()


@pytest.fixture(scope="module")
def template() -> dict[str, Any]:
    _with_node()
    return synth({"schedule": {"suite": [SUITE]}, "sink": {"kind": "liveanalytics"}}, nag=False)


def test_every_stage_handler_was_exercised(recorded: dict[str, set[str]]) -> None:
    from functions import HANDLERS, JANITOR_HANDLER

    silent = {"functions.validate_spec.handler", "functions.expand_matrix.handler"}  # pure stages
    assert set(HANDLERS.values()) | {JANITOR_HANDLER} <= set(recorded) | silent
    assert not (silent & set(recorded)), "a pure stage started calling AWS: give it a role"


def test_every_call_of_a_handler_is_granted_to_its_role(
    recorded: dict[str, set[str]], template: dict[str, Any]
) -> None:
    missing = {}
    for handler, actions in sorted(recorded.items()):
        handler, _, role = handler.partition(" as ")
        module = handler.removeprefix("functions.").rsplit(".", 1)[0]
        statements = run_role_statements(template, role) if role else statements_of(template, module)
        granted = actions_of(statements)
        lacking = sorted(a for a in actions if not allowed(a, granted))
        if lacking:
            missing[module] = lacking
    assert not missing, missing


def test_the_stages_that_write_report_sink_and_announce_failures_make_those_calls(
    recorded: dict[str, set[str]],
) -> None:
    """The recording is real: the calls this suite is about show up under the right handler."""
    assert "s3:PutObject" in recorded["functions.store_results.handler"]  # the record
    assert "s3:PutObject" in recorded["functions.finish_run.handler"]  # final record + report.html
    assert "secretsmanager:GetSecretValue" in recorded["functions.finish_run.handler"]  # Slack
    assert "rds:DeleteDBInstance" in recorded["functions.janitor.handler"]
    assert "ecs:RunTask" in recorded["functions.launch_runner.handler"]
    operations = recorded["functions.check_operations.handler"]
    assert {"rds:CreateDBSnapshot", "rds:RestoreDBInstanceFromDBSnapshot", "rds:RestoreDBInstanceToPointInTime",
            "ec2:RunInstances", "ec2:DescribeInstances", "ec2:CreateNetworkInterface",
            "ssm:SendCommand", "ssm:GetCommandInvocation", "sts:AssumeRole"} <= operations, operations  # fmt: skip
    # what reads a run's secret or deletes goes through the run's session, never the stage's own role
    as_run = recorded["functions.check_operations.handler as OperationsRunRole"]
    assert {"rds:DeleteDBSnapshot", "rds:DeleteDBInstance", "secretsmanager:GetSecretValue",
            "ec2:TerminateInstances"} <= as_run, as_run  # fmt: skip
    for stage in RESULTS_STAGES:  # their run's objects: through its ResultsRunRole session
        assert "sts:AssumeRole" in recorded[f"functions.{stage}.handler"], stage
        assert "s3:PutObject" in recorded[f"functions.{stage}.handler as ResultsRunRole"], stage
    torn = recorded["functions.teardown.handler as TeardownRunRole"]
    assert {"rds:DeleteDBInstance", "ec2:TerminateInstances", "ec2:DeleteNetworkInterface"} <= torn, torn
    assert "sts:AssumeRole" in recorded["functions.teardown.handler"]
    for handler, actions in recorded.items():  # the sweepers serve runs whose state is lost
        if " as " not in handler and not handler.startswith(
            ("functions.janitor.", "functions.abort_teardown.")
        ):
            assert not {a for a in actions if DESTROYS.match(a)}, (handler, actions)
    assert "timestream:WriteRecords" in recorded["functions.store_results.handler"]
    assert "cloudwatch:GetMetricData" in recorded["functions.collect_metrics.handler"]
    assert "pricing:GetProducts" not in recorded["functions.price_run.handler"]  # excerpts stand in
    for later in ("price_run", "teardown", "finish_run", "summarize_suite"):  # only StoreResults ingests
        assert not any(a.startswith("timestream:") for a in recorded[f"functions.{later}.handler"]), later


def test_every_s3_call_of_a_handler_is_allowed_on_its_key(
    recorded: dict[str, set[str]], template: dict[str, Any]
) -> None:
    """Key by key, not just action by action: each stage's S3 calls fall inside the prefixes its
    role grants (infra/bucket_access.py), and each call through a run session inside that run's own
    prefix (infra/isolation.py), evaluated on the resolved statements with the session's run tag."""
    from benchwright.rehearse.abac import Request, evaluate
    from benchwright.rehearse.stack import Resolver

    assert recorded and len(OBJECTS) >= 8, sorted(OBJECTS)  # the recording really saw the stages' S3 calls
    (bucket,) = [k for k in resources(template, "AWS::S3::Bucket") if k.startswith("StorageResults")]
    denied = {}
    for handler, calls in sorted(OBJECTS.items()):
        handler, _, role = handler.partition(" as ")
        module = handler.removeprefix("functions.").rsplit(".", 1)[0]
        name = {a.split(":::", 1)[1].split("/", 1)[0] for _, a, _ in calls}
        assert len(name) == 1, name  # one bucket: the results bucket
        statements = [
            st
            for st in (run_role_statements(template, role) if role else statements_of(template, module))
            if any(
                str(a).lower().startswith("s3:")
                for a in (st["Action"] if isinstance(st["Action"], list) else [st["Action"]])
            )
        ]
        resolved = list(
            Resolver(template=template, attrs={(bucket, "Arn"): f"arn:aws:s3:::{name.pop()}"}).resolve(
                statements
            )
        )
        lacking = sorted(
            f"{action} {arn}"
            for action, arn, run in calls
            if evaluate(
                resolved, Request(action, arn, principal_tags={"benchwright:run-id": run} if run else {})
            )
            != "allow"
        )
        if lacking:
            denied[f"{module} as {role}" if role else module] = lacking
    assert not denied, denied


def test_a_stage_s_own_role_writes_nothing_under_runs_and_its_run_session_only_its_own_run(
    recorded: dict[str, set[str]],
) -> None:
    """Issue 30 item 5: every write under ``runs/`` goes through a session of the run it is under;
    what a stage's own role still reads there is other runs' objects (the finishing stages' history
    and a suite's cells) or, for Teardown, a failed runner's output."""
    sessions = {h for h in OBJECTS if h.endswith(" as ResultsRunRole")}
    assert {h.removeprefix("functions.").split(".", 1)[0] for h in sessions} == RESULTS_STAGES, sessions
    readers = {"teardown", "finish_run", "summarize_suite", "abort_teardown"}
    for handler, calls in OBJECTS.items():
        module = handler.removeprefix("functions.").split(".", 1)[0]
        for action, arn, run in calls:
            key = arn.split(":::", 1)[1].partition("/")[2]
            if handler in sessions:
                assert run and key.startswith(f"runs/{run}/"), (handler, action, key, run)
            elif key.startswith("runs/"):
                assert action == "s3:GetObject" and module in readers, (handler, action, key)


@pytest.mark.parametrize(
    ("module", "action"),
    [
        ("store_results", "timestream:WriteRecords"),
        ("store_results", "timestream:DescribeEndpoints"),
        ("price_run", "pricing:GetProducts"),
        ("price_run", "cloudwatch:PutMetricData"),
        ("finish_run", "secretsmanager:GetSecretValue"),
        ("summarize_suite", "secretsmanager:GetSecretValue"),
        ("janitor", "ecs:ListTasks"),
        ("janitor", "ecs:StopTask"),
        ("janitor", "ec2:DeleteNetworkInterface"),
        ("janitor", "memorydb:DeleteCluster"),
        ("janitor", "elasticache:DeleteReplicationGroup"),
        ("janitor", "elasticache:DeleteCacheParameterGroup"),
        ("janitor", "memorydb:DeleteParameterGroup"),
        ("janitor", "memorydb:DescribeParameterGroups"),
        # no example gives MemoryDB settings: its parameter group calls (cache_params.py)
        ("provision_target", "memorydb:CreateParameterGroup"),
        ("provision_target", "memorydb:UpdateParameterGroup"),
        ("TeardownRunRole", "memorydb:DeleteParameterGroup"),
        ("TeardownRunRole", "ecs:StopTask"),  # the world's runners end before any teardown
    ],
)
def test_calls_moto_cannot_show_are_granted_too(template: dict[str, Any], module: str, action: str) -> None:
    """The sink is off in the moto world and some deletes only happen to leaked resources."""
    role = module.endswith("RunRole")
    statements = run_role_statements(template, module) if role else statements_of(template, module)
    assert allowed(action, actions_of(statements))


def test_every_event_call_is_granted_to_check_runner_on_tagged_resources_only(
    template: dict[str, Any],
) -> None:
    """CheckRunner issues a spec's events (stages/schedule.py) with the calls of each kind's
    events.py (providers/aws/targets/kinds/NAME/) and the shared targets/events.py: each one must be in
    its role, bound to the run tag. The moto
    world's runner finishes before CheckRunner's first poll, so the recording above cannot show them."""
    import re

    from tests.infra.test_stack import ROOT

    targets = ROOT / "src" / "benchwright" / "providers" / "aws" / "targets"
    source = "".join(
        p.read_text() for p in [targets / "events.py", *sorted(targets.glob("kinds/*/events.py"))]
    )
    calls = set(re.findall(r'clients\("([a-z0-9-]+)"\)\.([a-z_]+)', source))
    assert len(calls) >= 8, calls  # the table really was read
    statements = statements_of(template, "check_runner")
    for service, method in sorted(calls):
        action = f"{service}:{''.join(part.title() for part in method.split('_'))}"
        action = action.replace("Db", "DB")  # IAM spells RDS's DB in capitals
        bound = [s for s in statements if allowed(action, actions_of([s]))]
        assert bound, f"check_runner cannot call {action}"
        for st in bound:
            assert st["Condition"] == {"Null": {"aws:ResourceTag/benchwright:run-id": "false"}}, (action, st)
