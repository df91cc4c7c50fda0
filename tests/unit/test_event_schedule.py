"""The due-event logic both orchestrators share (stages/schedule.py), on an injected clock:
when an event is due, what the state keeps between polls (a Lambda sees only the state), how long the
workflow waits, and what is logged when the phase ends first or the call fails. No sleeps."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, cast

from benchwright.providers.base import Credentials, Providers, RunnerHandle, Target, TargetStatus
from benchwright.runner_output import RunnerOutput
from benchwright.spec import TargetSpec
from benchwright.stages import RunState
from benchwright.stages.schedule import (
    MIN_WAIT_S,
    NOT_ISSUED,
    START_DELAY_S,
    EventSchedule,
    issue_due_events,
)

T0 = datetime(2026, 11, 24, 4, 0, 0, tzinfo=UTC)  # the measured phase's start, as the runner wrote it


class Clock:
    def __init__(self) -> None:
        self.now = T0 - timedelta(seconds=30)

    def __call__(self) -> datetime:
        return self.now

    def at(self, seconds_into_phase: float) -> None:
        self.now = T0 + timedelta(seconds=START_DELAY_S + seconds_into_phase)


class RecordingTarget(Target):
    """A target whose trigger records the call; a restart gives it a new pid, as a local one does."""

    kind = "recording"
    calls: list[tuple[str, Any]] = []
    fail: bool = False

    def _create(self) -> dict[str, str]:
        return {"id": "db"}

    def _status(self) -> TargetStatus:
        return "ready"

    def _delete(self) -> None:
        pass

    def connection_properties(self) -> dict[str, str]:
        return {}

    def credentials(self) -> Credentials:
        return Credentials()

    def trigger(self, action: str, params: Mapping[str, Any] | None = None) -> str:
        if RecordingTarget.fail:
            raise RuntimeError("InvalidDBInstanceState: not available")
        RecordingTarget.calls.append((action, params))
        self.handle["pid"] = str(100 + len(RecordingTarget.calls))
        return f"did {action}"


@dataclass
class Launcher:
    started: dict[str, datetime | None] = field(default_factory=dict)  # runner id -> run phase start
    reads: int = 0

    def output(self, handle: RunnerHandle) -> RunnerOutput | None:
        self.reads += 1
        when = self.started.get(handle.id)
        started = {"load": T0 - timedelta(seconds=20)} | ({"run": when} if when else {})
        return RunnerOutput(run_id="r", cell_id="c", started=started)


@dataclass
class World:
    launcher: Launcher = field(default_factory=Launcher)

    def target(self, spec: TargetSpec, run_id: str, handle: Mapping[str, str] | None = None) -> Target:
        assert spec.provider == "rds"  # the section arrives as its model
        return RecordingTarget(spec, run_id, dict(handle or {}))


RDS_TARGET = {  # a valid target section: the provider gets it as its model (spec.parse_target)
    "provider": "rds",
    "engine": "postgres",
    "engine_version": "16.4",
    "instance_class": "db.m6i.large",
    "storage": {"type": "gp3", "size_gb": 100},
}


def state(events: list[dict[str, Any]], runners: int = 1) -> RunState:
    RecordingTarget.calls = []
    RecordingTarget.fail = False
    return RunState(
        run_id="r",
        spec_name="s",
        spec={
            "name": "s",
            "target": RDS_TARGET,
            "runner": {"platform": "fargate"},
            "workload": {"name": "ycsb", "files": ["workloada"]},
            "events": events,
        },
        target={"id": "db", "pid": "100"},
        runners=[
            RunnerHandle(id=f"task-{i}", runner_index=i, result_pointer=f"s3://b/{i}") for i in range(runners)
        ],
        poll_seconds=30,
    )


def poll(s: RunState, world: World, clock: Clock, running: bool = True) -> RunState:
    return issue_due_events(s, cast(Providers, world), running, clock)


def test_an_event_is_issued_once_on_the_first_poll_after_it_is_due() -> None:
    clock, world = Clock(), World()
    s = state([{"at_s": 8, "action": "failover"}])
    s = poll(s, world, clock)  # the run phase has not started: nothing due, poll soon enough to learn it
    assert s.event_log == [] and s.measured_started_at is None
    assert s.poll_seconds == 4 and s.steady_poll_seconds == 30  # half the first at_s
    world.launcher.started = {"task-0": T0}
    clock.at(7.5)
    s = poll(s, world, clock)
    assert s.measured_started_at == T0 and s.event_log == []
    assert s.poll_seconds == MIN_WAIT_S  # 0.5 s left: the shortest Wait
    clock.at(8.3)
    s = poll(s, world, clock)
    assert RecordingTarget.calls == [("failover", None)]
    (entry,) = s.event_log
    assert entry["action"] == "failover" and entry["at_s"] == 8.0 and entry["detail"] == "did failover"
    assert entry["issued_at"] == clock.now.isoformat()  # the real instant, not the nominal one
    assert s.target["pid"] == "101"  # the restarted server's handle is the state's
    assert s.poll_seconds == 30  # nothing pending: the steady poll again
    reads = world.launcher.reads
    clock.at(20)
    s = poll(s, world, clock)
    assert len(RecordingTarget.calls) == 1 and len(s.event_log) == 1
    assert world.launcher.reads == reads  # the start is known: the output is not read again


def test_the_earliest_runner_start_counts_and_several_due_events_go_in_order() -> None:
    clock, world = Clock(), World()
    s = state([{"at_s": 20, "action": "reboot"}, {"at_s": 5, "action": "failover"}], runners=2)
    world.launcher.started = {"task-0": T0 + timedelta(seconds=3), "task-1": T0}
    clock.at(19.9)
    s = poll(s, world, clock)
    assert [a for a, _ in RecordingTarget.calls] == ["failover"]
    assert s.measured_started_at == T0
    assert s.poll_seconds == 1  # 0.1 s left, rounded up to a whole second
    clock.at(40)  # a slow poll: both due now, still one each, in at_s order
    s = poll(s, world, clock)
    assert [a for a, _ in RecordingTarget.calls] == ["failover", "reboot"]
    assert [e["at_s"] for e in s.event_log] == [5.0, 20.0]


def test_a_phase_that_ends_first_logs_the_rest_as_not_issued() -> None:
    clock, world = Clock(), World()
    s = state([{"at_s": 5, "action": "failover"}, {"at_s": 50, "action": "reboot"}])
    world.launcher.started = {"task-0": T0}
    clock.at(6)
    s = poll(s, world, clock)
    clock.at(30)
    s = poll(s, world, clock, running=False)
    assert [e["issued_at"] is None for e in s.event_log] == [False, True]
    assert s.event_log[1]["detail"] == NOT_ISSUED
    assert s.poll_seconds == 30
    s = poll(s, world, clock, running=False)  # a repeated poll adds nothing
    assert len(s.event_log) == 2


def test_a_call_that_fails_is_logged_and_the_run_goes_on() -> None:
    clock, world = Clock(), World()
    s = state([{"at_s": 2, "action": "failover"}])
    RecordingTarget.fail = True
    world.launcher.started = {"task-0": T0}
    clock.at(2)
    s = poll(s, world, clock)
    (entry,) = s.event_log
    assert entry["issued_at"] and entry["detail"].startswith("failed: RuntimeError: InvalidDBInstanceState")


def test_a_scale_event_passes_its_size_and_specs_without_events_are_untouched() -> None:
    clock, world = Clock(), World()
    s = state([{"at_s": 1, "action": "scale", "to": {"instance_class": "db.r6g.large"}}])
    world.launcher.started = {"task-0": T0}
    clock.at(1)
    s = poll(s, world, clock)
    assert RecordingTarget.calls == [("scale", {"instance_class": "db.r6g.large"})]
    plain = state([])
    assert poll(plain, world, clock) == plain


def test_the_schedule_resumes_from_the_state_alone() -> None:
    """What a Lambda sees on its next invocation: the spec, the log so far and the start."""
    clock = Clock()
    s = state([{"at_s": 5, "action": "failover"}, {"at_s": 9, "action": "reboot"}])
    s = s.model_copy(update={"measured_started_at": T0, "event_log": [{"action": "failover", "at_s": 5.0}]})
    schedule = EventSchedule.of(s, clock)
    assert schedule is not None
    assert [e.action for e in schedule.pending] == ["reboot"]
    clock.at(8.99)
    assert schedule.due() == []
    clock.at(9)
    assert [e.action for e in schedule.due()] == ["reboot"]
