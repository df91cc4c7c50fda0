"""`benchwright run` and `compare` exit codes (benchwright.outcome): an invalid run exits 4 unless the
spec (validity.fail_on_invalid: false) or --allow-invalid relaxes it; --fail-on regression that cannot
get a verdict exits 5 and says how many earlier runs it needs and has."""

from __future__ import annotations

import argparse
from datetime import timedelta
from pathlib import Path

import pytest
from rich.console import Console

from benchwright.cli import main
from benchwright.commands.run import _exit_code
from benchwright.judge import compare_with_history, judge_run
from benchwright.judge.compare import history_need
from benchwright.providers.local.sqlite_store import SQLiteResultStore
from benchwright.report.sample import EPOCH, make_run, noisy_series
from benchwright.results import ValidityFlag
from benchwright.runs import RunRecord
from benchwright.spec import BenchmarkSpec

SPEC = {
    "name": "nightly",
    "target": {"provider": "local", "engine": "redis"},
    "workload": {"name": "ycsb", "files": ["workloada"]},
}


def args(*fail_on: str, allow_invalid: bool = False) -> argparse.Namespace:
    return argparse.Namespace(fail_on=list(fail_on) or None, allow_invalid=allow_invalid)


def run(
    run_id: str, day: int, status: str = "succeeded", level: float = 2000.0, **validity: object
) -> RunRecord:
    record = make_run("nightly", run_id, [("c", {}, noisy_series(level, 60, seed=day))],
                      started_at=EPOCH + timedelta(days=day), status=status, with_metrics=False)  # fmt: skip
    spec = BenchmarkSpec.model_validate({**SPEC, **({"validity": validity} if validity else {})})
    record.spec = spec.model_dump(mode="json")
    return record


def invalid(record: RunRecord) -> RunRecord:
    record.cells[0].phases["run"].validity.append(
        ValidityFlag(code="error_rate", severity="invalid", message="9 of 10 operations failed")
    )
    record.status = "invalid"
    return record


def code(record: RunRecord, namespace: argparse.Namespace, store: object = None) -> tuple[int, str]:
    console = Console(record=True, width=200)
    return _exit_code(record, namespace, console, store), console.export_text()


def test_a_valid_run_exits_0_and_a_failed_one_1() -> None:
    assert code(run("ok", 0), args())[0] == 0
    assert code(run("bad", 0, status="failed"), args())[0] == 1
    assert code(run("stopped", 0, status="aborted"), args())[0] == 1


def test_an_invalid_run_exits_4_and_says_so() -> None:
    exit_code, out = code(invalid(run("inv", 0)), args())
    assert exit_code == 4 and "nightly ended invalid: 1 of 1 cell" in out


def test_an_older_record_stored_succeeded_with_an_invalid_cell_still_exits_4() -> None:
    record = invalid(run("old", 0))
    record.status = "succeeded"
    assert code(record, args())[0] == 4


def test_allow_invalid_and_the_spec_field_relax_it_to_0() -> None:
    assert code(invalid(run("inv", 0)), args(allow_invalid=True))[0] == 0
    assert code(invalid(run("inv", 0, fail_on_invalid=False)), args())[0] == 0
    # --fail-on invalid names it: 3, as it always was, also with --allow-invalid
    assert code(invalid(run("inv", 0)), args("invalid", allow_invalid=True))[0] == 3


def test_the_spec_field_is_checked_like_every_other(tmp_path: Path) -> None:
    from pydantic import ValidationError

    with pytest.raises(ValidationError, match="fail_on_invalid"):
        BenchmarkSpec.model_validate({**SPEC, "validity": {"fail_on_invalid": "sometimes"}})
    with pytest.raises(ValidationError, match="fail_on_invalids"):
        BenchmarkSpec.model_validate({**SPEC, "validity": {"fail_on_invalids": False}})


def test_fail_on_regression_without_a_verdict_exits_5_and_says_what_it_needs(tmp_path: Path) -> None:
    with SQLiteResultStore(tmp_path / "r.sqlite") as store:
        first = run("n-0", 0)
        first.verdict = compare_with_history(first, [])
        store.save_run(first)
        second = run("n-1", 1, level=1000.0)  # -50 %, but one earlier run gives no interval
        second.verdict = compare_with_history(second, store.history("nightly"))
        store.save_run(second)
        assert second.verdict.kind == "no_verdict"
        exit_code, out = code(second, args("regression"), store)
        assert exit_code == 5
        assert "needs 3 earlier valid run(s) of 'nightly' with cell 'c' and has 1" in out
        assert code(second, args(), store)[0] == 0  # without --fail-on the run itself is fine


def test_with_enough_history_the_gate_fires_on_a_drop(tmp_path: Path) -> None:
    with SQLiteResultStore(tmp_path / "r.sqlite") as store:
        for day in range(3):
            store.save_run(run(f"n-{day}", day))
        dropped = run("n-3", 3, level=1000.0)
        dropped.verdict = compare_with_history(dropped, store.history("nightly"))
        assert history_need(dropped, store.history("nightly")) is None
        assert code(dropped, args("regression"), store)[0] == 3


def test_an_invalid_earlier_cell_does_not_count_as_history() -> None:
    earlier = [invalid(run(f"n-{d}", d)) for d in range(3)]
    need = history_need(run("n-9", 9), earlier)
    assert need is not None and (need.needed, need.have) == (3, 0)


def test_compare_fail_on_regression_without_a_verdict_exits_5(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "r.sqlite"
    with SQLiteResultStore(path) as store:
        for day, level in ((0, 2000.0), (1, 1000.0)):
            store.save_run(judge_run(run(f"n-{day}", day, level=level)))
    assert main(["compare", "n-0", "n-1", "--fail-on", "regression", "--store", str(path)]) == 5
    out = capsys.readouterr().out
    assert "no verdict is possible" in out and "cell 'c' has 1 result(s) in A and 1 in B" in out
    assert main(["compare", "n-0", "n-1", "--store", str(path)]) == 0
