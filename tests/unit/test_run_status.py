"""A run's status (benchwright.outcome): an invalid cell makes the run ``invalid``, never ``succeeded``,
with the count and the reasons; ``failed`` and ``aborted`` come first; every output shows it."""

from __future__ import annotations

from pathlib import Path

from benchwright.judge.compare import compare_with_history
from benchwright.outcome import (
    invalid_cells,
    invalid_headline,
    invalid_summary,
    judge_status,
    shown_status,
)
from benchwright.report.html import render_html
from benchwright.report.sample import make_run, noisy_series
from benchwright.report.text import render_summary
from benchwright.results import ValidityFlag, failed_name
from benchwright.runs import RunRecord
from benchwright.stages.finish import finish_run, should_notify
from benchwright.stages.suite import suite_state, summarize
from tests.unit.test_finish import MemoryStore, Recording, providers, state_of, stored_run

LOAD_ERRORS = "500 of 500 operations failed (100.00%, policy allows 1.00%)"
RUN_ERRORS = "46,477 of 47,032 operations failed (98.82%, policy allows 1.00%)"


def two_cells(run_id: str = "r1", status: str = "running") -> RunRecord:
    return make_run(
        "nightly",
        run_id,
        [("a", {"n": 1}, noisy_series(1000, 30)), ("b", {"n": 2}, noisy_series(1000, 30, seed=1))],
        status=status,
        with_metrics=False,
    )


def flag(record: RunRecord, cell: int, phase: str, code: str, severity: str, message: str) -> None:
    record.cells[cell].phases[phase].validity.append(
        ValidityFlag(code=code, severity=severity, message=message)  # type: ignore[arg-type]
    )


def test_a_run_whose_cells_all_pass_succeeds_and_warnings_do_not_change_that() -> None:
    record = two_cells()
    flag(record, 0, "run", "too_short", "warning", "the measured phase ran 2.0 s")
    assert invalid_cells(record) == [] and invalid_headline(record) is None
    assert judge_status("running", record) == "succeeded"


def test_an_invalid_load_or_run_phase_makes_the_run_invalid_with_count_and_reasons() -> None:
    record = two_cells()
    flag(record, 1, "load", "error_rate", "invalid", LOAD_ERRORS)
    flag(record, 1, "run", "error_rate", "invalid", RUN_ERRORS)
    assert judge_status("running", record) == "invalid"
    [cell] = invalid_cells(record)
    # both phases keep their own message: the load's does not hide the run's
    assert cell.label == "b" and cell.reasons == (
        f"load error_rate: {LOAD_ERRORS}",
        f"run error_rate: {RUN_ERRORS}",
    )
    assert invalid_headline(record) == "invalid: 1 of 2 cells"
    summary = invalid_summary(record)
    assert summary is not None and summary.startswith("invalid: 1 of 2 cells (b: load error_rate: 500 of 500")


def test_failed_and_aborted_come_before_invalid() -> None:
    record = two_cells()
    flag(record, 0, "run", "error_rate", "invalid", RUN_ERRORS)
    assert judge_status("failed", record) == "failed"
    assert judge_status("aborted", record) == "aborted"


def test_an_older_record_stored_as_succeeded_with_an_invalid_cell_is_shown_invalid() -> None:
    record = two_cells(status="succeeded")
    flag(record, 0, "run", "throughput_collapse", "invalid", "throughput collapsed at t=40 s")
    assert record.status == "succeeded" and shown_status(record) == "invalid"
    text = render_summary(record)
    assert "status: invalid  invalid: 1 of 2 cells (a: run throughput_collapse" in text
    assert "status: succeeded" not in text


def test_finish_run_ends_an_invalid_run_invalid_stores_why_and_announces_it(tmp_path: Path) -> None:
    store, notifier = MemoryStore(), Recording()
    record = two_cells("bad")
    flag(record, 1, "load", "error_rate", "invalid", LOAD_ERRORS)
    store.save_run(record)

    after = finish_run(state_of(record), providers(tmp_path, store, notifier))

    stored = store.get_run("bad")
    assert stored is not None and after.status == stored.status == "invalid"
    assert stored.error is not None and stored.error.startswith("invalid: 1 of 2 cells (b: load error_rate")
    assert [r.status for r, _ in notifier.sent] == ["invalid"]
    html = Path(stored.report or "").read_text()
    assert '<span class="badge invalid" id="status">invalid: 1 of 2 cells</span>' in html
    assert "load error_rate: " + LOAD_ERRORS.replace("%", "%") in html
    assert "badge succeeded" not in html


