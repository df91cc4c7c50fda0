"""A failover event on a rehearsed RDS run, through the real state machine: CheckRunner learns the
run phase's start from the runner's output in (moto's) S3, issues RebootDBInstance with ForceFailover
when it is due, moto's hook restarts the stand-in PostgreSQL on the same port (SIGKILL, crash
recovery), the runner's clients in the container fail and reconnect, and the result's availability
section measures the outage. The run goes on and succeeds; nothing is left behind."""

from __future__ import annotations

import json
import math
from pathlib import Path

import yaml

from benchwright.rehearse.resources import LEAK_KINDS
from benchwright.rehearse.run import rehearse
from tests.rehearse.conftest import assert_clean, rds_spec
from tests.rehearse.test_rehearse import documents, one_record


def test_a_failover_event_on_rds_is_issued_measured_and_survived(runner_image: str, tmp_path: Path) -> None:
    path = rds_spec(tmp_path, name="rehearse-rds-failover", run_s=25, multi_az=True, availability_zone=None)
    spec = yaml.safe_load(path.read_text())
    spec["events"] = [{"at_s": 8, "action": "failover"}]
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    out = tmp_path / "out"
    outcome = rehearse(path, out, image=runner_image, timeout_s=600)
    record = one_record(outcome)
    assert record["status"] == "succeeded", record.get("error")
    run = documents(record)["run"]
    assert run["runtime_ms"] >= 24000  # the run went on through the event to its end
    (event,) = run["availability"]["events"]
    assert event["action"] == "failover" and event["at_s"] == 8
    # issued by CheckRunner within a few seconds of its instant (Waits of 1 s as it approaches)
    assert 8 <= event["issued_s"] <= 8 + 4, event
    assert "ForceFailover" in event["detail"], event
    unavailable = event["unavailable_s"]
    assert unavailable is not None and 0 < unavailable < 60 and math.isfinite(unavailable), event
    assert event["errors"] > 0 and event["clients_affected"] >= 1, event
    assert event["after"] is not None and event["after"]["throughput"] > 0, event
    # moto really received the call and the stand-in really restarted on it
    assert any(
        "RebootDBInstance ForceFailover" in e and "stand-in restarted (failover)" in e for e in outcome.events
    ), outcome.events
    execution = json.loads((out / "execution.json").read_text())
    assert execution["executions"][0]["status"] == "SUCCEEDED"
    assert_clean(outcome)
    after = json.loads((out / "resources-after.json").read_text())  # as written, not only as returned
    assert all(after[kind] == [] for kind in LEAK_KINDS), after
