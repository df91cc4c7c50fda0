"""`benchwright rehearse` end to end, and the faults it rehearses. Each test runs the real state
machines with the real handlers against moto in server mode, the runner image in a container and a
stand-in PostgreSQL; after each: the run's status and (partial) result are recorded, nothing is left
in the account, no container and no stand-in."""

from __future__ import annotations

import json
import secrets
from pathlib import Path
from typing import Any

import pytest
import yaml

from benchwright.rehearse.hooks import Faults
from benchwright.rehearse.run import Outcome, rehearse
from tests.rehearse.conftest import ROOT, assert_clean, rds_spec


def one_record(outcome: Outcome) -> dict[str, Any]:
    assert len(outcome.records) == 1, [r.get("run_id") for r in outcome.records]
    return outcome.records[0]


def documents(record: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """phase -> result document of the record's one cell."""
    assert record["cells"], record.get("error")
    return dict(record["cells"][0]["phases"])


def asl_retries(state: str, error: str) -> bool:
    asl = json.loads((ROOT / "statemachines" / "benchmark.asl.json").read_text())
    return any(error in r.get("ErrorEquals", []) for r in asl["States"][state].get("Retry", []))


def test_one_cell_rds_postgres_end_to_end(runner_image: str, tmp_path: Path) -> None:
    out = tmp_path / "out"
    outcome = rehearse(rds_spec(tmp_path), out, image=runner_image, timeout_s=600)
    record = one_record(outcome)
    assert record["status"] == "succeeded", record.get("error")
    run = documents(record)["run"]
    assert run["operations_total"] > 0 and run["runtime_ms"] >= 7000  # the 8 s phase really ran
    # the image built the libpq loop's compiled hot path (hatch_build.py), and the run used it
    assert "libpq hot path in C" in run["measurement"]["method"], run["measurement"]["method"]
    assert record["cost"]["total"] > 0  # priced from the AWS price list excerpt
    # issue 27: what it was measured on (CheckTarget's describe -> the plan -> the runner) and its floor
    fp = run["fingerprint"]
    assert (fp["runner_class"], fp["runner_platform"], fp["instance_type"]) == (
        "smoke",
        "fargate",
        "fargate, host unknown",
    )
    assert (fp["target_class"], fp["target_az"]) == ("db.t3.micro", "us-east-1a") and fp[
        "storage"
    ].startswith("gp2 20 GiB")
    assert fp["target_az_id"] and fp["runner_az_id"] == fp["target_az_id"]  # placement: same-az
    assert "PostgreSQL" in fp["engine_version"] and fp["engine_version"] == run["server_version"]
    floor = run["network_floor"]
    assert (
        floor["command"] == "SELECT 1"
        and floor["round_trips"] == 200
        and 0 < floor["p50_us"] <= floor["p99_us"]
    )
    assert outcome.transitions_per_cell <= 60
    execution = json.loads((out / "execution.json").read_text())
    assert execution["executions"][0]["status"] == "SUCCEEDED"
    assert execution["transitions_per_cell"] == outcome.transitions_per_cell
    # the Wait cap only adds polls: with the Waits as written there are fewer, and at least the happy path
    projected = execution["transitions_per_cell_as_written"]
    assert projected == outcome.transitions_per_cell_as_written
    assert 17 <= projected <= outcome.transitions_per_cell
    # the container ran the image's ENTRYPOINT with RunTask's command override, as ECS composes it
    logs = list((out / "containers").glob("*.log"))
    assert len(logs) == 1
    (container,) = execution["containers"]
    assert container["entrypoint"] is None and container["exit_code"] == 0
    # issue 30: the runner read its secret and plan, and Teardown deleted, as sessions of the run-scoped
    # roles tagged with this run, each call decided by abac (rehearse/run_sessions.py), none unchecked
    run_sessions = {who.lower() for who in execution["signed_calls"] if who.startswith("run session")}
    assert any("runnerrunrole" in who for who in run_sessions), execution["signed_calls"]
    assert any("teardownrunrole" in who for who in run_sessions), execution["signed_calls"]
    # and the stages read and wrote the run's objects (plan, documents, record, report) as its
    # ResultsRunRole session: their own roles write nothing under runs/
    assert any("resultsrunrole" in who for who in run_sessions), execution["signed_calls"]
    assert execution["run_session_calls_unchecked"] == []
    assert container["args"][0] == "--plan" and container["args"][1].startswith("s3://"), container["args"]
    slack = json.loads((out / "slack.json").read_text())
    assert_clean(outcome)
    assert [post["status"] for post in slack] == [200]
    # issue 25 part 2: the runner (its plan, its result, its DB secret) signed as the task role and the
    # state machine invoked each Lambda as its own role, every call evaluated (rehearse/principals.py)
    signed = signed_by(execution)
    assert signed["runner task"] >= 1, signed  # its AssumeRole of the run-scoped role (issue 30)
    assert run_session_calls(execution, "runner task") >= 3, execution["signed_calls"]
    assert signed["Benchmark state machine"] >= 10, signed  # one lambda:InvokeFunction per task state
    assert_clean(outcome)
    # no secret in what the run wrote: the stand-in's password never left Secrets Manager + the runner
    text = json.dumps(outcome.records) + (out / "execution.json").read_text()
    assert "rehearsaltoken" not in text  # the Slack webhook's secret part
    assert_handlers_ran_from_the_asset(execution)


def test_a_measured_runner_runs_on_one_pinned_ec2_instance_in_the_targets_az(
    runner_image: str, tmp_path: Path
) -> None:
    """Issue 27 part 1: a spec that names no runner class is measured. LaunchRunner starts one EC2
    instance of the default pinned type; the rehearsal's EC2 runs its user-data's ``docker run`` line
    with the runner image; the result is labelled measured on that type, in the target's AZ, and the
    cost prices that instance, not Fargate."""
    import yaml

    path = rds_spec(tmp_path, name="rehearse-measured")
    spec = yaml.safe_load(path.read_text())
    spec["runner"] = {"placement": "same-az"}
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    out = tmp_path / "out"
    outcome = rehearse(path, out, image=runner_image, timeout_s=600)
    record = one_record(outcome)
    assert record["status"] == "succeeded", record.get("error")
    run = documents(record)["run"]
    assert run["operations_total"] > 0 and run["runtime_ms"] >= 7000
    fp = run["fingerprint"]
    assert (fp["runner_class"], fp["runner_platform"], fp["instance_type"]) == (
        "measured",
        "ec2",
        "c6i.large",
    )
    assert fp["target_az_id"] and fp["runner_az_id"] == fp["target_az_id"]  # placement: same-az
    items = record["cells"][0]["cost"]["items"]
    assert items.get("ec2 runner 1 x c6i.large", 0) > 0, items
    assert not any(item.startswith("fargate") for item in items)
    execution = json.loads((out / "execution.json").read_text())
    (container,) = execution["containers"]  # one runner, one host
    assert container["exit_code"] == 0 and "--plan" in container["args"], container
    # the instance profile's role (rehearse/principals.py) assumes the run-scoped role, which signs the rest
    assert signed_by(execution)["EC2 runner"] >= 1
    assert run_session_calls(execution, "EC2 runner") >= 3, execution["signed_calls"]
    assert_clean(outcome)


def run_session_calls(execution: dict[str, Any], caller: str) -> int:
    """Calls signed by run-scoped sessions that ``caller`` (a principal's kind) assumed (issue 30)."""
    return sum(
        int(calls)
        for who, calls in execution["signed_calls"].items()
        if who.startswith("run session") and f"(assumed by {caller} (" in who
    )


def signed_by(execution: dict[str, Any]) -> dict[str, int]:
    """execution.json's ``signed_calls`` by the principal's kind (its label without the role name)."""
    out: dict[str, int] = {}
    for who, calls in execution["signed_calls"].items():
        kind = who.split(" (", 1)[0]
        out[kind] = out.get(kind, 0) + int(calls)
    return out


def assert_handlers_ran_from_the_asset(execution: dict[str, Any]) -> None:
    """Every invocation ran in a sandbox process of its own (not this one), from the built asset of
    these sources, and the warm sandboxes were reused (fewer cold starts than invocations)."""
    import os

    from benchwright.rehearse.asset import interpreter
    from infra.lambda_asset import source_hash

    detail = execution["lambda_invocations_detail"]
    assert len(detail) == execution["lambda_invocations"] >= 10
    assert (
        {d["asset_hash"] for d in detail} == {source_hash(ROOT)} == {execution["lambda_asset"]["asset_hash"]}
    )
    assert {d["interpreter"] for d in detail} == {interpreter()}
    pids = {d["sandbox_pid"] for d in detail}
    assert os.getpid() not in pids and None not in pids
    cold = [d for d in detail if d["init_s"] is not None]
    assert len(cold) == execution["lambda_sandboxes_started"] < len(detail)
    assert len({d["function"] for d in cold}) == len(cold)  # one cell, one sandbox per function


def test_a_permission_the_role_lacks_fails_the_rehearsal(runner_image: str, tmp_path: Path) -> None:
    """Each handler signs as its own role: CheckRunner denied ecs:DescribeTasks cannot see its runner,
    the run fails, and the denial is reported with the principal and action (0 in every other test)."""
    out = tmp_path / "out"
    outcome = rehearse(
        rds_spec(tmp_path, run_s=3),
        out,
        image=runner_image,
        faults=Faults(revoke={"CheckRunner": "ecs:DescribeTasks"}),
        timeout_s=600,
    )
    record = one_record(outcome)
    assert record["status"] == "failed", record["status"]
    denied = json.loads((out / "resources-after.json").read_text())["access_denied"]
    assert denied and {d["action"] for d in denied} == {"ecs:DescribeTasks"}, denied
    assert all(d["principal"].startswith("CheckRunner (") for d in denied), denied
    # the teardown still ran with its own role (which keeps ecs:DescribeTasks): nothing is left
    left = {k: v for k, v in outcome.resources_after.items() if k not in ("results", "access_denied") and v}
    assert not left, left


def test_runner_container_killed_mid_run(runner_image: str, tmp_path: Path) -> None:
    outcome = rehearse(
        rds_spec(tmp_path, run_s=20),
        tmp_path / "out",
        image=runner_image,
        faults=Faults(kill_runner_after_s=12),
        timeout_s=600,
    )
    record = one_record(outcome)
    assert record["status"] == "failed"
    assert "137" in (record.get("error") or ""), record.get("error")  # SIGKILL, as ECS reports it
    assert any("killed runner container" in e for e in outcome.events)
    assert "load" in documents(record)  # the phase that finished before the kill is kept
    assert_clean(outcome)


def test_target_whose_creation_fails(runner_image: str, tmp_path: Path) -> None:
    spec = rds_spec(tmp_path, name="rehearse-bad-params", settings={"shared_buffers": "8kB"})
    outcome = rehearse(spec, tmp_path / "out", image=runner_image, timeout_s=600)
    record = one_record(outcome)
    assert record["status"] == "failed"
    assert (record.get("error") or "").startswith("ProvisioningFailed"), record.get("error")
    # the stand-in PostgreSQL refused the parameter group's setting; RDS reported incompatible-parameters
    assert any("stand-in" in e and "failed" in e and "shared_buffers" in e for e in outcome.events), (
        outcome.events
    )
    assert not (tmp_path / "out" / "containers").exists()  # no runner was started
    assert_clean(outcome)


def test_throttling_on_a_lambda(runner_image: str, tmp_path: Path) -> None:
    outcome = rehearse(
        rds_spec(tmp_path, run_s=3),
        tmp_path / "out",
        image=runner_image,
        faults=Faults(throttle={"CheckRunner": 1}),
        timeout_s=600,
    )
    record = one_record(outcome)
    assert "throttled CheckRunner" in outcome.events
    if asl_retries("CheckRunner", "Lambda.TooManyRequestsException"):
        assert record["status"] == "succeeded", record.get("error")
    else:  # without a Retry, Step Functions' Lambda.TooManyRequestsException fails the run
        assert record["status"] == "failed"
        assert "TooManyRequests" in (record.get("error_type") or "") + (record.get("error") or "")
    assert_clean(outcome)


def test_slack_down(runner_image: str, tmp_path: Path) -> None:
    out = tmp_path / "out"
    outcome = rehearse(
        rds_spec(tmp_path, run_s=3), out, image=runner_image, faults=Faults(slack_down=True), timeout_s=600
    )
    record = one_record(outcome)
    assert record["status"] == "succeeded", record.get("error")  # a lost message does not fail the run
    slack = json.loads((out / "slack.json").read_text())
    assert_clean(outcome)
    assert slack and all(post["status"] == 500 for post in slack)
    assert_clean(outcome)


def test_execution_aborted_from_outside(runner_image: str, tmp_path: Path) -> None:
    from benchwright.rehearse.stack import synth_template

    template = synth_template(None)
    rules = [r for r in template["Resources"].values() if r["Type"] == "AWS::Events::Rule"]
    # fault 8: an EventBridge rule tears down an execution aborted from outside
    assert any("aws.states" in json.dumps(r["Properties"].get("EventPattern", {})) for r in rules)
    outcome = rehearse(
        rds_spec(tmp_path, run_s=20),
        tmp_path / "out",
        image=runner_image,
        faults=Faults(abort_after_state="CheckRunner"),
        timeout_s=600,
    )
    assert [e["status"] for e in outcome.executions] == ["ABORTED"]
    assert any(e.startswith("event ABORTED") for e in outcome.events), outcome.events
    record = one_record(outcome)
    assert record["status"] in {"failed", "cancelled", "aborted"}, record["status"]
    assert_clean(outcome)


def test_second_launch_runner_attempt(runner_image: str, tmp_path: Path) -> None:
    assert asl_retries("LaunchRunner", "Lambda.ServiceException")  # fault 8: retried with backoff
    out = tmp_path / "out"
    outcome = rehearse(
        rds_spec(tmp_path, run_s=3),
        out,
        image=runner_image,
        faults=Faults(service_error_after={"LaunchRunner"}),
        timeout_s=600,
    )
    record = one_record(outcome)
    assert record["status"] == "succeeded", record.get("error")
    assert len(list((out / "containers").glob("*.log"))) == 1  # the retry started no second runner
    assert_clean(outcome)


def test_a_run_that_exhausts_burst_credits_is_labelled_as_experiment_3s(
    runner_image: str, tmp_path: Path
) -> None:
    """gp2 and T-class buckets empty at the start, after a long load: the full spec loads 20 M records
    (~67 min, past the 20 GiB gp2 bucket's ~31 min), so its forecast starts the run phase empty; the
    quick rehearsal carries that start into its own forecast and its stand-in (rehearse/credits_carry.py,
    issue 27). The AWS/RDS series carry the model's balances, the judge marks the cell invalid, and
    the observed drain is the predicted one (no credits_prediction_mismatch)."""
    spec = rds_spec(tmp_path, run_s=3)
    data = yaml.safe_load(spec.read_text())
    data["workload"]["properties"]["recordcount"] = 20_000_000
    spec.write_text(yaml.safe_dump(data))
    outcome = rehearse(
        spec, tmp_path / "out", image=runner_image, quick=True,
        faults=Faults(credits_start=0.0, credits_as_forecast=True), timeout_s=600,
    )  # fmt: skip
    rehearsed = yaml.safe_load((outcome.out_dir / "spec.yaml").read_text())["benchmarks"][0]
    assert rehearsed["target"]["storage"]["burst_start_pct"] == 0.0  # carried from the full forecast
    record = one_record(outcome)
    cell = record["cells"][0]
    assert not [f for f in cell["validity"] if f["code"] == "credits_prediction_mismatch"], cell["validity"]
    forecast = documents(record)["run"]["extra"]["credits_forecast"]
    assert forecast["BurstBalance"]["regime"] == "exhausted", forecast
    names = {m["name"] for m in cell["metrics"]}
    assert {"CPUUtilization", "ReadIOPS", "WriteIOPS", "BurstBalance", "CPUCreditBalance"} <= names
    exhausted = [f for f in cell["validity"] if f["code"] == "credits_exhausted"]
    assert exhausted and all(f["severity"] == "invalid" for f in exhausted), cell["validity"]
    assert any("BurstBalance" in f["message"] for f in exhausted)
    # db.t3.micro runs in Unlimited mode: its empty CPU credit balance cost money, it did not throttle
    surplus = [f for f in cell["validity"] if f["code"] == "credits_surplus"]
    assert surplus and all(f["severity"] == "warning" and "CPUCreditBalance" in f["message"] for f in surplus)
    assert_clean(outcome)


def test_the_nightly_schedule_starts_the_suite_with_its_own_input(runner_image: str, tmp_path: Path) -> None:
    """The stack synthesized with this spec as its nightly suite; the schedule's target input (what
    EventBridge Scheduler sends) starts the suite state machine, which runs the cell and summarises."""
    outcome = rehearse(
        rds_spec(tmp_path, run_s=3), tmp_path / "out", image=runner_image, nightly=True, timeout_s=900
    )
    (execution,) = outcome.executions
    assert "suitestatemachine" in execution["execution_arn"] and execution["status"] == "SUCCEEDED"
    assert execution["cells"] == 1 and outcome.transitions_per_cell <= 60
    by_id = {r["run_id"]: r for r in outcome.records}
    suite_id = execution["execution_arn"].rsplit(":", 1)[-1]  # the run is named after its execution
    assert set(by_id) == {suite_id, f"{suite_id}-000"}, sorted(by_id)
    assert by_id[suite_id]["status"] == "succeeded" and by_id[f"{suite_id}-000"]["status"] == "succeeded"
    assert documents(by_id[f"{suite_id}-000"])["run"]["operations_total"] > 0
    assert_clean(outcome)


def test_no_password_or_canary_variable_in_any_artifact(
    runner_image: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 14's canary, on the cloud path: the stand-in's password (issued by Secrets Manager in
    RDS's shape) and a canary environment variable of the process that runs the Lambdas appear in
    no artifact of the rehearsal: records, execution histories, Slack posts, Lambda and container logs."""
    from benchwright.providers.local import servers

    issued: list[str] = []
    credentials = servers.LocalServer.credentials

    def recording(self: servers.LocalServer) -> Any:
        found = credentials(self)
        if found.password:
            issued.append(found.password)
        return found

    monkeypatch.setattr(servers.LocalServer, "credentials", recording)
    canary = "bwcanary" + secrets.token_hex(8)
    monkeypatch.setenv("BENCHWRIGHT_CANARY_VARIABLE", canary)
    out = tmp_path / "out"
    outcome = rehearse(rds_spec(tmp_path, run_s=3), out, image=runner_image, timeout_s=600)
    record = one_record(outcome)
    assert record["status"] == "succeeded", record.get("error")
    assert issued, "the stand-in issued no password: the check below would pass on nothing"
    files = [p for p in out.rglob("*") if p.is_file()]
    assert any(p.name == "lambda.log" for p in files) and any(p.suffix == ".log" for p in files)
    texts = {str(p): p.read_bytes().decode("utf-8", "replace") for p in files}
    texts["outcome"] = json.dumps([outcome.records, outcome.executions, outcome.slack, outcome.events])
    for where, text in texts.items():
        assert canary not in text, where
        for password in set(issued):
            assert password not in text, where
    assert_clean(outcome)


def test_a_matrix_of_run_settings_provisions_once_and_loads_once(runner_image: str, tmp_path: Path) -> None:
    """Issue 11: the suite's cells that differ only in run settings share one RDS instance and one load;
    the target is torn down once, after the last cell."""
    import yaml

    path = rds_spec(tmp_path, name="rehearse-shared", run_s=3)
    spec = yaml.safe_load(path.read_text())
    spec["matrix"] = {"workload.phases.run.threads": [1, 2]}
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    outcome = rehearse(path, tmp_path / "out", image=runner_image, timeout_s=900)
    (execution,) = outcome.executions
    assert execution["status"] == "SUCCEEDED", execution.get("cause")
    entered = [
        (e.get("stateEnteredEventDetails") or {}).get("name")
        for e in execution["events"]
        if str(e.get("type", "")).endswith("StateEntered")
    ]
    assert entered.count("ProvisionTarget") == 1 and entered.count("LaunchRunner") == 2
    assert entered.count("Teardown") == 1 and entered.count("StopRunners") == 2
    assert execution["cells"] == 2
    cells = {c["cell_id"]: c for r in outcome.records if r.get("suite_run_id") for c in r["cells"]}
    assert set(cells) == {"threads=1", "threads=2"}
    assert "load" in cells["threads=1"]["phases"] and "load" not in cells["threads=2"]["phases"]
    assert cells["threads=2"]["phases"]["run"]["operations_total"] > 0  # it read the data threads=1 loaded
    assert cells["threads=2"]["shared"]["loaded_by"] == "threads=1 #1"
    assert_clean(outcome)
