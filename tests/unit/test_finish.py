"""The finish stage (benchwright.stages.finish): final status, verdict against history, the report, and
the notification rules, with a directory artifact store and an in-memory record store."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from benchwright.errors import NotifyFailed
from benchwright.providers.base import Notifier, Providers, ResultStore
from benchwright.providers.local import DirectoryArtifacts, FreePriceBook, local_target
from benchwright.report.sample import EPOCH, make_run, noisy_series
from benchwright.runs import RunRecord, Verdict
from benchwright.stages import RunState
from benchwright.stages.finish import error_text, finish_run, should_notify


class MemoryStore(ResultStore):
    def __init__(self) -> None:
        self.runs: dict[str, str] = {}
        self.saves = 0

    def save_run(self, record: RunRecord) -> None:
        self.saves += 1
        self.runs[record.run_id] = record.model_dump_json()

    def get_run(self, run_id: str) -> RunRecord | None:
        raw = self.runs.get(run_id)
        return RunRecord.model_validate_json(raw) if raw else None

    def history(self, spec_name: str, limit: int = 20) -> list[RunRecord]:
        found = [RunRecord.model_validate_json(r) for r in self.runs.values()]
        return sorted(
            (r for r in found if r.spec_name == spec_name), key=lambda r: r.started_at, reverse=True
        )[:limit]


class Recording(Notifier):
    def __init__(self, fail: bool = False) -> None:
        self.sent: list[tuple[RunRecord, str | None]] = []
        self.fail = fail

    def notify(self, record: RunRecord, report_url: str | None = None) -> bool:
        if self.fail:
            raise NotifyFailed("slack: webhook answered HTTP 500 (rollup_error)")
        self.sent.append((record, report_url))
        return True


def providers(tmp_path: Path, store: MemoryStore, notifier: Notifier) -> Providers:
    from benchwright.providers.local.hostmetrics import ProcMetricsSource
    from benchwright.providers.local.runner import SubprocessLauncher

    return Providers(
        target=local_target,
        launcher=SubprocessLauncher(tmp_path),
        metrics=ProcMetricsSource(1.0),
        store=store,
        notifier=notifier,
        prices=FreePriceBook(),
        artifacts=DirectoryArtifacts(tmp_path),
    )


def stored_run(
    store: MemoryStore, run_id: str, level: float, hours: int, status: str = "running"
) -> RunRecord:
    """A run of spec ``nightly`` with one cell at ``level`` ops/s, started ``hours`` after EPOCH."""
    record = make_run(
        "nightly",
        run_id,
        [("default", {}, noisy_series(level, 60, seed=hours))],
        started_at=EPOCH + timedelta(hours=hours),
        status=status,
        with_metrics=False,
    )
    store.save_run(record)
    return record


def nightly(**sections: Any) -> dict[str, Any]:
    """A valid spec named ``nightly`` (a local Redis, YCSB) with ``sections`` written over it."""
    return {
        "name": "nightly",
        "target": {"provider": "local", "engine": "redis"},
        "workload": {"name": "ycsb", "files": ["workloada"]},
        **sections,
    }


def state_of(record: RunRecord, **changes: Any) -> RunState:
    spec = nightly(**{"notify": {"on": "always"}, **changes.pop("spec", {})})
    return RunState(
        run_id=record.run_id,
        spec_name=record.spec_name,
        spec=spec,
        status="running",
        created_at=record.started_at,
        **changes,
    )


def test_a_finished_run_gets_status_verdict_report_and_one_message(tmp_path: Path) -> None:
    store, notifier = MemoryStore(), Recording()
    for i in range(4):
        stored_run(store, f"old-{i}", 1000.0, hours=i, status="succeeded")
    new = stored_run(store, "new", 700.0, hours=10)

    after = finish_run(state_of(new), providers(tmp_path, store, notifier))

    record = store.get_run("new")
    assert record is not None and after.status == record.status == "succeeded"
    assert record.ended_at is not None and record.error is None
    assert record.verdict is not None and record.verdict.kind == "slower"  # 30 % below four earlier runs
    assert record.report == str(tmp_path / "report.html") and "nightly" in Path(record.report).read_text()
    assert [(r.run_id, link) for r, link in notifier.sent] == [("new", record.report)]
    assert notifier.sent[0][0].status == "succeeded"  # never ":hourglass: running"
    assert record.environment["notification"] == after.notification == "sent"
    assert after.warnings == []


def test_no_history_is_said_as_such(tmp_path: Path) -> None:
    store = MemoryStore()
    new = stored_run(store, "first", 1000.0, hours=0)
    finish_run(state_of(new), providers(tmp_path, store, Recording()))
    verdict = store.get_run("first").verdict  # type: ignore[union-attr]
    assert verdict is not None and verdict.kind == "no_history"


def test_a_failed_run_keeps_its_error_and_is_announced(tmp_path: Path) -> None:
    store, notifier = MemoryStore(), Recording()
    state = RunState(
        run_id="broke",
        spec_name="nightly",
        spec=nightly(notify={"on": "failure"}),
        status="failed",
        error="task exited 137",
        error_type="RunnerFailed",
    )

    after = finish_run(state, providers(tmp_path, store, notifier))

    record = store.get_run("broke")  # nothing was stored before: the finish creates the record
    assert record is not None and after.status == record.status == "failed"
    assert record.error == "RunnerFailed: task exited 137"
    assert record.verdict is None  # nothing measured, nothing to compare
    assert len(notifier.sent) == 1


@pytest.mark.parametrize(
    ("on", "status", "verdict", "sent"),
    [
        ("always", "succeeded", None, True),
        ("always", "failed", None, True),
        ("success", "succeeded", None, True),
        ("success", "aborted", None, False),
        ("failure", "succeeded", "slower", False),
        ("failure", "failed", None, True),
        ("failure", "aborted", None, True),
        ("regression", "succeeded", "no_change", False),
        ("regression", "succeeded", "slower", True),
        ("regression", "succeeded", "faster", False),
        ("regression", "failed", None, True),
    ],
)
def test_notify_on_rules(on: str, status: str, verdict: str | None, sent: bool) -> None:
    record = RunRecord(run_id="r", spec_name="s", started_at=EPOCH, status=status)  # type: ignore[arg-type]
    if verdict:
        record.verdict = Verdict(kind=verdict, metric="throughput", min_effect=0.05, message="")  # type: ignore[arg-type]
    assert should_notify(on, record) is sent


def test_notify_on_failure_skips_a_successful_run_and_says_so(tmp_path: Path) -> None:
    store, notifier = MemoryStore(), Recording()
    new = stored_run(store, "quiet", 1000.0, hours=0)

    after = finish_run(
        state_of(new, spec={"notify": {"on": "failure"}}), providers(tmp_path, store, notifier)
    )

    assert notifier.sent == []
    assert after.notification == "skipped (notify.on: failure)"
    assert store.get_run("quiet").environment["notification"] == "skipped (notify.on: failure)"  # type: ignore[union-attr]


def test_slack_down_is_a_warning_and_the_run_is_kept(tmp_path: Path) -> None:
    store = MemoryStore()
    new = stored_run(store, "kept", 1000.0, hours=0)

    after = finish_run(state_of(new), providers(tmp_path, store, Recording(fail=True)))

    record = store.get_run("kept")
    assert record is not None and record.status == after.status == "succeeded"
    assert record.cells == new.cells and record.report is not None
    assert after.warnings == [
        "notification failed: NotifyFailed: slack: webhook answered HTTP 500 (rollup_error)"
    ]
    assert record.environment["notification"].startswith("failed: NotifyFailed")


def test_a_suite_cell_is_closed_but_not_reported_or_announced(tmp_path: Path) -> None:
    store, notifier = MemoryStore(), Recording()
    cell = stored_run(store, "suite-1-000", 1000.0, hours=0)

    after = finish_run(state_of(cell, suite_run_id="suite-1"), providers(tmp_path, store, notifier))

    record = store.get_run("suite-1-000")
    assert record is not None and record.status == after.status == "succeeded"
    assert record.suite_run_id == "suite-1" and record.report is None and record.verdict is None
    assert notifier.sent == [] and not (tmp_path / "report.html").exists()


def test_error_text_does_not_repeat_the_type() -> None:
    base = RunState(run_id="r", spec_name="s", spec=nightly())
    assert error_text(base) is None
    assert (
        error_text(base.model_copy(update={"error": "x", "error_type": "RunnerFailed"})) == "RunnerFailed: x"
    )
    assert error_text(base.model_copy(update={"error": "RunnerFailed: x", "error_type": "RunnerFailed"})) == (
        "RunnerFailed: x"
    )
    assert error_text(base.model_copy(update={"error": "interrupted (Ctrl-C)"})) == "interrupted (Ctrl-C)"


def test_a_run_finished_without_a_spec_follows_its_stored_records_spec(tmp_path: Path) -> None:
    """An execution aborted before its spec could be read (functions/abort_teardown.py): the finish
    state has none, and notify.on comes from the spec the run's record holds."""
    from benchwright.stages import FinishState

    store, notifier = MemoryStore(), Recording()
    record = stored_run(store, "cut", 1000.0, hours=0)
    record.spec = nightly(notify={"on": "success"})
    store.save_run(record)
    state = FinishState(run_id="cut", spec_name="nightly", status="aborted", error="execution aborted")

    after = finish_run(state, providers(tmp_path, store, notifier))

    assert isinstance(after, FinishState) and after.status == "aborted"
    assert after.notification == "skipped (notify.on: success)" and notifier.sent == []
    assert store.get_run("cut").status == "aborted"  # type: ignore[union-attr]


def test_a_run_with_no_spec_and_no_record_is_recorded_and_announced(tmp_path: Path) -> None:
    from benchwright.stages import FinishState

    store, notifier = MemoryStore(), Recording()
    state = FinishState(run_id="gone", spec_name="run", status="aborted", error="execution timed out")

    after = finish_run(state, providers(tmp_path, store, notifier))

    record = store.get_run("gone")
    assert record is not None and record.status == after.status == "aborted"
    assert record.spec == {} and record.error == "execution timed out"
    assert after.notification == "sent" and len(notifier.sent) == 1  # the default: notify.on always
