"""The stages and the local orchestrator, with in-memory providers: order, teardown on every path,
partial results kept and marked when a run is interrupted or its runner dies."""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from benchwright.errors import ProvisioningFailed
from benchwright.local import run_spec, scale_down
from benchwright.providers.base import (
    Credentials,
    MetricsSource,
    MetricsWindow,
    Notifier,
    PriceBook,
    Providers,
    ResultStore,
    RunnerHandle,
    RunnerLauncher,
    RunnerPlan,
    Target,
    TargetStatus,
)
from benchwright.providers.local import DirectoryArtifacts, FreePriceBook
from benchwright.report.sample import make_document
from benchwright.results import MetricPoint, MetricSeries, ResultDocument
from benchwright.runs import RunRecord
from benchwright.spec import TargetSpec, parse_spec
from benchwright.stages import (
    ASL_STATE_NAMES,
    CELL_STAGES,
    STAGE_ORDER,
    RunState,
    asl_state_name,
    stage_function,
    steps,
)
from benchwright.stages.plan import build_plan

ASL = Path(__file__).resolve().parents[2] / "statemachines" / "benchmark.asl.json"


def asl_task_order(definition: dict[str, Any]) -> list[str]:
    """Task states along the success path: follow Next, and at a Choice the branch not yet visited."""
    states = definition["States"]
    name, seen, tasks = definition["StartAt"], set(), []
    while name and name not in seen:
        seen.add(name)
        state = states[name]
        if state["Type"] == "Task":
            tasks.append(name)
        if state["Type"] == "Choice":
            options = [c["Next"] for c in state.get("Choices", [])] + [state.get("Default")]
            forward = [o for o in options if o and o not in seen and states[o]["Type"] != "Fail"]
            name = forward[0] if forward else None
        else:
            name = None if state.get("End") else state.get("Next")
    return tasks


def test_stage_order_matches_the_asl() -> None:
    definition = json.loads(ASL.read_text())
    assert asl_task_order(definition) == ASL_STATE_NAMES


def test_asl_names_are_the_stage_names_in_pascal_case() -> None:
    assert asl_state_name("provision_target") == "ProvisionTarget"
    assert len(STAGE_ORDER) == len(set(STAGE_ORDER))
    assert STAGE_ORDER[0] == "validate_spec" and STAGE_ORDER[-2:] == ["teardown", "finish_run"]


# ---------------------------------------------------------------- in-memory providers
class FakeTarget(Target):
    kind = "fake"
    deleted: list[str] = []
    created: list[str] = []

    def _create(self) -> dict[str, str]:
        FakeTarget.created.append(self.run_id)
        return {"id": f"db-{len(FakeTarget.created)}"}

    def _status(self) -> TargetStatus:
        return "ready"

    def _delete(self) -> None:
        FakeTarget.deleted.append(self.handle["id"])
        self.handle.clear()

    def connection_properties(self) -> dict[str, str]:
        return {"redis.host": "127.0.0.1", "redis.port": "1"}

    def credentials(self) -> Credentials:
        return Credentials(password="s3cret-pw")


class FakeLauncher(RunnerLauncher):
    def __init__(self, fail: bool = False) -> None:
        self.plans: list[RunnerPlan] = []
        self.credentials: list[Credentials] = []
        self.fail = fail
        self.stopped = 0

    def launch(self, plan: RunnerPlan, credentials: Credentials, target: Target) -> RunnerHandle:
        self.plans.append(plan)
        self.credentials.append(credentials)
        return RunnerHandle(id=str(len(self.plans)), result_pointer=f"mem://{len(self.plans)}")

    def status(self, handle: RunnerHandle) -> Any:
        return "failed" if self.fail else "succeeded"

    def results(self, handle: RunnerHandle) -> list[ResultDocument]:
        run = make_document([1000.0] * 12, engine="redis", phase="run")
        if self.fail:
            run.aborted = True
        return [make_document([2000.0] * 3, engine="redis", phase="load"), run]

    def stop(self, handle: RunnerHandle) -> None:
        self.stopped += 1

    def failure(self, handle: RunnerHandle) -> str | None:
        return "runner exited with -9" if self.fail else None


class FakeMetrics(MetricsSource):
    def collect(self, target: Target, window: MetricsWindow) -> list[MetricSeries]:
        return [
            MetricSeries(
                name="CPUUtilization",
                unit="Percent",
                source="proc:host",
                points=[MetricPoint(t=1.0, value=50.0)],
            )
        ]


