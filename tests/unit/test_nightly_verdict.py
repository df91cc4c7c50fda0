"""Issue 26: `compare`, `--fail-on` and FinishRun give one verdict across nights (judge/nightly.py):
a level shift is alarmed on its night and not the next, a context change cuts the series, an invalid
night is never a baseline, and the Lambda's path without ruptures finds the same change points."""

from __future__ import annotations

import argparse
import random
import re
import sys
from datetime import timedelta
from pathlib import Path

import pytest
from rich.console import Console

from benchwright.cli import main
from benchwright.commands.run import _exit_code
from benchwright.judge import judge_run
from benchwright.judge.nightly import nightly_verdict, verdict_over
from benchwright.providers.local.sqlite_store import SQLiteResultStore
from benchwright.report.sample import EPOCH, make_run, noisy_series, step_series
from benchwright.results import Fingerprint
from benchwright.runs import RunRecord
from benchwright.site.binseg import _ruptures_binseg, plain_binseg
from benchwright.stages.finish import finish_run
from tests.unit.test_finish import MemoryStore, Recording, providers, state_of

# eight nights at ~2,000 ops/s, then a lasting 20 % drop from night 8 on
LEVELS = [2000, 2010, 1990, 2005, 1995, 2000, 2008, 1992, 1600, 1605, 1598]
SHIFT = 8


def fingerprint(engine: str) -> Fingerprint:
    return Fingerprint.model_validate({
        "runner_class": "measured", "runner_platform": "ec2", "instance_type": "c6i.2xlarge", "cpu_count": 8,
        "engine_version": engine, "target_class": "db.r6g.large", "spec_digest": "0123456789ab",
    })  # fmt: skip


def night(
    i: int, level: float, repeats: int = 1, engine: str | None = None, broken: bool = False
) -> RunRecord:
    series = step_series(level, level / 4, at=20, seconds=60) if broken else noisy_series(level, 60, seed=i)
    record = make_run("nightly", f"night-{i:02d}", [("c", {}, series)], repeats=repeats,
                      started_at=EPOCH + timedelta(days=i), seed=i, with_metrics=False)  # fmt: skip
    if engine is not None:
        for cell in record.cells:
            for doc in cell.phases.values():
                doc.fingerprint = fingerprint(engine)
    return judge_run(record)


def day(i: int) -> str:
    return f"{EPOCH + timedelta(days=i):%Y-%m-%d}"


def test_finish_run_alarms_a_level_shift_on_its_night_and_says_still_after(tmp_path: Path) -> None:
    store = MemoryStore()
    for i, level in enumerate(LEVELS):
        record = night(i, level)
        record.status = "running"
        store.save_run(record)
        finish_run(state_of(record), providers(tmp_path, store, Recording()))
    verdicts = [store.get_run(f"night-{i:02d}").verdict for i in range(len(LEVELS))]  # type: ignore[union-attr]
    kinds = [v.kind for v in verdicts if v is not None]
    # first night; 1-2 earlier nights and one repeat: no noise floor; steady; the drop once; still
    assert kinds == [
        "no_history",
        "no_verdict",
        "no_verdict",
        *["no_change"] * 5,
        "slower",
        "no_change",
        "no_change",
    ]
    alarm = verdicts[SHIFT]
    assert alarm is not None and alarm.effect is not None and 0.78 < alarm.effect < 0.82
    assert (
        alarm.ci_low is not None and alarm.ci_high is not None and alarm.ci_low < alarm.effect < alarm.ci_high
    )
    assert re.search(rf"(19|20|21)% slower since {day(SHIFT)}, 95% interval -2\d% to -1\d%", alarm.message)
    for later in verdicts[SHIFT + 1 :]:
        assert later is not None and re.search(
            rf"still at the level of {day(SHIFT)} \((19|20|21)% slower\)", later.message
        )

    # `benchwright run --fail-on regression` reads that verdict: 3 on the shift's night, 0 after
    args = argparse.Namespace(fail_on=["regression"], allow_invalid=False)
    codes = [_exit_code(store.get_run(f"night-{i:02d}"), args, Console(file=None, quiet=True), store)
             for i in (SHIFT - 1, SHIFT, SHIFT + 1)]  # type: ignore[arg-type]  # fmt: skip
    assert codes == [0, 3, 0]


