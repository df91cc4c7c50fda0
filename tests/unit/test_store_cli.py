"""`benchwright history | show | compare | report` against a store of synthetic runs."""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path

import pytest

from benchwright.cli import main
from benchwright.judge import compare_with_history, judge_run
from benchwright.providers.local.sqlite_store import SQLiteResultStore
from benchwright.report.sample import EPOCH, make_run, noisy_series


@pytest.fixture
def store_path(tmp_path: Path) -> Path:
    """Five nightly runs at ~2,000 ops/s, then one at ~1,500 (a regression); three repeats each."""
    path = tmp_path / "results.sqlite"
    with SQLiteResultStore(path) as store:
        for i, level in enumerate([2000, 2010, 1990, 2005, 1995, 1500]):
            run = judge_run(make_run("nightly", f"night-{i}", [("clients=8", {"clients": 8}, noisy_series(level, 60, seed=i))],
                                     started_at=EPOCH + timedelta(days=i), seed=i, repeats=3))  # fmt: skip
            run.verdict = compare_with_history(run, store.history("nightly"))
            store.save_run(run)
    return path


def test_history_lists_runs_newest_first_with_verdicts(
    store_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["history", "nightly", "--store", str(store_path)]) == 0
    out = capsys.readouterr().out
    assert out.index("night-5") < out.index("night-0")
    assert "slower" in out and "no history" in out
    assert re.search(r"1,[45]\d\d \|", out)  # the regressed run's throughput


def test_show_prints_the_summary_and_json(store_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["show", "night-5", "--store", str(store_path)]) == 0
    out = capsys.readouterr().out
    assert "clients=8" in out and "SLOWER" in out
    assert main(["show", "night-5", "--json", "--store", str(store_path)]) == 0
    assert '"run_id": "night-5"' in capsys.readouterr().out


def test_compare_gives_a_verdict_and_can_fail_ci(
    store_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["--store", str(store_path)]
    assert main(["compare", "night-0", "night-1", *args]) == 0
    assert "NO CHANGE" in capsys.readouterr().out
    assert main(["compare", "night-0", "night-5", "--fail-on", "slower", *args]) == 3
    out = capsys.readouterr().out
    assert "SLOWER" in out  # across the nights from A to B: the step on its night, with its interval
    assert re.search(r"2\d% slower since \d{4}-\d\d-\d\d, 95% interval -\d+% to -\d+%", out)
    assert main(["compare", "night-0", "night-5", "--fail-on", "regression", *args]) == 3
    out = capsys.readouterr().out
    for heading in ("operation", "A", "B", "change", "95% interval"):
        assert heading in out
    assert "READ" in out and "UPDATE" in out and "ALL" in out
    assert re.search(r"-2\d\.\d %", out)  # 2,000 -> 1,500 ops/s: the change next to both numbers
    assert main(["compare", "night-0", "night-5", "--fail-on", "invalid", *args]) == 0


def test_compare_fails_on_an_invalid_candidate(store_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from benchwright.report.sample import step_series

    with SQLiteResultStore(store_path) as store:
        broken = make_run(
            "nightly", "broken", [("clients=8", {"clients": 8}, step_series(2000, 500, at=20, seconds=60))]
        )
        store.save_run(judge_run(broken))
    assert main(["compare", "night-0", "broken", "--fail-on", "invalid", "--store", str(store_path)]) == 3
    assert "B has invalid results: clients=8" in capsys.readouterr().out


def test_compare_accepts_result_json_files(
    store_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with SQLiteResultStore(store_path) as store:
        for name in ("night-1", "night-5"):
            store.get_run(name).cells[0].phases["run"].write(tmp_path / f"{name}.json")  # type: ignore[union-attr]
    assert main(["compare", str(tmp_path / "night-1.json"), str(tmp_path / "night-5.json")]) == 0
    out = capsys.readouterr().out
    # one document each: one earlier night and no repeats give no noise floor (noise within a run is
    # not between runs)
    assert "NO VERDICT" in out and "no repeats to give a noise floor" in out
    assert re.search(r"-2\d\.\d %", out)  # but the numbers and their change are shown


def test_report_writes_html_with_history(
    store_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "r.html"
    assert main(["report", "night-5", "--out", str(out), "--store", str(store_path)]) == 0
    html = out.read_text()
    assert "throughput across runs of this spec" in html and "night-5" in html
    assert main(["report", "--demo", "--out", str(tmp_path / "demo.html")]) == 0


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["history", "nope"], "no runs of spec 'nope' (specs with runs: nightly)"),
        (["show", "zzz"], "no run 'zzz'"),
        (["show", "night-"], "matches several runs"),
        (["compare", "night-0", "night-1", "--min-effect", "5"], "--min-effect: must be between 0 and 1"),
        (["compare", "night-0", "night-1", "--metric", "p42"], "--metric: unknown metric 'p42'"),
    ],
    ids=["unknown-spec", "unknown-run", "ambiguous-prefix", "bad-min-effect", "bad-metric"],
)
def test_bad_input_gives_one_clear_line(
    store_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    assert main([*argv, "--store", str(store_path)]) != 0
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_a_missing_store_is_named_not_created(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "nowhere.sqlite"
    assert main(["history", "x", "--store", str(missing)]) == 1
    assert "nowhere.sqlite: no result store here" in capsys.readouterr().err
    assert not missing.exists()


@pytest.mark.parametrize(
    ("ref", "run_id"), [("nightly", "night-5"), ("nightly~0", "night-5"), ("nightly~2", "night-3")]
)
def test_a_spec_name_stands_for_its_newest_run_and_tilde_counts_back(
    store_path: Path, capsys: pytest.CaptureFixture[str], ref: str, run_id: str
) -> None:
    assert main(["show", ref, "--json", "--store", str(store_path)]) == 0
    assert f'"run_id": "{run_id}"' in capsys.readouterr().out


def test_table_report_and_compare_take_spec_names(
    store_path: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    assert main(["table", "night-5", "--format", "json", "--store", str(store_path)]) == 0
    newest = capsys.readouterr().out
    assert main(["table", "nightly", "--format", "json", "--store", str(store_path)]) == 0
    assert capsys.readouterr().out == newest
    assert main(["table", "nightly~5", "--format", "json", "--store", str(store_path)]) == 0
    assert capsys.readouterr().out != newest
    assert main(["compare", "nightly~1", "nightly", "--fail-on", "slower", "--store", str(store_path)]) == 3
    assert "SLOWER" in capsys.readouterr().out  # night-4 -> night-5, the regression
    out = tmp_path / "r.html"
    assert main(["report", "nightly", "--out", str(out), "--store", str(store_path)]) == 0
    assert "night-5" in out.read_text()


def test_counting_back_past_the_first_run_says_how_many_there_are(
    store_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["show", "nightly~6", "--store", str(store_path)]) == 1
    assert "nightly~6: spec 'nightly' has 6 run(s)" in capsys.readouterr().err