class MemoryStore(ResultStore):
    def __init__(self) -> None:
        self.runs: dict[str, str] = {}

    def save_run(self, record: RunRecord) -> None:
        self.runs[record.run_id] = record.model_dump_json()

    def get_run(self, run_id: str) -> RunRecord | None:
        raw = self.runs.get(run_id)
        return RunRecord.model_validate_json(raw) if raw else None

    def history(self, spec_name: str, limit: int = 20) -> list[RunRecord]:
        found = [RunRecord.model_validate_json(r) for r in self.runs.values()]
        return [r for r in found if r.spec_name == spec_name][:limit]


class RecordingNotifier(Notifier):
    def __init__(self) -> None:
        self.records: list[RunRecord] = []

    def notify(self, record: RunRecord, report_url: str | None = None) -> bool:
        self.records.append(record)
        return True


def fake_target(spec: TargetSpec, run_id: str, handle: Mapping[str, str] | None = None) -> Target:
    return FakeTarget(spec, run_id, handle)


SPEC = {
    "name": "fake",
    "target": {"provider": "local", "engine": "redis"},
    "workload": {
        "name": "ycsb",
        "files": ["workloada"],
        "properties": {"recordcount": 100},
        "phases": {"load": {"threads": 2}, "run": {"threads": 2, "duration_s": 12}},
    },
    "matrix": {"workload.properties.fieldlength": [10, 20]},
}


@pytest.fixture
def world(tmp_path: Path) -> dict[str, Any]:
    FakeTarget.deleted, FakeTarget.created = [], []
    store, notifier, launcher = MemoryStore(), RecordingNotifier(), FakeLauncher()

    def factory(out: Path, spec: Any, prices: PriceBook | None = None) -> Providers:
        return Providers(
            target=fake_target,
            launcher=launcher,
            metrics=FakeMetrics(),
            store=store,
            notifier=notifier,
            prices=prices or FreePriceBook(),
            artifacts=DirectoryArtifacts(out),
        )

    return {"store": store, "notifier": notifier, "launcher": launcher, "factory": factory, "out": tmp_path}


def quiet() -> Console:
    return Console(file=open("/dev/null", "w"))


def test_a_run_walks_every_stage_and_tears_the_shared_target_down_once(world: dict[str, Any]) -> None:
    outcome = run_spec(parse_spec(SPEC), world["out"], world["factory"], quiet())
    record = outcome.record
    assert record.status == "succeeded"
    assert [c.cell_id for c in record.cells] == ["fieldlength=10", "fieldlength=20"]
    assert set(record.cells[0].phases) == {"load", "run"}
    assert record.cells[0].metrics[0].name == "CPUUtilization"
    # one target for both cells (same target section); each field length is a dataset of its own
    assert FakeTarget.created == [outcome.record.run_id] and FakeTarget.deleted == ["db-1"]
    assert [c.shared.dataset for c in record.cells if c.shared] == ["g1/d1", "g1/d2"]
    assert all(c.shared and c.shared.loaded_here for c in record.cells)
    assert [[p.phase for p in plan.phases] for plan in world["launcher"].plans] == [["load", "run"]] * 2
    assert len(world["notifier"].records) == 1  # one notification per run, not per cell
    assert world["store"].get_run(record.run_id).status == "succeeded"
    assert outcome.report is not None and outcome.report.exists()
    assert record.cost is not None and record.cost.total == 0.0


def test_the_password_reaches_the_launcher_but_never_the_plan_state_or_results(world: dict[str, Any]) -> None:
    outcome = run_spec(parse_spec(SPEC), world["out"], world["factory"], quiet())
    assert world["launcher"].credentials[0].password == "s3cret-pw"
    assert "s3cret-pw" not in world["launcher"].plans[0].model_dump_json()
    assert "s3cret-pw" not in world["store"].runs[outcome.record.run_id]
    for path in world["out"].rglob("*"):
        if path.is_file():
            assert "s3cret-pw" not in path.read_text(errors="replace"), path