def test_compare_and_fail_on_judge_b_across_the_nights_from_a(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "results.sqlite"
    records = [night(i, level) for i, level in enumerate(LEVELS)]
    with SQLiteResultStore(path) as store:
        for record in records:
            store.save_run(record)
    args = ["--store", str(path), "--fail-on", "regression"]
    assert main(["compare", "night-00", f"night-{SHIFT:02d}", *args]) == 3
    assert re.search(rf"(19|20|21)% slower since {day(SHIFT)}", capsys.readouterr().out)
    assert main(["compare", "night-00", f"night-{SHIFT + 1:02d}", *args]) == 0
    assert f"still at the level of {day(SHIFT)}" in capsys.readouterr().out
    # the same function FinishRun uses, over the same nights: the same verdict
    for i in (SHIFT, SHIFT + 1):
        assert verdict_over(records[i], records[:i]) == nightly_verdict(records[i], records)


def test_a_context_change_cuts_the_series() -> None:
    records = [night(i, level, repeats=3, engine="PostgreSQL 16.3" if i < SHIFT else "PostgreSQL 16.4")
               for i, level in enumerate(LEVELS)]  # fmt: skip
    verdicts = [nightly_verdict(r, records) for r in records]
    first = verdicts[SHIFT]
    assert first.kind == "no_history"  # the 20 % drop is never compared across the upgrade
    assert first.fingerprint_changes and "engine_version" in first.fingerprint_changes[0]
    assert "16.3" in first.fingerprint_changes[0] and "16.4" in first.fingerprint_changes[0]
    assert "first night on a new context" in first.message
    # the new context's next night: one earlier night there, a provisional verdict from its repeats
    assert verdicts[SHIFT + 1].kind == "no_change"
    assert "provisional: no change beyond the noise floor" in verdicts[SHIFT + 1].message
    assert verdicts[1].kind == "no_change" and "provisional" in verdicts[1].message  # repeats: a floor


def test_an_invalid_night_is_judged_unstable_and_is_never_a_baseline() -> None:
    records = [night(i, 2000 + (i % 3) * 5) for i in range(8)]
    records.append(night(8, 2000, broken=True))  # collapses to a quarter: invalid
    records.append(night(9, 2003))
    assert records[8].status == "invalid" or any(c.validity for c in records[8].cells)
    assert nightly_verdict(records[8], records).kind == "unstable"
    after = nightly_verdict(records[9], records)
    assert after.kind == "no_change" and "no change since" in after.message


def test_the_lambda_path_without_ruptures_finds_the_same_change_points(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rng = random.Random(7)
    for _ in range(30):
        n = rng.randint(6, 60)
        levels = [rng.choice([1.0, 0.8, 1.2]) for _ in range(rng.randint(1, 4))]
        signal = [levels[min(i * len(levels) // n, len(levels) - 1)] + rng.gauss(0, 0.02) for i in range(n)]
        pen = rng.choice([0.01, 0.05, 0.2])
        assert plain_binseg(signal, pen, 2) == _ruptures_binseg(signal, pen, 2)
    records = [night(i, level) for i, level in enumerate(LEVELS)]
    with_ruptures = [nightly_verdict(records[i], records) for i in (SHIFT, SHIFT + 1)]
    monkeypatch.setitem(sys.modules, "ruptures", None)  # as in the Lambda asset: import fails
    monkeypatch.setitem(sys.modules, "numpy", None)
    with pytest.raises(ImportError):
        _ruptures_binseg([1.0, 2.0], 0.1, 2)
    assert [nightly_verdict(records[i], records) for i in (SHIFT, SHIFT + 1)] == with_ruptures
    assert with_ruptures[0].kind == "slower" and "still at the level of" in with_ruptures[1].message


def test_the_site_says_what_compare_and_finish_run_say(tmp_path: Path) -> None:
    from benchwright.site.levels import analyse
    from benchwright.site.nights import benchmarks

    records = [night(i, level, repeats=3, engine="PostgreSQL 16.3" if i < SHIFT + 2 else "PostgreSQL 16.4")
               for i, level in enumerate(LEVELS)]  # fmt: skip
    with SQLiteResultStore(tmp_path / "results.sqlite") as store:
        for record in records:
            store.save_run(record)
        (bench,) = benchmarks(store)
    site_nights = bench.cells["c"]
    for n in range(1, len(records) + 1):
        site = analyse(site_nights[:n]).tonight.message
        line = nightly_verdict(records[n - 1], records).message.splitlines()[1]
        assert line == f"c: {site}" or line.startswith(f"c: {site} (fingerprint changed: engine_version")


def test_run_fail_on_regression_cannot_judge_the_first_night_on_a_new_context(
    capsys: pytest.CaptureFixture[str],
) -> None:
    records = [night(i, 2000, engine="PostgreSQL 16.3" if i < 4 else "PostgreSQL 16.4") for i in range(5)]
    store = MemoryStore()
    for record in records:
        record.verdict = nightly_verdict(record, records)
        store.save_run(record)
    args = argparse.Namespace(fail_on=["regression"], allow_invalid=False)
    assert _exit_code(records[-1], args, Console(width=200), store) == 5
    out = capsys.readouterr().out
    assert "cannot judge night-04" in out and "first night on a new context" in out and "16.4" in out