def test_a_run_with_every_measured_operation_failed_is_still_failed(tmp_path: Path) -> None:
    store = MemoryStore()
    record = two_cells("broken")
    for cell in record.cells:
        run = cell.phases["run"]
        run.operations = {  # every operation its own -FAILED entry: nothing succeeded
            failed_name(name): summary.model_copy(update={"statuses": {"ERROR": summary.operations}})
            for name, summary in run.operations.items()
        }
        cell.phases["run"].validity.append(ValidityFlag(code="error_rate", severity="invalid", message="all"))
    store.save_run(record)
    after = finish_run(state_of(record), providers(tmp_path, store, Recording()))
    assert after.status == "failed" and store.get_run("broken").status == "failed"  # type: ignore[union-attr]


def test_a_suite_cell_that_is_invalid_ends_invalid_for_the_suite_to_see(tmp_path: Path) -> None:
    store, notifier = MemoryStore(), Recording()
    cell = two_cells("suite-9-000")
    flag(cell, 0, "run", "error_rate", "invalid", RUN_ERRORS)
    store.save_run(cell)
    after = finish_run(state_of(cell, suite_run_id="suite-9"), providers(tmp_path, store, notifier))
    assert after.status == "invalid" and notifier.sent == []


def test_the_suite_summary_counts_an_invalid_cell_as_finished_and_the_suite_ends_invalid(
    tmp_path: Path,
) -> None:
    store, notifier = MemoryStore(), Recording()
    good, bad = two_cells("suite-7-000"), two_cells("suite-7-001")
    bad.cells = [c.model_copy(update={"cell_id": f"x{c.cell_id}"}) for c in bad.cells]
    flag(bad, 0, "run", "error_rate", "invalid", RUN_ERRORS)
    for cell in (good, bad):
        cell.suite_run_id = "suite-7"
        store.save_run(cell)
    event = {
        "run_id": "suite-7",
        "spec_name": "nightly",
        "cell_results": [
            {"run_id": "suite-7-000", "status": "succeeded"},
            {"run_id": "suite-7-001", "status": "invalid"},
        ],
    }
    state = suite_state(event)
    summary = summarize(event, state, store)
    assert summary["failed"] == 0 and summary["status"] == "invalid" and summary["error"] is None
    finished = finish_run(
        state.model_copy(update={"status": "running"}), providers(tmp_path, store, notifier)
    )
    record = store.get_run("suite-7")
    assert record is not None and finished.status == record.status == "invalid"
    assert record.error is not None and record.error.startswith("invalid: 1 of 4 cells (xa: run error_rate")
    assert [r.status for r, _ in notifier.sent] == ["invalid"]


def test_notify_on_failure_and_regression_hear_of_an_invalid_run_success_does_not() -> None:
    record = two_cells(status="invalid")
    assert should_notify("failure", record) and should_notify("regression", record)
    assert not should_notify("success", record) and should_notify("always", record)


def test_an_invalid_run_stays_in_history_for_its_valid_cells() -> None:
    """One invalid cell does not take a run's other cells out of the baseline: the judge leaves the
    invalid cell out (judge.compare), so history keeps invalid runs."""
    store = MemoryStore()
    earlier = []
    for i in range(4):
        run = stored_run(store, f"old-{i}", 1000.0, hours=i, status="invalid")
        earlier.append(run)
    new = stored_run(store, "new", 700.0, hours=10)
    verdict = compare_with_history(new, earlier)
    assert verdict.kind == "slower"


def test_the_html_validity_section_lists_every_phase_flag_grouped_by_phase() -> None:
    record = two_cells(status="invalid")
    flag(record, 0, "load", "client_saturated", "warning", "the load generator was saturated (load)")
    flag(record, 1, "load", "error_rate", "invalid", LOAD_ERRORS)
    flag(record, 1, "run", "error_rate", "invalid", RUN_ERRORS)
    html = render_html(record)
    section = html[html.index('<table id="validity">') : html.index("</table>", html.index('id="validity"'))]
    assert "no validity flags" not in html
    for text in ("client_saturated", "the load generator was saturated (load)", LOAD_ERRORS, RUN_ERRORS):
        assert text in section, text
    # grouped by phase: the load rows, then the run rows (the phase named once per group)
    assert section.index(LOAD_ERRORS) < section.index(RUN_ERRORS)
    assert section.count('<td class="l">load</td>') == 1 and section.count('<td class="l">run</td>') == 1