@pytest.mark.parametrize("stage", [s for s in CELL_STAGES if s != "validate_spec"])
def test_a_failure_in_any_stage_still_tears_down(
    world: dict[str, Any], stage: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    def boom(state: RunState, providers: Providers) -> RunState:
        raise ProvisioningFailed(f"injected failure in {stage}")

    # patched where the stage lives (stages.steps, or a module of its own: operations, finish)
    monkeypatch.setattr(sys.modules[stage_function(stage).__module__], stage, boom)
    outcome = run_spec(parse_spec(SPEC), world["out"], world["factory"], quiet(), keep_going=False)
    assert outcome.record.status == "failed"
    assert "injected failure" in (outcome.record.error or "")
    expected = [] if stage == "provision_target" else ["db-1"]  # the first cell failed, no later one started
    assert FakeTarget.deleted == expected
    assert len(FakeTarget.created) == len(expected)
    assert world["store"].get_run(outcome.record.run_id).status == "failed"


def test_keep_going_tries_every_target_group_and_tears_each_down(
    world: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    def boom(state: RunState, providers: Providers) -> RunState:
        raise ProvisioningFailed("injected failure in check_target")

    monkeypatch.setattr(steps, "check_target", boom)
    spec = {**SPEC, "matrix": {"target.settings.maxmemory": ["10mb", "20mb"]}}  # two target groups
    outcome = run_spec(parse_spec(spec), world["out"], world["factory"], quiet())
    assert outcome.record.status == "failed"
    assert "2 cell(s) failed (of 2)" in (outcome.record.error or "")
    assert FakeTarget.deleted == ["db-1", "db-2"]


def test_run_settings_share_the_load_and_the_result_says_whose_data_it_ran_on(world: dict[str, Any]) -> None:
    spec = {**SPEC, "matrix": {"workload.phases.run.threads": [1, 2, 4]}, "repeats": 2}
    record = run_spec(parse_spec(spec), world["out"], world["factory"], quiet()).record
    assert FakeTarget.created == [record.run_id] and FakeTarget.deleted == ["db-1"]
    phases = [[p.phase for p in plan.phases] for plan in world["launcher"].plans]
    assert phases == [["load", "run"]] + [["run"]] * 5  # one load, six measured runs
    shared = [(c.cell_id, c.repeat, c.shared) for c in record.cells]
    assert all(s is not None and s.dataset == "g1/d1" and s.loaded_by == "threads=1 #1" for _, _, s in shared)
    assert [s.runs_before for _, _, s in shared if s] == [0, 1, 2, 3, 4, 5]
    assert "ran after 3 earlier cell(s)" in shared[3][2].describe()  # type: ignore[union-attr]


def test_a_dead_runner_keeps_its_partial_result_marked_aborted(tmp_path: Path) -> None:
    FakeTarget.deleted, FakeTarget.created = [], []
    store, launcher = MemoryStore(), FakeLauncher(fail=True)

    def factory(out: Path, spec: Any) -> Providers:
        return Providers(
            target=fake_target,
            launcher=launcher,
            metrics=FakeMetrics(),
            store=store,
            notifier=RecordingNotifier(),
            prices=FreePriceBook(),
            artifacts=DirectoryArtifacts(out),
        )

    outcome = run_spec(parse_spec(SPEC), tmp_path, factory, quiet(), keep_going=False)
    assert outcome.record.status == "aborted"
    assert "exited with -9" in (outcome.record.error or "")
    cell = outcome.record.cells[0]
    assert "run" in cell.phases and cell.phases["run"].aborted
    assert any(f.code == "aborted" and f.severity == "invalid" for f in cell.validity)
    assert FakeTarget.deleted == ["db-1"]
    assert len(outcome.record.cells) == 1  # the second cell never started


def test_ctrl_c_while_waiting_for_the_runner_aborts_stores_and_tears_down(
    world: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    def interrupted(state: RunState, providers: Providers) -> RunState:
        raise KeyboardInterrupt

    monkeypatch.setattr(steps, "check_runner", interrupted)
    outcome = run_spec(parse_spec(SPEC), world["out"], world["factory"], quiet())
    assert outcome.interrupted
    assert outcome.record.status == "aborted"
    assert world["launcher"].stopped == 1
    assert FakeTarget.deleted == ["db-1"]
    stored = world["store"].get_run(outcome.record.run_id)
    assert stored.status == "aborted" and stored.cells and "run" in stored.cells[0].phases


def test_plan_carries_phases_threads_and_time_bounds() -> None:
    spec = parse_spec(
        {
            **SPEC,
            "matrix": {},
            "workload": {
                **SPEC["workload"],
                "phases": {
                    "load": {"threads": 2},
                    "warmup": {"threads": 3, "duration_s": 2},
                    "run": {"threads": 4, "duration_s": 5, "target_rate": 100},
                },
            },
        }
    )
    plan = build_plan(spec, "r1", "default", {"redis.host": "h"})
    assert [p.phase for p in plan.phases] == ["load", "warmup", "run"]
    assert [p.threads for p in plan.phases] == [2, 3, 4]
    run = plan.phases[2]
    assert run.measured and run.target == 100 and run.max_seconds == 5
    assert run.operation_count is not None and run.operation_count > 10**12  # bounded by time alone
    assert plan.phases[0].operation_count is None  # the load inserts recordcount
    assert run.properties["redis.host"] == "h" and run.properties["readproportion"] == "0.5"


def test_default_load_phase_is_skipped_for_a_workload_without_one() -> None:
    spec = parse_spec(
        {
            "name": "rb",
            "target": {"provider": "local", "engine": "redis"},
            "workload": {"name": "redis-bench", "properties": {"redisbench.requests": 100}},
        }
    )
    assert [p.phase for p in build_plan(spec, "r", "c", {}).phases] == ["run"]


def test_scale_down_keeps_the_spec_valid_and_small() -> None:
    spec = parse_spec(
        {
            **SPEC,
            "workload": {**SPEC["workload"], "properties": {"recordcount": 10**6}},
            "matrix": {"workload.phases.run.threads": [1, 16, 64]},
            "repeats": 3,
        }
    )
    small = scale_down(spec)
    assert small.workload.properties["recordcount"] == 500
    assert small.repeats == 1
    assert small.matrix["workload.phases.run.threads"] == [1, 2]
    assert small.workload.phases.run is not None and small.workload.phases.run.duration_s == 2.0


def test_slack_from_the_spec_gets_one_message_per_run(
    world: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    import threading
    from http.server import BaseHTTPRequestHandler, HTTPServer

    from benchwright.providers.local import default_notifier

    received: list[dict[str, Any]] = []

    class Hook(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            received.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b"ok")

        def log_message(self, *args: Any) -> None:
            return None

    server = HTTPServer(("127.0.0.1", 0), Hook)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    monkeypatch.setenv("BW_TEST_HOOK", f"http://127.0.0.1:{server.server_port}/hook")
    spec = parse_spec({**SPEC, "notify": {"slack": {"webhook_env": "BW_TEST_HOOK"}}})

    def factory(out: Path, s: Any) -> Providers:
        providers: Providers = world["factory"](out, s)
        providers.notifier = default_notifier(s.notify)
        return providers

    try:
        outcome = run_spec(spec, world["out"], factory, quiet())
    finally:
        server.shutdown()
    assert outcome.record.status == "succeeded"
    assert len(received) == 1
    assert "fake" in json.dumps(received[0])
    assert f"{server.server_port}/hook" not in outcome.record.model_dump_json()  # the webhook is never stored


# ---------------------------------------------------------------- fan-out: synchronised start
FANOUT = {
    "name": "fan",
    "target": {
        "provider": "rds",
        "engine": "postgres",
        "engine_version": "16.4",
        "instance_class": "db.m6i.large",
        "storage": {"type": "gp3", "size_gb": 100},
    },
    "runner": {"platform": "fargate", "count": 3},
    "workload": {
        "name": "ycsb",
        "files": ["workloada"],
        "properties": {"recordcount": 1000},
        "phases": {"load": {"target_rate": 100}, "run": {"duration_s": 60}},
    },
}


def test_fanout_plans_share_one_start_instant_for_the_measured_phase() -> None:
    from benchwright.stages.plan import PRIOR_PHASE_SLACK, START_MARGIN_S, fanout_start_at

    spec = parse_spec(FANOUT)
    start_at = fanout_start_at(spec, now=1000.0)
    # the Fargate start-up margin plus the load phase (1000 records at 100/s), stretched
    assert start_at == 1000.0 + START_MARGIN_S["fargate"] + 10.0 * PRIOR_PHASE_SLACK
    plans = [build_plan(spec, "r", "c", {}, runner_index=i, start_at=start_at) for i in range(3)]
    assert [p.runner_count for p in plans] == [3, 3, 3]
    assert [ph.measured for ph in plans[0].phases] == [False, True]
    # the measured phase alone carries the instant, in every runner's plan
    assert [[ph.start_at for ph in p.phases] for p in plans] == [[None, start_at]] * 3
    assert RunnerPlan.model_validate_json(plans[0].model_dump_json()) == plans[0]


def test_a_single_runner_gets_no_start_instant() -> None:
    assert fanout_start_at_of(SPEC) is None
    assert fanout_start_at_of({**FANOUT, "runner": {"platform": "fargate", "count": 1}}) is None


def fanout_start_at_of(data: dict[str, Any]) -> float | None:
    from benchwright.stages.plan import fanout_start_at

    return fanout_start_at(parse_spec({**data, "matrix": {}}), now=0.0)


def test_launch_stage_gives_every_runner_the_same_start_at(world: dict[str, Any]) -> None:
    import time

    spec = parse_spec(FANOUT)
    providers = world["factory"](world["out"], spec)
    state = RunState(run_id="r", spec_name="fan", spec=spec, target={"id": "db-1"})
    before = time.time()
    steps.launch_runner(state, providers)
    plans = world["launcher"].plans
    assert len(plans) == 3
    instants = {p.phases[-1].start_at for p in plans}
    assert len(instants) == 1
    (instant,) = instants
    assert instant is not None and instant > before


def test_the_plan_gives_start_at_to_the_measured_phase_only_and_the_runner_flags_a_late_start() -> None:
    from datetime import UTC, datetime

    from benchwright.runner.main import flag_late_start

    spec = parse_spec(FANOUT)
    plan = build_plan(spec, "r", "c", {}, runner_index=1, start_at=2000.0)
    load, run = plan.phases
    assert (load.start_at, run.start_at) == (None, 2000.0)
    assert [ph.start_at for ph in build_plan(spec, "r", "c", {}, runner_index=1).phases] == [None, None]

    on_time = make_document([1000.0] * 3, engine="postgres", phase="run")
    on_time.started_at = datetime.fromtimestamp(2000.0, UTC)
    flag_late_start(plan, run, on_time)
    assert "late_start" not in {f.code for f in on_time.validity}

    late = make_document([1000.0] * 3, engine="postgres", phase="run")
    late.started_at = datetime.fromtimestamp(2007.5, UTC)
    flag_late_start(plan, run, late)
    flag = next(f for f in late.validity if f.code == "late_start")
    assert flag.severity == "warning" and "7.5 s" in flag.message and "runner 1 of 3" in flag.message


# ---------------------------------------------------------------- judge: CloudWatch credit regimes
def _series(name: str, values: list[float], source: str) -> MetricSeries:
    return MetricSeries(
        name=name,
        unit="Percent",
        source=source,
        points=[MetricPoint(t=60.0 * i, value=v) for i, v in enumerate(values)],
    )


RDS_SOURCE = "cloudwatch:AWS/RDS:DBInstanceIdentifier=bw-1"


def judged(
    tmp_path: Path, series: list[MetricSeries], window_s: float, forecast: dict[str, Any] | None = None
) -> tuple[RunState, Any]:
    """Run the judge stage over one measured document and ``series``; returns the state and cell."""
    from datetime import timedelta

    from benchwright.report.sample import EPOCH
    from benchwright.runs import CellResult

    artifacts = DirectoryArtifacts(tmp_path)
    doc = make_document([1000.0] * 12, engine="postgres", phase="run", started_at=EPOCH)
    docs = artifacts.put_json("c/docs.json", [json.loads(doc.model_dump_json())])
    metrics = artifacts.put_json("c/metrics.json", [json.loads(s.model_dump_json()) for s in series])
    state = RunState(
        run_id="r",
        spec_name="s",
        spec={**SPEC, "validity": {}},
        result_pointers=[docs],
        metrics_pointer=metrics,
        window=MetricsWindow(start=EPOCH, end=EPOCH + timedelta(seconds=window_s)),
        credits_forecast=forecast,
    )
    providers = Providers(
        target=fake_target,
        launcher=FakeLauncher(),
        metrics=FakeMetrics(),
        store=MemoryStore(),
        notifier=RecordingNotifier(),
        prices=FreePriceBook(),
        artifacts=artifacts,
    )
    after = steps.judge_results(state, providers)
    cell = CellResult.model_validate(artifacts.get_json(after.result_pointers[-1]))
    return after, cell


def test_judge_labels_cloudwatch_credit_regimes_on_the_cell(tmp_path: Path) -> None:
    series = [
        _series("BurstBalance", [100, 60, 30, 0], RDS_SOURCE),  # drained to zero mid-run: experiment 3
        _series("CPUCreditBalance", [500, 500, 499], RDS_SOURCE),
        _series("EBSIOBalance%", [100, 85, 70], "cloudwatch:AWS/EC2:InstanceId=i-runner"),
        _series("CPUUtilization", [40, 45, 50], RDS_SOURCE),  # not a balance: no regime
    ]
    state, cell = judged(tmp_path, series, window_s=600)
    flags = {(f.code, f.severity): f.message for f in cell.validity}
    assert "BurstBalance" in flags[("credits_exhausted", "invalid")]
    assert "CPUCreditBalance" in flags[("credits_full", "info")]
    assert "i-runner" in flags[("credits_draining", "warning")]
    assert not any("CPUUtilization" in f.message for f in cell.validity)
    assert not any(m.startswith("the measured window is") for m in flags.values())  # 600 s is long enough
    assert state.valid is False  # an exhausted balance invalidates the cell


def test_judge_stores_the_cells_forecast_and_flags_a_drain_it_did_not_predict(tmp_path: Path) -> None:
    """The forecast made before the run (RunState.credits_forecast) lands in the measured document,
    where every later judgement reads it; the observed BurstBalance is held against it."""
    forecast = {"BurstBalance": {"regime": "full", "start_pct": 100.0, "end_pct": 96.0, "assumed": False}}
    _, cell = judged(tmp_path, [_series("BurstBalance", [100, 60, 30, 0], RDS_SOURCE)], 600, forecast)
    assert cell.measured.extra["credits_forecast"] == forecast
    (flag,) = [f for f in cell.validity if f.code == "credits_prediction_mismatch"]
    assert (
        flag.severity == "warning"
        and "predicted full" in flag.message
        and "observed exhausted" in flag.message
    )
    _, as_predicted = judged(tmp_path, [_series("BurstBalance", [100, 99, 97], RDS_SOURCE)], 600, forecast)
    assert not [f for f in as_predicted.validity if f.code == "credits_prediction_mismatch"]


def test_judge_warns_when_the_window_is_too_short_for_60_second_data(tmp_path: Path) -> None:
    state, cell = judged(tmp_path, [_series("BurstBalance", [100, 100], RDS_SOURCE)], window_s=90)
    codes = {f.code: f.severity for f in cell.validity}
    assert codes["too_short_for_cloud_metrics"] == "warning"
    short = [f for f in cell.validity if f.code.startswith("too_short_for_")]
    assert len(short) == 1  # one flag for one reason (not a second one at 180 s)
    assert [f.code for f in cell.measured.validity if f.code.startswith("too_short_for_")] == [
        "too_short_for_cloud_metrics"  # the phase's own judgement flagged it: the stage adds nothing
    ]
    assert codes["credits_full"] == "info"
    assert state.valid is True


def test_judge_gives_host_balances_the_same_judgement_but_no_cloudwatch_window_warning(
    tmp_path: Path,
) -> None:
    """One credit judgement (judge/credits.py) whatever the source; the 60-second-data warning is
    about CloudWatch series only."""
    _, cell = judged(tmp_path, [_series("BurstBalance", [100, 0], "proc:host")], window_s=12)
    codes = {f.code: f.severity for f in cell.validity}
    assert codes["credits_exhausted"] == "invalid"
    assert "too_short_for_cloud_metrics" not in codes


def test_fanout_ycsb_load_splits_the_key_range_between_runners() -> None:
    spec = parse_spec({**FANOUT, "workload": {**FANOUT["workload"], "properties": {"recordcount": 1000}}})
    slices = []
    for i in range(3):
        load = build_plan(spec, "r", "c", {}, runner_index=i).phases[0]
        assert load.phase == "load"
        slices.append((int(load.properties["insertstart"]), int(load.properties["insertcount"])))
    assert slices == [(0, 334), (334, 333), (667, 333)]  # contiguous, disjoint, covering 0..999
    single = parse_spec({**FANOUT, "runner": {"platform": "fargate", "count": 1}})
    assert "insertstart" not in build_plan(single, "r", "c", {}).phases[0].properties


def test_the_local_orchestrator_hands_every_stage_the_cells_own_spec_model(world: dict[str, Any]) -> None:
    """Typed once: the spec is parsed before the run and each stage reads the cell's model; no stage
    builds a target model of its own from a dict (which gave a new object per stage before)."""
    seen: list[TargetSpec] = []

    def factory(out: Path, spec: Any) -> Providers:
        providers: Providers = world["factory"](out, spec)

        def recording(target: TargetSpec, run_id: str, handle: Mapping[str, str] | None = None) -> Target:
            seen.append(target)
            return fake_target(target, run_id, handle)

        providers.target = recording
        return providers

    outcome = run_spec(parse_spec(SPEC), world["out"], factory, quiet())

    assert outcome.record.status == "succeeded"
    assert len(seen) == 7  # provision, check, teardown (the group); launch, collect (each cell)
    assert len({id(t) for t in seen}) == 2  # one model per matrix cell, whatever the stage
